"""Colour Square: the roll-and-write dice game for 1-6 players (rules, sheets as data, scoring)."""
