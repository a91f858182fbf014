"""Evaluation of an episode: the RESPONSE axis (typed gold answers, extraction, Korean-aware matching)."""
