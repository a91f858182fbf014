"""Spec language: pydantic models of everything humans write under specs/, and their loaders."""
