"""The games this gateway offers, as their rules services describe them (DescribeGame).

Everything game-specific a gateway feature needs (seat ranges, option checks, rating pools,
personal-best boards, table sizes) is read from these answers, never written in the gateway: a
new game is a new rules service and a line in kit/catalogue.py. The rules router is the catalogue
in a running gateway (it asks each game's service once and keeps the answer); `Described` holds
answers already at hand (tests, tools).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from tafel.rules.v1 import rules_pb2

from kit.errors import invalid


class Catalogue(Protocol):
    @property
    def games(self) -> tuple[str, ...]: ...

    def offers(self, game: str) -> bool: ...

    async def describe(self, game: str, *, timeout_s: float | None = None) -> rules_pb2.DescribeGameResponse: ...


class Described:
    """A catalogue of descriptions already at hand, in the order given."""

    def __init__(self, descriptions: Iterable[rules_pb2.DescribeGameResponse]) -> None:
        self._descriptions = {d.game: d for d in descriptions}

    @property
    def games(self) -> tuple[str, ...]:
        return tuple(self._descriptions)

    def offers(self, game: str) -> bool:
        return game in self._descriptions

    async def describe(self, game: str, *, timeout_s: float | None = None) -> rules_pb2.DescribeGameResponse:
        found = self._descriptions.get(game)
        if found is None:
            raise invalid("UNKNOWN_GAME", f"there is no game type {game} here", field="game")
        return found
