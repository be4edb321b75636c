"""The Redis game store: every write of a game is one Lua script (kit/redis/lua/rules/), one
round trip.

The keys, what each holds, and who reads them: kit/redis/keys.py game_keys (hash-tagged by game shard,
so one game's keys share a slot). The reads are GameReads' (kit/redis/game_reads.py).

A move compares the version, drops a repeated request id (answering with the first result), writes
the new state, appends its events and publishes a wake-up carrying those events, atomically.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from redis.exceptions import ResponseError

from kit.redis.game_reads import GameReads
from kit.redis.keys import clock_key, clocks_key, game_keys, game_shard, meta_key
from kit.redis.layer import RedisLayer
from kit.redis.pipe import RespError
from kit.redis.scripts import script
from services.host.encoded import deadline_field


@dataclass(frozen=True)
class StoredGame:
    game_id: str
    game: str
    seats: int
    version: int
    state: bytes
    options: bytes  # GameOptions
    last_event_id: str
    over: bool
    window_from: int | None = None  # the version the current commuting window began at


@dataclass(frozen=True)
class Committed:
    deadline_ms: int | None = None  # the turn deadline armed with the commit (0: game over)


class ClockArm(NamedTuple):
    """Arm the game's turn clock in the commit (lua/rules/commit.lua, the clock keys' layout in
    lua/clocks/arm_function.lua). A named tuple, not a frozen dataclass: one is made every move,
    and a frozen dataclass's __init__ sets each field through object.__setattr__."""

    to_act: str  # comma-separated seats to act after the action; "" when over
    per_move_ms: int
    now_ms: int
    ttl_s: int
    keep_meta: bool = False  # also give the game's metadata key (keys.meta_key) the clock's TTL
    # ApplyMoveResponse.turn_deadline encoded for now_ms + per_move_ms (encoded.deadline_field),
    # when the caller has it already (it answers with the same bytes); b"": commit_args makes it
    stamp: bytes = b""


@dataclass(frozen=True)
class Replayed:
    """The request id was seen before: here is the first answer, and the digest of the request it
    answered."""

    response: bytes
    digest: bytes = b""


@dataclass(frozen=True)
class Conflict:
    current_version: int


@dataclass(frozen=True)
class Missing:
    pass


@dataclass(frozen=True)
class Exists:
    pass


@dataclass(frozen=True)
class NoScript:
    """A started commit found Redis without the script (restarted, flushed): nothing was written."""


CommitResult = Committed | Replayed | Conflict | Missing
CreateResult = Committed | Replayed | Exists
LoadResult = StoredGame | Replayed | Missing


@dataclass(frozen=True)
class CommitKeys:
    """The keys a game's commit names, worked out once per game (each key is a crc32 and a few
    string joins; the servicer keeps these beside the game's cached state)."""

    game: tuple[str, ...]  # state, events
    clocked: tuple[str, ...]  # the same, then the clock, the shard's clock set and the metadata key
    channel: str
    meta: str


def commit_keys(game_id: str) -> CommitKeys:
    keys = game_keys(game_id)
    game = (keys.state, keys.events)
    # The clock keys are named here, by the store, from the game id: a caller cannot make the
    # commit write any other key.
    meta = meta_key(game_id)
    clocked = (*game, clock_key(game_id), clocks_key(game_shard(game_id)), meta)
    return CommitKeys(game=game, clocked=clocked, channel=keys.channel, meta=meta)


CommitCall = tuple[tuple[str, ...], list[Any]]  # the commit script's keys and arguments (commit_args)


class NewEvent(NamedTuple):
    """An event to write: a pair, so the servicer's (event id, bytes) pairs are NewEvents as they are."""

    event_id: str
    payload: bytes  # GameEvent bytes


class GameStore(GameReads):
    """The rules tier's writes of a game (and, from GameReads, the reads of what it wrote)."""

    def __init__(self, layer: RedisLayer, *, live_ttl_s: int, finished_ttl_s: int) -> None:
        # Every script runs on the layer's pipelined connection: calls made while others are on
        # the wire leave together, replies are parsed in bulk.
        super().__init__(layer)
        self.live_ttl_s = live_ttl_s
        self.finished_ttl_s = finished_ttl_s

    async def create(
        self,
        *,
        game_id: str,
        request_id: str,
        game: str,
        seats: int,
        options: bytes,
        state: bytes,
        created: NewEvent | Sequence[NewEvent],
        response: bytes,
        publish: bytes,
        status: bytes = b"",
        window_from: int | None = None,
        seed: int = 0,
    ) -> CreateResult:
        """Write a new game: `created` is its first events (GameCreated first), `status` the
        GameStatus at version 0 kept with each of them, `seed` what new_game made it from (kept
        for take-backs: history)."""
        keys = game_keys(game_id)
        if isinstance(created, NewEvent):
            created = (created,)
        pairs: list[Any] = []
        for event in created:
            pairs.extend((event.event_id, event.payload))
        reply: Any = await self.layer.run(
            script("rules/create"),
            [keys.state, keys.events],
            [
                request_id,
                state,
                game,
                seats,
                options,
                created[-1].event_id,
                response,
                self.live_ttl_s,
                keys.channel,
                publish,
                status,
                "" if window_from is None else window_from,
                seed,
                *pairs,
            ],
        )
        code = int(reply[0])
        if code == 0:
            return Committed()
        if code == 1:
            return Replayed(bytes(reply[1]))
        return Exists()

    async def load(self, game_id: str, request_id: str = "") -> LoadResult:
        keys = game_keys(game_id)
        reply: Any = await self.layer.run(script("rules/load"), [keys.state], [request_id])
        prior, fields, digest = reply
        if prior:
            return Replayed(bytes(prior), bytes(digest or b""))
        version, state, game, seats, options, last, over, window = fields
        if version is None:
            return Missing()
        return StoredGame(
            game_id=game_id,
            game=bytes(game).decode(),
            seats=int(seats),
            version=int(version),
            state=bytes(state),
            options=bytes(options or b""),
            last_event_id=bytes(last or b"").decode(),
            over=bytes(over or b"0") == b"1",
            window_from=int(window) if window else None,
        )

    async def history(self, game_id: str) -> tuple[int, list[bytes]]:
        """What a take-back replays: the seed the game was made with (0 for a game made before
        seeds were kept) and its RecordedActions in order. Two reads, not one snapshot: an action
        committed between them shows in the list, and the commit judged on the older version
        then conflicts."""
        seed: Any = await self.layer.call("HGET", game_keys(game_id).state, "z")
        return int(seed or 0), await self.read_actions(game_id)

    async def commit(self, **action: Any) -> CommitResult:
        """Commit one action (the arguments are commit_args')."""
        return await self.run_commit(self.commit_args(**action))

    async def run_commit(self, call: CommitCall) -> CommitResult:
        """Run a commit made by commit_args; Redis lacking the script loads it. The script is
        sent straight on the pipe and its reply's future awaited here (layer.run's frames cost
        ~10% of the rules service's CPU a move in tools/bench_rules_batches.py); a cluster, no
        connection yet or a missing script take layer.run."""
        keys, args = call
        commit = script("rules/commit")
        future = self.layer.start(commit, keys, args)
        if future is not None:
            result = self.commit_result(await future)
            if not isinstance(result, NoScript):
                return result
        result = self.commit_result(await self.layer.run(commit, keys, args))
        assert not isinstance(result, NoScript)  # run() loads a script Redis lacks
        return result

    def start_commit(self, call: CommitCall) -> asyncio.Future[Any] | None:
        """run_commit() without waiting, for a caller with several commits in flight in one task:
        the future of the script's raw reply (read it with commit_result), or None where only
        run_commit() will do (no connection yet, a cluster)."""
        keys, args = call
        return self.layer.start(script("rules/commit"), keys, args)

    @staticmethod
    def commit_result(reply: Any) -> CommitResult | NoScript:
        """A commit's reply read; NoScript when Redis did not know the script (a started commit:
        commit() loads it), ResponseError for any other error reply."""
        if isinstance(reply, RespError):
            message = str(reply)
            if message.startswith("NOSCRIPT"):
                return NoScript()
            raise ResponseError(message)
        code = int(reply[0])
        if code == 0:
            return Committed(int(reply[1]) if len(reply) > 1 else None)
        if code == 1:
            return Replayed(bytes(reply[1]), bytes(reply[2] or b""))
        if code == 2:
            return Conflict(int(reply[1]))
        return Missing()

    def commit_args(
        self,
        *,
        game_id: str,
        expected_version: int,
        request_id: str,
        state: bytes,
        events: Sequence[NewEvent] | Sequence[tuple[str, bytes]],
        response: bytes,
        over: bool,
        publish: bytes,
        action: bytes,
        status: bytes = b"",
        digest: bytes = b"",
        window_from: int | None = None,
        clock: ClockArm | None = None,
        keys: CommitKeys | None = None,
    ) -> CommitCall:
        """The commit script's keys and arguments for one action against `expected_version`.
        `status` (the GameStatus after it) is kept on each event; `digest` identifies the request
        beside its stored answer; `window_from` is the version the commuting window in force after
        the action began at (None: none); `keys` is commit_keys(game_id), when the caller kept it."""
        if keys is None:
            keys = commit_keys(game_id)
        args: list[Any] = [
            expected_version,
            expected_version + 1,  # the new version as a string for Redis (no Lua number formatting)
            request_id,
            state,
            response,
            1 if over else 0,
            # A running game lives at least as long as its clock (a correspondence clock asks for
            # more than the live TTL: 14 days a move and a vacation).
            self.finished_ttl_s if over else (self.live_ttl_s if clock is None else max(self.live_ttl_s, clock.ttl_s)),
            keys.channel,
            publish,
            action,
            status,
            digest,
            "" if window_from is None else window_from,
        ]
        if clock is None:
            script_keys = keys.game
            args.extend(("", "", "", "", "", "", "", ""))
        else:
            script_keys = keys.clocked
            due = clock.now_ms + clock.per_move_ms  # the deadline a new turn gets (clocks/arm_function)
            args.extend(
                (
                    game_id,
                    clock.to_act,
                    clock.per_move_ms,
                    clock.now_ms,
                    clock.ttl_s,
                    1 if clock.keep_meta else 0,
                    due,
                    clock.stamp or deadline_field(due),
                )
            )
        for event_id, payload in events:
            args.extend((event_id, payload))
        return script_keys, args
