"""Which leaderboard a finished game counts in, from the games' own descriptions (DescribeGame
`rating_pools` and `personal_bests`): the gateway names no game.

A game lists its pools by seat range (Colour Square keeps tables and duels apart: a table result
counts as n - 1 pairwise results at once, see glicko2.py); one that lists none gets one pool
named after it for every table of two or more seats. Solo games are never rated; a game whose
description has `personal_bests` keeps them on boards, one per value of the named choice option
(Colour Square: one per sheet).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2

from gateway.catalogue import Catalogue
from kit.errors import Refused

log = logging.getLogger("tafel.gateway.ratings")


@dataclass(frozen=True)
class Pool:
    name: str
    game: str
    title: str
    min_seats: int
    max_seats: int


@dataclass(frozen=True)
class Boards:
    """A game's solo personal-best boards (keys: kit.redis.keys.pool_key(name, "best:<board>"))."""

    name: str
    game: str
    title: str
    option: str  # the choice option whose value names the board
    choices: tuple[str, ...]
    default: str

    def board_of(self, options: games_pb2.GameOptions) -> str:
        """The board a game with these options counts on (unset: the default board)."""
        chosen = options.WhichOneof("game")
        if chosen is None:
            return self.default
        message = getattr(options, chosen)
        field = message.DESCRIPTOR.fields_by_name.get(self.option)
        if field is None:
            return self.default
        value = getattr(message, self.option)
        if field.enum_type is not None:
            number = field.enum_type.values_by_number.get(value)
            return number.name if value and number is not None else self.default
        return str(value) or self.default


def pools_of(description: rules_pb2.DescribeGameResponse) -> tuple[Pool, ...]:
    game = description.game
    listed = tuple(
        Pool(p.name, game, p.title or p.name, max(2, p.min_seats), p.max_seats) for p in description.rating_pools
    )
    if listed or description.max_seats < 2:
        return listed
    return (Pool(game, game, description.title or game, max(2, description.min_seats), description.max_seats),)


def boards_of(description: rules_pb2.DescribeGameResponse) -> Boards | None:
    if not description.HasField("personal_bests") or description.min_seats > 1:
        return None
    bests = description.personal_bests
    for spec in description.options:
        if spec.name == bests.board_option and spec.WhichOneof("values") == "choice":
            return Boards(
                bests.name,
                description.game,
                description.title or description.game,
                spec.name,
                tuple(spec.choice.choices),
                spec.choice.default_value,
            )
    log.warning("personal bests name no choice option", extra={"game": description.game})
    return None


class RatingPools:
    """The pools and boards of every game in the catalogue (read through it: the router asks each
    rules service once)."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue

    async def of_game(self, game: str) -> tuple[Pool, ...]:
        if not self.catalogue.offers(game):
            # A record of a game this gateway no longer offers: its own pool, as it had.
            return (Pool(game, game, game, 2, 1 << 16),)
        return pools_of(await self.catalogue.describe(game))

    async def pool_for(self, game: str, seats: int) -> str | None:
        """The pool that rates a game of `seats` seats; None for solo games and seat counts no
        pool of the game takes."""
        if seats < 2:
            return None
        for pool in await self.of_game(game):
            if pool.min_seats <= seats <= pool.max_seats:
                return pool.name
        return None

    async def main_pool(self, game: str) -> str:
        """The pool matchmaking pairs by: the game's first."""
        pools = await self.of_game(game)
        return pools[0].name if pools else game

    async def boards_for(self, game: str) -> Boards | None:
        if not self.catalogue.offers(game):
            return None
        return boards_of(await self.catalogue.describe(game))

    async def _descriptions(self) -> tuple[list[rules_pb2.DescribeGameResponse], Refused | None]:
        """Every offered game's description, and the refusal of the last game whose rules service
        did not answer (None: all did). A game that does not answer is left out (as ListGameTypes
        does), unless no game answers."""
        out: list[rules_pb2.DescribeGameResponse] = []
        last: Refused | None = None
        for game in self.catalogue.games:
            try:
                out.append(await self.catalogue.describe(game))
            except Refused as refused:
                last = refused
                log.warning("game left out of the leaderboards", extra={"game": game, "reason": refused.reason})
        if not out and last is not None:
            raise last
        return out, last

    async def listed(self) -> list[Pool]:
        """Every leaderboard, game by game in the catalogue's order."""
        descriptions, _ = await self._descriptions()
        return [pool for description in descriptions for pool in pools_of(description)]

    async def named(self, name: str) -> Pool | None:
        """The leaderboard `name`; None when no game has it. Not found while a game's rules
        service does not answer: that game's refusal (it may be the one that has it)."""
        descriptions, missing = await self._descriptions()
        for description in descriptions:
            for pool in pools_of(description):
                if pool.name == name:
                    return pool
        if missing is not None:
            raise missing
        return None

    async def all_boards(self) -> list[Boards]:
        descriptions, _ = await self._descriptions()
        found = (boards_of(description) for description in descriptions)
        return [boards for boards in found if boards is not None]
