"""Ratings in Redis: one Glicko-2 pool per leaderboard, updated exactly once per finished rated game.

Which pool a game counts in comes from its rules service's description (pools.py); solo games of
a game that keeps personal bests go to bests.py. A game with fewer than two distinct players, or
not marked rated, changes no rating.

Keys, all hash-tagged by the pool so each update is one single-slot script (Redis Cluster too;
kit/redis/keys.py pool_key):

- ``tafel:{r:<pool>}:ratings`` hash: player id -> stored.py's "rating rd volatility games
  last_played_ms" (the format the matchmaker's rating source reads);
- ``tafel:{r:<pool>}:board`` zset: established (not provisional) registered players by rating;
  ``tafel:{r:<pool>}:all``: every registered rated player; ``tafel:{r:<pool>}:names``: usernames.
  A player's entries change only when they play (an established player who stops playing stays
  listed with the rating they had);
- ``tafel:{r:<pool>}:applied:<game id>``: the "applied" marker (TTL TAFEL_RATING_APPLIED_TTL_S);
- ``tafel:{r:<pool>}:history:<player id>`` list: "<ended ms> <rating> <game id>" after each rated
  game of a registered player, oldest first, the latest 100 (a profile's chart, gateway/people).

Exactly once: the new ratings are computed here (glicko2.py, one implementation) from the ratings
read before, and written by lua/ratings/apply.lua, which first checks the game's applied marker
(set: the update was made; nothing happens) and that every player's stored rating is still the one
the computation read (changed by another game ending at the same moment: read again, compute
again). It writes the ratings, the leaderboards, the history points and the marker together, so
two gateway replicas seeing the same end, a replayed end, or a retry after a crash apply it once.

What drives it: the game-end path. Records.write (gateway/records.py) calls `on_record` with the
record that stands, every time it runs, so the first writer and any replica repeating the end both
reach the idempotent update. A crash between the record and the update is caught by sweeper.py.
An unrated game has nothing to update: its hint is stored with its record (`attach`,
Records.companions), in the record's round trip.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tafel.play.v1 import play_pb2

from gateway.paging import ranked_page
from gateway.ratings.bests import Best, PersonalBests
from gateway.ratings.glicko2 import DEFAULT_TAU, PROVISIONAL_RD, RATING_PERIOD_DAYS, Rating, age, rate_table
from gateway.ratings.pools import RatingPools
from gateway.ratings.stored import Stored
from gateway.records import ABORTED
from kit.errors import invalid
from kit.redis.keys import pool_key, rated_hint_key
from kit.redis.layer import RedisLayer
from kit.redis.pipe import Command
from kit.redis.replies import text
from kit.redis.scripts import script

if TYPE_CHECKING:
    from gateway.records import Records

log = logging.getLogger("tafel.gateway.ratings")

DAY_MS = 86_400_000
HISTORY_KEEP = 100  # points per player and pool (lua/ratings/apply.lua keeps as many)


def history_key(pool: str, player_id: str) -> str:
    return pool_key(pool, f"history:{player_id}")


@dataclass(frozen=True)
class Point:
    at_ms: int
    rating: float
    game_id: str


@dataclass(frozen=True)
class Entry:
    rank: int
    player_id: str
    username: str
    stored: Stored


class RatingBook:
    """Reads and updates ratings and personal bests. One per gateway process."""

    def __init__(
        self,
        redis: RedisLayer,
        pools: RatingPools,
        *,
        applied_ttl_s: int = 90 * 86_400,
        hint_ttl_s: int = 6 * 3600,
        provisional_rd: float = PROVISIONAL_RD,
        tau: float = DEFAULT_TAU,
        period_days: float = RATING_PERIOD_DAYS,
        attempts: int = 20,
    ) -> None:
        self.redis = redis
        self.pools = pools
        self.bests = PersonalBests(redis, pools)
        self.applied_ttl_s = applied_ttl_s
        self.hint_ttl_s = hint_ttl_s
        self.provisional_rd = provisional_rd
        self.tau = tau
        self.period_days = period_days
        self.attempts = attempts

    # -- an account's rename and erasure (gateway/standing/account_life.py) --------------------------

    async def rename(self, player_id: str, username: str) -> None:
        """The name shown beside the player's ratings and bests."""
        pools = [pool.name for pool in await self.pools.listed()]
        pools += [boards.name for boards in await self.pools.all_boards()]
        commands: list[Command] = []
        for name in sorted(set(pools)):
            if await self.redis.call("HEXISTS", pool_key(name, "names"), player_id):
                commands.append(("HSET", pool_key(name, "names"), player_id, username))
        await self.redis.many(commands)

    async def erase(self, player_id: str) -> None:
        """The player's ratings and personal bests leave every leaderboard."""
        commands: list[Command] = []
        for pool in await self.pools.listed():
            commands += [
                ("HDEL", pool_key(pool.name, "ratings"), player_id),
                ("ZREM", pool_key(pool.name, "board"), player_id),
                ("ZREM", pool_key(pool.name, "all"), player_id),
                ("HDEL", pool_key(pool.name, "names"), player_id),
                ("DEL", history_key(pool.name, player_id)),
            ]
        for boards in await self.pools.all_boards():
            commands.append(("HDEL", pool_key(boards.name, "names"), player_id))
            for board in boards.choices:
                commands += [
                    ("ZREM", pool_key(boards.name, f"best:{board}"), player_id),
                    ("HDEL", pool_key(boards.name, f"bestgame:{board}"), player_id),
                ]
        await self.redis.many(commands)

    # -- updates ------------------------------------------------------------------------------------

    def attach(self, records: Records) -> None:
        """Hang this book off the end of every game `records` writes: its hint stored with an
        unrated game's record (with_record), then on_record for the rest."""
        records.companions.append(self.with_record)
        records.hooks.append(self.on_record)

    @staticmethod
    def _nothing_to_rate(record: play_pb2.GameRecord) -> bool:
        # Known from the record alone (a solo game may still have a personal best to keep; an
        # aborted one has no result at all, however it was marked).
        return (len(record.players) > 1 and not record.rated) or record.outcome.reason == ABORTED

    def with_record(self, record: play_pb2.GameRecord) -> list[Command]:
        """What to store with the record (Records.companions): an unrated game's hint, so the
        sweep passes it by, in the record's round trip instead of one of its own after it."""
        if not self._nothing_to_rate(record):
            return []
        return [("SET", rated_hint_key(record.game_id), "1", "EX", self.hint_ttl_s)]

    async def on_record(self, record: play_pb2.GameRecord) -> None:
        """The game-end hook (Records.write): apply the record once, then leave the sweep a hint
        (an unrated game's went with its record: attach)."""
        if self._nothing_to_rate(record):
            return
        await self.apply_record(record)
        await self.redis.call("SET", rated_hint_key(record.game_id), "1", "EX", self.hint_ttl_s)

    async def apply_record(self, record: play_pb2.GameRecord) -> str:
        """Apply a finished game: "applied", "already" (applied before), or "skipped" (nothing to
        rate). Safe to call any number of times, from any replica, concurrently."""
        seats = len(record.players)
        outcome = record.outcome
        if outcome.reason == ABORTED:
            return "skipped"
        if seats == 1:
            boards = await self.pools.boards_for(record.game)
            return await self.bests.apply(record, boards) if boards is not None else "skipped"
        pool = await self.pools.pool_for(record.game, seats)
        if pool is None or not record.rated or len(outcome.ranks) != seats:
            return "skipped"
        ids = [p.player.player_id for p in record.players]
        if len(set(ids)) != seats:
            return "skipped"  # one player in several seats: nothing to learn
        ended_ms = record.ended_at.ToMilliseconds()
        for _ in range(self.attempts):
            raw: Any = await self.redis.call("HMGET", pool_key(pool, "ratings"), *ids)
            before = [Stored.decode(value) for value in raw]
            ratings = [self._aged(stored, ended_ms) for stored in before]
            after = rate_table(ratings, list(outcome.ranks), tau=self.tau)
            args: list[Any] = [self.applied_ttl_s, seats, ended_ms]
            for seat, seated in enumerate(record.players):
                old = before[seat]
                new = Stored(after[seat], (old.games if old else 0) + 1, max(ended_ms, old.last_ms if old else 0))
                listed = 0 if seated.player.guest else (1 if after[seat].provisional(self.provisional_rd) else 2)
                point = f"{ended_ms} {after[seat].rating:.3f} {record.game_id}" if listed else ""
                args += [
                    ids[seat],
                    text(raw[seat]) if raw[seat] is not None else "",
                    new.encode(),
                    repr(round(after[seat].rating, 6)),
                    listed,
                    seated.player.username,
                    point,
                ]
            keys = [pool_key(pool, f"applied:{record.game_id}")] + [
                pool_key(pool, part) for part in ("ratings", "board", "all", "names")
            ]
            keys += [history_key(pool, player_id) for player_id in ids]
            done = int(await self.redis.run(script("ratings/apply"), keys, args))
            if done == 1:
                log.info("ratings updated", extra={"game_id": record.game_id, "pool": pool})
                return "applied"
            if done == 0:
                return "already"
            await asyncio.sleep(0.005 * secrets.randbelow(10))  # a player's rating moved: again
        raise RuntimeError(f"rating update for {record.game_id} kept conflicting")

    def _aged(self, stored: Stored | None, now_ms: int) -> Rating:
        if stored is None:
            return Rating()
        periods = max(0, now_ms - stored.last_ms) / (DAY_MS * self.period_days)
        return age(stored.rating, periods)

    # -- reads --------------------------------------------------------------------------------------

    async def rating(self, player_id: str, game: str) -> float:
        """Matchmaking's RatingSource: the player's rating in the game's main pool."""
        stored = await self.stored(await self.pools.main_pool(game), player_id)
        return stored.rating.rating if stored else Rating().rating

    async def stored(self, pool: str, player_id: str) -> Stored | None:
        return Stored.decode(await self.redis.call("HGET", pool_key(pool, "ratings"), player_id))

    async def history(self, pool: str, player_id: str) -> list[Point]:
        """The player's rating after each of their latest rated games in the pool, oldest first."""
        raw: Any = await self.redis.call("LRANGE", history_key(pool, player_id), -HISTORY_KEEP, -1)
        points = []
        for row in raw:
            at, rating, game_id = text(row).split(" ", 2)
            points.append(Point(int(at), float(rating), game_id))
        return points

    async def ratings_of(self, player_id: str) -> list[tuple[str, Stored, int]]:
        """(pool, rating, rank on the established board or 0) for every pool the player has."""
        pools = await self.pools.listed()
        raw = await self.redis.many(
            [
                command
                for pool in pools
                for command in (
                    ("HGET", pool_key(pool.name, "ratings"), player_id),
                    ("ZREVRANK", pool_key(pool.name, "board"), player_id),
                )
            ]
        )
        out: list[tuple[str, Stored, int]] = []
        for i, pool in enumerate(pools):
            stored = Stored.decode(raw[2 * i])
            if stored is not None:
                rank = raw[2 * i + 1]
                out.append((pool.name, stored, int(rank) + 1 if rank is not None else 0))
        return out

    async def leaderboard(
        self, pool: str, *, include_provisional: bool, page_size: int, page_token: str, me: str = ""
    ) -> tuple[list[Entry], str, Entry | None, int]:
        """(entries, next page token, the caller's entry, total listed)."""
        if await self.pools.named(pool) is None:
            raise invalid("UNKNOWN_LEADERBOARD", f"there is no leaderboard {pool}", field="leaderboard")
        listing = pool_key(pool, "all" if include_provisional else "board")
        ids, offset, token, rank, total = await ranked_page(self.redis, listing, page_size, page_token, me)
        entries = await self._entries(pool, ids, offset)
        mine: Entry | None = None
        if rank is not None:
            found = await self._entries(pool, [me], rank)
            mine = found[0] if found else None
        return entries, token, mine, total

    async def _entries(self, pool: str, ids: Sequence[str], offset: int) -> list[Entry]:
        if not ids:
            return []
        ratings, names = await self.redis.many(
            [("HMGET", pool_key(pool, "ratings"), *ids), ("HMGET", pool_key(pool, "names"), *ids)]
        )
        out: list[Entry] = []
        for i, player_id in enumerate(ids):
            stored = Stored.decode(ratings[i])
            if stored is not None:
                name = text(names[i]) if names[i] is not None else ""
                out.append(Entry(offset + i + 1, player_id, name, stored))
        return out

    async def personal_bests(
        self, sheet: str, *, page_size: int, page_token: str, me: str = ""
    ) -> tuple[list[Best], str, Best | None, int]:
        return await self.bests.listing(sheet, page_size=page_size, page_token=page_token, me=me)

    async def bests_of(self, player_id: str) -> list[Best]:
        return await self.bests.of_player(player_id)
