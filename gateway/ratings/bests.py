"""Solo personal bests: a finished solo game of a game that keeps them (DescribeGame
`personal_bests`) counts on its board when its score beats the player's best there.

Keys, per game's boards (kit/redis/keys.py pool_key, one slot per boards name):
``best:<board>`` zset player -> best score, ``bestgame:<board>`` hash player -> "game_id ended_ms
score", ``names`` hash player -> username. Written by lua/ratings/best.lua (an equal score keeps
the earlier game).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tafel.play.v1 import play_pb2

from gateway.paging import ranked_page
from gateway.ratings.pools import Boards, RatingPools
from kit.errors import invalid
from kit.redis.keys import pool_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import text
from kit.redis.scripts import script


@dataclass(frozen=True)
class Best:
    rank: int
    player_id: str
    username: str
    sheet: str  # the board
    score: int
    game_id: str
    achieved_ms: int


class PersonalBests:
    def __init__(self, redis: RedisLayer, pools: RatingPools) -> None:
        self.redis = redis
        self.pools = pools

    async def apply(self, record: play_pb2.GameRecord, boards: Boards) -> str:
        """Keep the score if it is a new best: "applied", "already" (not better) or "skipped" (a guest,
        no score)."""
        player = record.players[0].player
        if player.guest or not record.outcome.scores:
            return "skipped"
        board = boards.board_of(record.options)
        score = int(record.outcome.scores[0])
        ended_ms = record.ended_at.ToMilliseconds()
        changed = await self.redis.run(
            script("ratings/best"),
            [
                pool_key(boards.name, f"best:{board}"),
                pool_key(boards.name, f"bestgame:{board}"),
                pool_key(boards.name, "names"),
            ],
            [player.player_id, score, f"{record.game_id} {ended_ms} {score}", player.username],
        )
        return "applied" if int(changed) else "already"

    async def _main(self) -> Boards:
        """The boards GetPersonalBests lists (it names no game): the first game's that keeps them."""
        found = await self.pools.all_boards()
        if not found:
            raise invalid("BAD_SHEET", "no game here keeps solo personal bests", field="sheet")
        return found[0]

    async def listing(
        self, sheet: str, *, page_size: int, page_token: str, me: str = ""
    ) -> tuple[list[Best], str, Best | None, int]:
        """One board, best first: (bests, next page token, the caller's, total on the board)."""
        boards = await self._main()
        sheet = sheet or boards.default
        if sheet not in boards.choices:
            raise invalid(
                "BAD_SHEET",
                f"sheet is a {boards.title} {boards.option}: one of {', '.join(boards.choices)}",
                field="sheet",
            )
        listing = pool_key(boards.name, f"best:{sheet}")
        ids, offset, token, rank, total = await ranked_page(self.redis, listing, page_size, page_token, me)
        bests = await self._bests(boards, sheet, ids, offset)
        mine: Best | None = None
        if rank is not None:
            found = await self._bests(boards, sheet, [me], rank)
            mine = found[0] if found else None
        return bests, token, mine, total

    async def of_player(self, player_id: str) -> list[Best]:
        """The player's best on every board of every game that keeps them, board by board."""
        out: list[Best] = []
        for boards in await self.pools.all_boards():
            ranks = await self.redis.many(
                [("ZREVRANK", pool_key(boards.name, f"best:{board}"), player_id) for board in boards.choices]
            )
            for board, rank in zip(boards.choices, ranks, strict=True):
                if rank is not None:
                    out.extend(await self._bests(boards, board, [player_id], int(rank)))
        return out

    async def _bests(self, boards: Boards, sheet: str, ids: Sequence[str], offset: int) -> list[Best]:
        if not ids:
            return []
        games, names = await self.redis.many(
            [
                ("HMGET", pool_key(boards.name, f"bestgame:{sheet}"), *ids),
                ("HMGET", pool_key(boards.name, "names"), *ids),
            ]
        )
        out: list[Best] = []
        for i, player_id in enumerate(ids):
            if games[i] is None:
                continue
            game_id, ended, score = text(games[i]).split()
            name = text(names[i]) if names[i] is not None else ""
            out.append(Best(offset + i + 1, player_id, name, sheet, int(score), game_id, int(ended)))
        return out
