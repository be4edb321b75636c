"""The catalogue's games as their rules services describe them, without starting the services:
what a gateway feature reads from DescribeGame, for tests that need no running rules tier."""

from __future__ import annotations

from gateway.catalogue import Described
from kit.catalog import GAMES
from services.kit.describe import describe_game, load_game


def local_catalogue() -> Described:
    return Described(describe_game(*load_game(package)) for package in GAMES.values())
