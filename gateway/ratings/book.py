"""Ratings in Redis: one Glicko-2 pool per leaderboard, updated exactly once per finished rated game.

Pools (leaderboards): ``connect4``, ``plus4``, ``coloursquare`` (tables of 3-6 seats) and
``coloursquare-duel`` (two seats). Colour Square keeps the two apart because a table result counts
as n - 1 pairwise results at once (see glicko2.py): mixing them would let table players' ratings
move several times faster than duellists'. Solo Colour Square games are not rated; they feed the
personal bests per sheet. A game with fewer than two distinct players, or not marked rated, changes
no rating.

Keys, all hash-tagged by the pool so each update is one single-slot script (Redis Cluster too):

- ``tafel:{r:<pool>}:ratings`` hash: player id -> "rating rd volatility games last_played_ms"
  (the first number is the rating, the format gateway/matchmaking.py's HashRatings reads);
- ``tafel:{r:<pool>}:board`` zset: established (not provisional) registered players by rating;
  ``tafel:{r:<pool>}:all``: every registered rated player; ``tafel:{r:<pool>}:names``: usernames.
  A player's entries change only when they play (an established player who stops playing stays
  listed with the rating they had);
- ``tafel:{r:<pool>}:applied:<game id>``: the "applied" marker (TTL TAFEL_RATING_APPLIED_TTL_S).
- ``tafel:{r:coloursquare-solo}:best:<sheet>`` zset player -> best score, ``...:bestgame:<sheet>``
  hash player -> "game_id ended_ms score".

Exactly once: the new ratings are computed here (glicko2.py, one implementation) from the ratings
read before, and written by one Lua script that first checks the game's applied marker (set: the
update was made; nothing happens) and that every player's stored rating is still the one the
computation read (changed by another game ending at the same moment: read again, compute again).
It writes the ratings, the leaderboards and the marker together, so two gateway replicas seeing the
same end, a replayed end, or a retry after a crash apply it once.

What drives it: the game-end path. Records.write (gateway/records.py) calls `on_record` with the
record that stands, every time it runs, so the first writer and any replica repeating the end both
reach the idempotent update. A crash between the record and the update is caught by the sweeper:
it reads the records index by end time (from a cursor, minus a lag) and applies any record whose
hint (``tafel:{g:<id>}:rated``, set after processing) is missing.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError
from tafel.play.v1 import play_pb2

from gateway.ratings.glicko2 import (
    DEFAULT_TAU,
    PROVISIONAL_RD,
    RATING_PERIOD_DAYS,
    Rating,
    age,
    rate_table,
)
from gateway.records import INDEX as RECORDS_INDEX
from gateway.records import record_key
from kit.errors import invalid

log = logging.getLogger("tafel.gateway.ratings")

SOLO_POOL = "coloursquare-solo"
DEFAULT_SHEET = "A"
DAY_MS = 86_400_000
MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20


@dataclass(frozen=True)
class Pool:
    name: str
    game: str
    title: str
    min_seats: int
    max_seats: int


POOLS: tuple[Pool, ...] = (
    Pool("connect4", "connect4", "Connect Four", 2, 2),
    Pool("plus4", "plus4", "Plus 4", 2, 2),
    Pool("coloursquare", "coloursquare", "Colour Square tables", 3, 6),
    Pool("coloursquare-duel", "coloursquare", "Colour Square duels", 2, 2),
)
POOLS_BY_NAME = {pool.name: pool for pool in POOLS}


def pool_for(game: str, seats: int) -> str | None:
    """The pool that rates a game of `seats` seats; None for solo games."""
    if seats < 2:
        return None
    for pool in POOLS:
        if pool.game == game and pool.min_seats <= seats <= pool.max_seats:
            return pool.name
    return game  # a game added later without its own entry: one pool per game


def default_pool(game: str) -> str:
    """The pool matchmaking reads for a game (its multi-seat pool for Colour Square)."""
    for pool in POOLS:
        if pool.game == game:
            return pool.name
    return game


def key(pool: str, part: str) -> str:
    return f"tafel:{{r:{pool}}}:{part}"


def hint_key(game_id: str) -> str:
    return f"tafel:{{g:{game_id}}}:rated"


@dataclass(frozen=True)
class Stored:
    """A player's rating as stored in a pool."""

    rating: Rating
    games: int
    last_ms: int

    def encode(self) -> str:
        r = self.rating
        return f"{r.rating:.6f} {r.rd:.6f} {r.volatility:.9f} {self.games} {self.last_ms}"

    @classmethod
    def decode(cls, raw: bytes | str | None) -> Stored | None:
        if raw is None:
            return None
        text = raw.decode() if isinstance(raw, bytes) else raw
        try:
            parts = text.split()
            return cls(Rating(float(parts[0]), float(parts[1]), float(parts[2])), int(parts[3]), int(parts[4]))
        except (IndexError, ValueError):
            return None


APPLY_LUA = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local n = tonumber(ARGV[2])
for i = 0, n - 1 do
  local b = 4 + i * 6
  local current = redis.call('HGET', KEYS[2], ARGV[b]) or ''
  if current ~= ARGV[b + 1] then return -1 end
end
for i = 0, n - 1 do
  local b = 4 + i * 6
  local id = ARGV[b]
  redis.call('HSET', KEYS[2], id, ARGV[b + 2])
  local listed = ARGV[b + 4]
  if listed == '0' then
    redis.call('ZREM', KEYS[3], id)
    redis.call('ZREM', KEYS[4], id)
  else
    redis.call('ZADD', KEYS[4], ARGV[b + 3], id)
    if listed == '2' then
      redis.call('ZADD', KEYS[3], ARGV[b + 3], id)
    else
      redis.call('ZREM', KEYS[3], id)
    end
    redis.call('HSET', KEYS[5], id, ARGV[b + 5])
  end
end
redis.call('SET', KEYS[1], ARGV[3], 'EX', tonumber(ARGV[1]))
return 1
"""

BEST_LUA = """
local current = redis.call('ZSCORE', KEYS[1], ARGV[1])
if current and tonumber(current) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
return 1
"""


@dataclass(frozen=True)
class Entry:
    rank: int
    player_id: str
    username: str
    stored: Stored


@dataclass(frozen=True)
class Best:
    rank: int
    player_id: str
    username: str
    sheet: str
    score: int
    game_id: str
    achieved_ms: int


def encode_offset(listing: str, offset: int) -> str:
    raw = json.dumps([listing, offset], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode_offset(listing: str, token: str) -> int:
    if not token:
        return 0
    try:
        if len(token) > 256:
            raise ValueError
        data: Any = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        name, offset = data
        if name != listing or not isinstance(offset, int) or offset < 0:
            raise ValueError
        return offset
    except (binascii.Error, ValueError, TypeError):
        raise invalid("BAD_PAGE_TOKEN", "page_token is not a token this listing issued") from None


def page_size_of(value: int) -> int:
    if value < 0:
        raise invalid("BAD_PAGE_SIZE", "page_size must not be negative")
    return min(value or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


class RatingBook:
    """Reads and updates ratings and personal bests. One per gateway process."""

    def __init__(
        self,
        redis: Redis,
        *,
        applied_ttl_s: int = 90 * 86_400,
        hint_ttl_s: int = 6 * 3600,
        provisional_rd: float = PROVISIONAL_RD,
        tau: float = DEFAULT_TAU,
        period_days: float = RATING_PERIOD_DAYS,
        attempts: int = 20,
    ) -> None:
        self.redis = redis
        self.applied_ttl_s = applied_ttl_s
        self.hint_ttl_s = hint_ttl_s
        self.provisional_rd = provisional_rd
        self.tau = tau
        self.period_days = period_days
        self.attempts = attempts
        self._apply = redis.register_script(APPLY_LUA)
        self._best = redis.register_script(BEST_LUA)

    # -- updates ------------------------------------------------------------------------------------

    async def on_record(self, record: play_pb2.GameRecord) -> None:
        """The game-end hook (Records.write): apply the record once, then leave the sweep a hint."""
        await self.apply_record(record)
        await self.redis.set(hint_key(record.game_id), "1", ex=self.hint_ttl_s)

    async def apply_record(self, record: play_pb2.GameRecord) -> str:
        """Apply a finished game: "applied", "already" (applied before), or "skipped" (nothing to
        rate). Safe to call any number of times, from any replica, concurrently."""
        seats = len(record.players)
        outcome = record.outcome
        if seats == 1 and record.game == "coloursquare":
            return await self._personal_best(record)
        pool = pool_for(record.game, seats)
        if pool is None or not record.rated or len(outcome.ranks) != seats:
            return "skipped"
        ids = [p.player.player_id for p in record.players]
        if len(set(ids)) != seats:
            return "skipped"  # one player in several seats: nothing to learn
        ended_ms = record.ended_at.ToMilliseconds()
        for _ in range(self.attempts):
            raw: Any = await self.redis.hmget(key(pool, "ratings"), ids)
            before = [Stored.decode(value) for value in raw]
            ratings = [self._aged(stored, ended_ms) for stored in before]
            after = rate_table(ratings, list(outcome.ranks), tau=self.tau)
            args: list[Any] = [self.applied_ttl_s, seats, ended_ms]
            for seat, seated in enumerate(record.players):
                old = before[seat]
                new = Stored(after[seat], (old.games if old else 0) + 1, max(ended_ms, old.last_ms if old else 0))
                listed = 0 if seated.player.guest else (1 if after[seat].provisional(self.provisional_rd) else 2)
                args += [
                    ids[seat],
                    _text(raw[seat]) if raw[seat] is not None else "",
                    new.encode(),
                    repr(round(after[seat].rating, 6)),
                    listed,
                    seated.player.username,
                ]
            done = int(
                await self._apply(
                    keys=[
                        key(pool, f"applied:{record.game_id}"),
                        key(pool, "ratings"),
                        key(pool, "board"),
                        key(pool, "all"),
                        key(pool, "names"),
                    ],
                    args=args,
                )
            )
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

    async def _personal_best(self, record: play_pb2.GameRecord) -> str:
        player = record.players[0].player
        if player.guest or not record.outcome.scores:
            return "skipped"
        sheet = record.options.coloursquare.side or DEFAULT_SHEET
        score = int(record.outcome.scores[0])
        ended_ms = record.ended_at.ToMilliseconds()
        changed = await self._best(
            keys=[key(SOLO_POOL, f"best:{sheet}"), key(SOLO_POOL, f"bestgame:{sheet}"), key(SOLO_POOL, "names")],
            args=[player.player_id, score, f"{record.game_id} {ended_ms} {score}", player.username],
        )
        return "applied" if int(changed) else "already"

    # -- reads --------------------------------------------------------------------------------------

    async def rating(self, player_id: str, game: str) -> float:
        """Matchmaking's RatingSource: the player's rating in the game's main pool."""
        stored = Stored.decode(await self.redis.hget(key(default_pool(game), "ratings"), player_id))
        return stored.rating.rating if stored else Rating().rating

    async def stored(self, pool: str, player_id: str) -> Stored | None:
        return Stored.decode(await self.redis.hget(key(pool, "ratings"), player_id))

    async def ratings_of(self, player_id: str) -> list[tuple[str, Stored, int]]:
        """(pool, rating, rank on the established board or 0) for every pool the player has."""
        pipe = self.redis.pipeline(transaction=False)
        for pool in POOLS:
            pipe.hget(key(pool.name, "ratings"), player_id)
            pipe.zrevrank(key(pool.name, "board"), player_id)
        raw: list[Any] = await pipe.execute()
        out: list[tuple[str, Stored, int]] = []
        for i, pool in enumerate(POOLS):
            stored = Stored.decode(raw[2 * i])
            if stored is not None:
                rank = raw[2 * i + 1]
                out.append((pool.name, stored, int(rank) + 1 if rank is not None else 0))
        return out

    def _listing(self, pool: str, include_provisional: bool) -> str:
        if pool not in POOLS_BY_NAME:
            raise invalid("UNKNOWN_LEADERBOARD", f"there is no leaderboard {pool}", field="leaderboard")
        return key(pool, "all" if include_provisional else "board")

    async def leaderboard(
        self, pool: str, *, include_provisional: bool, page_size: int, page_token: str, me: str = ""
    ) -> tuple[list[Entry], str, Entry | None, int]:
        """(entries, next page token, the caller's entry, total listed)."""
        listing = self._listing(pool, include_provisional)
        size = page_size_of(page_size)
        offset = decode_offset(listing, page_token)
        pipe = self.redis.pipeline(transaction=False)
        pipe.zrevrange(listing, offset, offset + size - 1)
        pipe.zcard(listing)
        if me:
            pipe.zrevrank(listing, me)
        raw: list[Any] = await pipe.execute()
        ids = [_text(member) for member in raw[0]]
        total = int(raw[1])
        entries = await self._entries(pool, ids, offset)
        token = encode_offset(listing, offset + size) if offset + size < total else ""
        mine: Entry | None = None
        if me and raw[2] is not None:
            found = await self._entries(pool, [me], int(raw[2]))
            mine = found[0] if found else None
        return entries, token, mine, total

    async def _entries(self, pool: str, ids: Sequence[str], offset: int) -> list[Entry]:
        if not ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        pipe.hmget(key(pool, "ratings"), list(ids))
        pipe.hmget(key(pool, "names"), list(ids))
        ratings, names = await pipe.execute()
        out: list[Entry] = []
        for i, player_id in enumerate(ids):
            stored = Stored.decode(ratings[i])
            if stored is not None:
                name = _text(names[i]) if names[i] is not None else ""
                out.append(Entry(offset + i + 1, player_id, name, stored))
        return out

    async def personal_bests(
        self, sheet: str, *, page_size: int, page_token: str, me: str = ""
    ) -> tuple[list[Best], str, Best | None, int]:
        sheet = sheet or DEFAULT_SHEET
        if not sheet.isalnum() or len(sheet) > 8:
            raise invalid("BAD_SHEET", "sheet is a Colour Square sheet name such as A or B", field="sheet")
        listing = key(SOLO_POOL, f"best:{sheet}")
        size = page_size_of(page_size)
        offset = decode_offset(listing, page_token)
        pipe = self.redis.pipeline(transaction=False)
        pipe.zrevrange(listing, offset, offset + size - 1)
        pipe.zcard(listing)
        if me:
            pipe.zrevrank(listing, me)
        raw: list[Any] = await pipe.execute()
        ids = [_text(member) for member in raw[0]]
        total = int(raw[1])
        bests = await self._bests(sheet, ids, offset)
        token = encode_offset(listing, offset + size) if offset + size < total else ""
        mine: Best | None = None
        if me and raw[2] is not None:
            found = await self._bests(sheet, [me], int(raw[2]))
            mine = found[0] if found else None
        return bests, token, mine, total

    async def bests_of(self, player_id: str) -> list[Best]:
        """The player's personal best on every sheet they have a score on."""
        out: list[Best] = []
        cursor = 0
        sheets: set[str] = set()
        prefix = key(SOLO_POOL, "best:")
        while True:
            cursor, found = await self.redis.scan(cursor, match=prefix + "*", count=100)
            sheets.update(_text(k)[len(prefix) :] for k in found)
            if cursor == 0:
                break
        for sheet in sorted(sheets):
            rank: Any = await self.redis.zrevrank(key(SOLO_POOL, f"best:{sheet}"), player_id)
            if rank is not None:
                out.extend(await self._bests(sheet, [player_id], int(rank)))
        return out

    async def _bests(self, sheet: str, ids: Sequence[str], offset: int) -> list[Best]:
        if not ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        pipe.hmget(key(SOLO_POOL, f"bestgame:{sheet}"), list(ids))
        pipe.hmget(key(SOLO_POOL, "names"), list(ids))
        games, names = await pipe.execute()
        out: list[Best] = []
        for i, player_id in enumerate(ids):
            if games[i] is None:
                continue
            game_id, ended, score = _text(games[i]).split()
            name = _text(names[i]) if names[i] is not None else ""
            out.append(Best(offset + i + 1, player_id, name, sheet, int(score), game_id, int(ended)))
        return out


RELEASE_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RatingSweeper:
    """The backstop for a crash between a game's record and its rating update: one replica at a
    time (a lease in Redis) reads the records index from its cursor (minus `lag_s`, for records
    written a little after their end time) and applies every record whose hint is missing."""

    LOCK = "tafel:ratings:sweep:lock"
    CURSOR = "tafel:ratings:sweep:cursor"

    def __init__(
        self,
        book: RatingBook,
        *,
        interval_s: float = 30.0,
        lag_s: float = 300.0,
        batch: int = 200,
    ) -> None:
        self.book = book
        self.redis = book.redis
        self.interval_s = interval_s
        self.lag_ms = int(lag_s * 1000)
        self.batch = batch
        self._task: asyncio.Task[None] | None = None
        self._release = self.redis.register_script(RELEASE_LUA)
        self.applied = 0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="rating sweeper")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            try:
                await self.sweep_once()
            except asyncio.CancelledError:
                raise
            except RedisError:
                log.warning("rating sweep failed: redis unavailable")
            except Exception:
                log.exception("rating sweep failed")
            await asyncio.sleep(self.interval_s)

    async def sweep_once(self, now_ms: int | None = None) -> int:
        """One pass; returns how many records it applied (0 when another replica holds the lease)."""
        token = secrets.token_hex(8)
        lease_ms = int(max(self.interval_s, 5.0) * 2000)
        if not await self.redis.set(self.LOCK, token, nx=True, px=lease_ms):
            return 0
        applied = 0
        try:
            now = int(time.time() * 1000) if now_ms is None else now_ms
            cursor_raw = await self.redis.get(self.CURSOR)
            cursor = int(cursor_raw) if cursor_raw is not None else now - self.lag_ms
            low = cursor - self.lag_ms
            highest = cursor
            offset = 0
            while True:
                rows: Any = await self.redis.zrangebyscore(
                    RECORDS_INDEX, low, "+inf", start=offset, num=self.batch, withscores=True
                )
                if not rows:
                    break
                offset += len(rows)
                ids = [_text(member) for member, _ in rows]
                pipe = self.redis.pipeline(transaction=False)
                for game_id in ids:
                    pipe.exists(hint_key(game_id))
                hints = await pipe.execute()
                for (game_id, score), hinted in zip(zip(ids, (s for _, s in rows), strict=True), hints, strict=True):
                    highest = max(highest, int(score))
                    if hinted:
                        continue
                    stored: Any = await self.redis.get(record_key(game_id))
                    if stored is None:
                        continue
                    record = play_pb2.GameRecord.FromString(stored)
                    if await self.book.apply_record(record) == "applied":
                        applied += 1
                    await self.redis.set(hint_key(game_id), "1", ex=self.book.hint_ttl_s)
                if len(rows) < self.batch:
                    break
            await self.redis.set(self.CURSOR, min(highest, now))
        finally:
            await self._release(keys=[self.LOCK], args=[token])
        self.applied += applied
        return applied
