"""Colour Square: the roll-and-write dice game for 1-6 players (rules, sheets as data, scoring).

`RULES` is here as every game's is at `tafel_rules.<game>` (services/host/describe.py finds it so).
"""

from tafel_rules.coloursquare.rules import RULES

__all__ = ["RULES"]
