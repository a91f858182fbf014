"""Policies: what acts in a session. One interface for real models (OpenAI-compatible endpoints) and for the
reference policies (oracle replay and scripted baselines that reproduce known failure modes)."""
