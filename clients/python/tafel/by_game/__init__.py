"""The registry of the games the Python client knows: one module per game (tafel/by_game/<game>.py,
each declaring a `GameClient`), listed once here. Everything else in the SDK and the terminal asks
this registry; docs/new-game.md says what a new game adds.

A game the server offers and this client lacks still works where words suffice: its name for a
title, "(event)" sentences, no board."""

from __future__ import annotations

from tafel.by_game import coloursquare, connect4, plus4
from tafel.by_game.base import Cursor, GameClient, Namer, Seating

REGISTRY: dict[str, GameClient] = {g.name: g for g in (connect4.GAME, plus4.GAME, coloursquare.GAME)}
GAMES = tuple(REGISTRY)


def game(name: str) -> GameClient | None:
    return REGISTRY.get(name)


__all__ = ["GAMES", "REGISTRY", "Cursor", "GameClient", "Namer", "Seating", "game"]
