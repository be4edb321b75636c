"""Tournaments in Redis. Every key carries the hash tag ``{tour}``, so each script below touches one
slot (Redis Cluster too); tournaments are few and small, one slot holds them all.

- ``tafel:{tour}:t:<id>`` hash: ``spec`` (JSON, never changes), ``status`` (registering, running,
  finished, cancelled), ``state`` (the engine's JSON once started), ``rev`` (bumped by every state
  write: compare-and-set), ``rv`` (bumped by every registration change), ``seq`` (registration
  order), ``started_ms``, ``finished_ms``.
- ``...:t:<id>:reg`` zset player -> registration order; ``...:t:<id>:who`` hash player -> JSON.
- ``...:t:<id>:started`` hash: tournament game ids whose games were created.
- ``...:t:<id>:events`` stream: TournamentEvent bytes (field ``e``), written in the same script as
  the state change they describe, so watchers see each change exactly once.
- ``tafel:{tour}:list:all`` and ``tafel:{tour}:list:<status>`` zsets by creation time;
  ``tafel:{tour}:due`` zset: registering tournaments by start time; ``tafel:{tour}:running`` set.
- ``tafel:{tour}:req:<organiser>:<request id>``: the id a CreateTournament request made (1 day).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from tafel.play.v1 import tournaments_pb2

from gateway.tournaments.model import Config, Format, State, from_json, to_json

PREFIX = "tafel:{tour}"
EVENTS_MAXLEN = 20_000
REQUEST_TTL_S = 86_400
STATUSES = ("registering", "running", "finished", "cancelled")


def t_key(tid: str, part: str = "") -> str:
    return f"{PREFIX}:t:{tid}" + (f":{part}" if part else "")


def events_key(tid: str) -> str:
    return t_key(tid, "events")


def list_key(status: str = "all") -> str:
    return f"{PREFIX}:list:{status}"


DUE_KEY = f"{PREFIX}:due"
RUNNING_KEY = f"{PREFIX}:running"


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Spec:
    tournament_id: str
    name: str
    game: str
    options: bytes
    format: Format
    rounds: int
    table_size: int
    per_move_ms: int
    capacity: int
    starts_at_ms: int  # 0 = the organiser starts it
    organiser: tuple[str, str, bool]
    rated: bool
    created_ms: int

    @property
    def min_players(self) -> int:
        return 3 if self.format is Format.TABLES else 2

    def config(self) -> Config:
        return Config(self.format, rounds=self.rounds, table_size=self.table_size)

    def encode(self) -> str:
        return json.dumps(
            {
                "n": self.name,
                "g": self.game,
                "o": self.options.hex(),
                "f": self.format.value,
                "r": self.rounds,
                "t": self.table_size,
                "m": self.per_move_ms,
                "c": self.capacity,
                "s": self.starts_at_ms,
                "org": list(self.organiser),
                "rated": int(self.rated),
                "at": self.created_ms,
            },
            separators=(",", ":"),
        )

    @classmethod
    def decode(cls, tid: str, raw: bytes | str) -> Spec:
        d = json.loads(raw)
        org = d["org"]
        return cls(
            tournament_id=tid,
            name=str(d["n"]),
            game=str(d["g"]),
            options=bytes.fromhex(d["o"]),
            format=Format(d["f"]),
            rounds=int(d["r"]),
            table_size=int(d["t"]),
            per_move_ms=int(d["m"]),
            capacity=int(d["c"]),
            starts_at_ms=int(d["s"]),
            organiser=(str(org[0]), str(org[1]), bool(org[2])),
            rated=bool(d["rated"]),
            created_ms=int(d["at"]),
        )


@dataclass(frozen=True)
class Loaded:
    spec: Spec
    status: str
    rev: int
    registration_version: int
    state: State | None
    players: tuple[tuple[str, str, bool], ...]  # registration order
    started_ms: int
    finished_ms: int


CREATE_LUA = """
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
if redis.call('EXISTS', KEYS[2]) == 1 then return '' end
redis.call('HSET', KEYS[2], 'spec', ARGV[2], 'status', 'registering', 'rev', 0, 'rv', 0, 'seq', 0)
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
if tonumber(ARGV[4]) > 0 then redis.call('ZADD', KEYS[5], ARGV[4], ARGV[1]) end
redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[5]))
return ARGV[1]
"""

# KEYS: t, reg, who, events. ARGV: player, player json, capacity, maxlen, event.
JOIN_LUA = """
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return -3 end
if status ~= 'registering' then return -1 end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return -2 end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('ZADD', KEYS[2], seq, ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[1], 'rv', 1)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*', 'e', ARGV[5])
return 1
"""

# KEYS: t, reg, who, events. ARGV: player, maxlen, event.
UNREGISTER_LUA = """
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return -3 end
if status ~= 'registering' then return -1 end
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HINCRBY', KEYS[1], 'rv', 1)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[2], '*', 'e', ARGV[3])
return 1
"""

# KEYS: t, events, running, list:registering, list:running, due.
# ARGV: registration version, state, now, id, created, maxlen, events...
START_LUA = """
if redis.call('HGET', KEYS[1], 'status') ~= 'registering' then return -1 end
if tonumber(redis.call('HGET', KEYS[1], 'rv') or '0') ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'status', 'running', 'state', ARGV[2], 'rev', 1, 'started_ms', ARGV[3])
redis.call('SADD', KEYS[3], ARGV[4])
redis.call('ZREM', KEYS[4], ARGV[4])
redis.call('ZADD', KEYS[5], ARGV[5], ARGV[4])
redis.call('ZREM', KEYS[6], ARGV[4])
for i = 7, #ARGV do redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*', 'e', ARGV[i]) end
return 1
"""

# KEYS: t, events, running, list:running, list:finished.
# ARGV: expected rev, state, finished 0/1, now, id, created, maxlen, events...
SAVE_LUA = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return -1 end
if tonumber(redis.call('HGET', KEYS[1], 'rev') or '0') ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'rev', 1)
if ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], 'status', 'finished', 'finished_ms', ARGV[4])
  redis.call('SREM', KEYS[3], ARGV[5])
  redis.call('ZREM', KEYS[4], ARGV[5])
  redis.call('ZADD', KEYS[5], ARGV[6], ARGV[5])
end
for i = 8, #ARGV do redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[7], '*', 'e', ARGV[i]) end
return 1
"""

# KEYS: t, events, list:registering, list:cancelled, due. ARGV: now, id, created, maxlen, event.
CANCEL_LUA = """
if redis.call('HGET', KEYS[1], 'status') ~= 'registering' then return -1 end
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'finished_ms', ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[2])
redis.call('ZREM', KEYS[5], ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'e', ARGV[5])
return 1
"""


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def stamp(event: tournaments_pb2.TournamentEvent) -> bytes:
    if not event.HasField("at"):
        event.at.FromMilliseconds(now_ms())
    return event.SerializeToString()


class TournamentStore:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._create = redis.register_script(CREATE_LUA)
        self._join = redis.register_script(JOIN_LUA)
        self._unregister = redis.register_script(UNREGISTER_LUA)
        self._start = redis.register_script(START_LUA)
        self._save = redis.register_script(SAVE_LUA)
        self._cancel = redis.register_script(CANCEL_LUA)

    async def create(self, spec: Spec, request_key: str) -> str:
        """The id of the tournament this request made: `spec`'s, or an earlier one's on a retry;
        "" when the id is taken."""
        reply = await self._create(
            keys=[request_key, t_key(spec.tournament_id), list_key(), list_key("registering"), DUE_KEY],
            args=[spec.tournament_id, spec.encode(), spec.created_ms, spec.starts_at_ms, REQUEST_TTL_S],
        )
        return _text(reply)

    async def load(self, tid: str) -> Loaded | None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(t_key(tid))
        pipe.zrange(t_key(tid, "reg"), 0, -1)
        pipe.hgetall(t_key(tid, "who"))
        row, order, who = await pipe.execute()
        if not row or b"spec" not in row:
            return None
        spec = Spec.decode(tid, row[b"spec"])
        state = from_json(row[b"state"]) if row.get(b"state") else None
        players: list[tuple[str, str, bool]] = []
        for member in order:
            raw = who.get(member)
            if raw is not None:
                data = json.loads(raw)
                players.append((str(data[0]), str(data[1]), bool(data[2])))
        return Loaded(
            spec=spec,
            status=_text(row.get(b"status", b"")),
            rev=int(row.get(b"rev", 0)),
            registration_version=int(row.get(b"rv", 0)),
            state=state,
            players=tuple(players),
            started_ms=int(row.get(b"started_ms", 0)),
            finished_ms=int(row.get(b"finished_ms", 0)),
        )

    async def join(
        self, tid: str, player: tuple[str, str, bool], capacity: int, event: tournaments_pb2.TournamentEvent
    ) -> int:
        """1 joined, 0 already in, -1 not registering, -2 full, -3 no such tournament."""
        reply = await self._join(
            keys=[t_key(tid), t_key(tid, "reg"), t_key(tid, "who"), events_key(tid)],
            args=[player[0], json.dumps(list(player)), capacity, EVENTS_MAXLEN, stamp(event)],
        )
        return int(reply)

    async def unregister(self, tid: str, player_id: str, event: tournaments_pb2.TournamentEvent) -> int:
        """1 left, 0 was not in, -1 not registering, -3 no such tournament."""
        reply = await self._unregister(
            keys=[t_key(tid), t_key(tid, "reg"), t_key(tid, "who"), events_key(tid)],
            args=[player_id, EVENTS_MAXLEN, stamp(event)],
        )
        return int(reply)

    async def start(self, loaded: Loaded, state: State, events: Sequence[tournaments_pb2.TournamentEvent]) -> int:
        """1 started, 0 registrations changed meanwhile, -1 not registering any more."""
        tid = loaded.spec.tournament_id
        reply = await self._start(
            keys=[
                t_key(tid),
                events_key(tid),
                RUNNING_KEY,
                list_key("registering"),
                list_key("running"),
                DUE_KEY,
            ],
            args=[
                loaded.registration_version,
                to_json(state),
                now_ms(),
                tid,
                loaded.spec.created_ms,
                EVENTS_MAXLEN,
                *(stamp(e) for e in events),
            ],
        )
        return int(reply)

    async def save(self, loaded: Loaded, state: State, events: Sequence[tournaments_pb2.TournamentEvent]) -> int:
        """1 saved, 0 someone else saved first (reload), -1 not running."""
        tid = loaded.spec.tournament_id
        reply = await self._save(
            keys=[t_key(tid), events_key(tid), RUNNING_KEY, list_key("running"), list_key("finished")],
            args=[
                loaded.rev,
                to_json(state),
                1 if state.finished else 0,
                now_ms(),
                tid,
                loaded.spec.created_ms,
                EVENTS_MAXLEN,
                *(stamp(e) for e in events),
            ],
        )
        return int(reply)

    async def cancel(self, loaded: Loaded, event: tournaments_pb2.TournamentEvent) -> int:
        tid = loaded.spec.tournament_id
        reply = await self._cancel(
            keys=[t_key(tid), events_key(tid), list_key("registering"), list_key("cancelled"), DUE_KEY],
            args=[now_ms(), tid, loaded.spec.created_ms, EVENTS_MAXLEN, stamp(event)],
        )
        return int(reply)

    async def started_games(self, tid: str) -> set[str]:
        raw: Any = await self.redis.hkeys(t_key(tid, "started"))
        return {_text(k) for k in raw}

    async def mark_started(self, tid: str, game_id: str) -> None:
        await self.redis.hset(t_key(tid, "started"), game_id, "1")

    async def due(self, now: int) -> list[str]:
        raw: Any = await self.redis.zrangebyscore(DUE_KEY, "-inf", now, start=0, num=100)
        return [_text(x) for x in raw]

    async def running(self) -> list[str]:
        raw: Any = await self.redis.smembers(RUNNING_KEY)
        return sorted(_text(x) for x in raw)
