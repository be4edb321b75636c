"""The catalogue's games as their rules services describe them, without starting the services:
what a gateway feature reads from DescribeGame, for tests that need no running rules tier."""

from __future__ import annotations

from tafel.rules.v1 import rules_pb2

from gateway.catalogue import Described
from kit.catalogue import GAMES
from services.host.describe import describe_game, load_game


def local_catalogue(*more: rules_pb2.DescribeGameResponse) -> Described:
    """Every catalogued game's description, then `more` (games no catalogue lists)."""
    return Described([*(describe_game(*load_game(package)) for package in GAMES.values()), *more])
