"""Challenges: one player asks another (or anyone) for a game; the answer starts it."""
