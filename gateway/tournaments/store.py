"""Tournaments in Redis. Every key carries the hash tag ``{tour}`` (kit/redis/keys.py, the
tournaments section), so each script (kit/redis/lua/tournaments/) touches one slot (Redis Cluster
too); tournaments are few and small, one slot holds them all.

- ``tafel:{tour}:t:<id>`` hash: ``spec`` (JSON, never changes), ``status`` (registering, running,
  finished, cancelled), ``state`` (the engine's JSON once started), ``rev`` (bumped by every state
  write: compare-and-set), ``rv`` (bumped by every registration change), ``seq`` (registration
  order), ``started_ms``, ``finished_ms``.
- ``...:t:<id>:reg`` zset player -> registration order; ``...:t:<id>:who`` hash player -> JSON.
- ``...:t:<id>:started`` hash: tournament game ids whose games were created.
- ``...:t:<id>:wave`` string: the replica driving an arena's waves (a lease of a few seconds).
- ``...:t:<id>:events`` stream: TournamentEvent bytes (field ``e``), written in the same script as
  the state change they describe, so watchers see each change exactly once.
- ``tafel:{tour}:list:all`` and ``tafel:{tour}:list:<status>`` zsets by creation time;
  ``tafel:{tour}:due`` zset: registering tournaments by start time; ``tafel:{tour}:running`` set.
- ``tafel:{tour}:req:<digest of organiser and request id>``: the id a CreateTournament request made (1 day).
- Directors: ``...:t:<id>:audit`` list of JSON entries (every director's action, oldest first);
  ``...:t:<id>:banned`` set; ``...:t:<id>:ann:<request id>`` an announcement's recipients (1 day);
  ``...:t:<id>:announced`` zset of the last hour's announcements (the rate); ``...:t:<id>:noticed``
  set: notices that all went out ("started:<round>", "soon:<round>"), so a restart sends no more.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tafel.play.v1 import play_pb2, tournaments_pb2

from gateway.stream_rewrite import replace_player_in_stream
from gateway.tournaments.engine import Schedule
from gateway.tournaments.model import MIN_TABLE, Config, Format, State, from_json, to_json
from kit.redis.keys import (
    TOURNAMENTS_DUE,
    TOURNAMENTS_RUNNING,
    tournament_events_key,
    tournament_key,
    tournament_list_key,
)
from kit.redis.layer import RedisLayer
from kit.redis.pipe import Command
from kit.redis.replies import pairs, text
from kit.redis.scripts import script

EVENTS_MAXLEN = 20_000
REQUEST_TTL_S = 86_400
STATUSES = ("registering", "running", "finished", "cancelled")
ANNOUNCE_LIMIT, ANNOUNCE_WINDOW_MS = 10, 3_600_000
PARSED_KEPT = 32  # tournaments whose parsed state a process keeps (the first kept goes first)


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
    largest_table: int  # tables: the game's most seats (DescribeGame max_seats); else 0
    per_move_ms: int
    capacity: int
    starts_at_ms: int  # 0 = the organiser starts it
    organiser: tuple[str, str, bool]
    rated: bool
    created_ms: int
    # Directors' settings (CreateTournamentRequest / UpdateTournament); the defaults are a
    # tournament's as it was before they existed.
    reg_opens_ms: int = 0
    reg_closes_ms: int = 0
    min_rating: int = 0
    min_rated_games: int = 0
    invitation_code: str = ""  # "" = none needed
    late_join_until_round: int = 0
    round_times_ms: tuple[int, ...] = ()  # rounds 2, 3, ...
    manual_rounds: bool = False
    arena_ms: int = 0  # an arena's duration (0: other formats)

    @property
    def schedule(self) -> Schedule:
        return Schedule(self.round_times_ms, self.manual_rounds)

    @property
    def min_players(self) -> int:
        return MIN_TABLE if self.format is Format.TABLES else 2

    def config(self) -> Config:
        return Config(self.format, rounds=self.rounds, table_size=self.table_size, largest_table=self.largest_table)

    def encode(self) -> str:
        return json.dumps(
            {
                "n": self.name,
                "g": self.game,
                "o": self.options.hex(),
                "f": self.format.value,
                "r": self.rounds,
                "t": self.table_size,
                "h": self.largest_table,
                "m": self.per_move_ms,
                "c": self.capacity,
                "s": self.starts_at_ms,
                "org": list(self.organiser),
                "rated": int(self.rated),
                "at": self.created_ms,
                "ro": self.reg_opens_ms,
                "rc": self.reg_closes_ms,
                "mr": self.min_rating,
                "mg": self.min_rated_games,
                "ic": self.invitation_code,
                "lj": self.late_join_until_round,
                "rt": list(self.round_times_ms),
                "man": int(self.manual_rounds),
                "ad": self.arena_ms,
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
            # Written before "h" existed: tables no larger than the preferred size.
            largest_table=int(d["h"] if "h" in d else d["t"]),
            per_move_ms=int(d["m"]),
            capacity=int(d["c"]),
            starts_at_ms=int(d["s"]),
            organiser=(str(org[0]), str(org[1]), bool(org[2])),
            rated=bool(d["rated"]),
            created_ms=int(d["at"]),
            reg_opens_ms=int(d.get("ro", 0)),
            reg_closes_ms=int(d.get("rc", 0)),
            min_rating=int(d.get("mr", 0)),
            min_rated_games=int(d.get("mg", 0)),
            invitation_code=str(d.get("ic", "")),
            late_join_until_round=int(d.get("lj", 0)),
            round_times_ms=tuple(int(x) for x in d.get("rt", ())),
            manual_rounds=bool(d.get("man", 0)),
            arena_ms=int(d.get("ad", 0)),
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


def stamp(event: tournaments_pb2.TournamentEvent) -> bytes:
    if not event.HasField("at"):
        event.at.FromMilliseconds(now_ms())
    return event.SerializeToString()


class TournamentStore:
    def __init__(self, redis: RedisLayer) -> None:
        self.redis = redis
        # The state last parsed per tournament, by its JSON: every read of a big tournament
        # (GetTournament, GetStandings, a round's advance) parsed the whole of it again (a
        # 2,000-player arena's 0.7 MB: ~0.1 s of the event loop); states are immutable values.
        self._parsed: dict[str, tuple[bytes, State]] = {}

    async def create(self, spec: Spec, request_key: str) -> str:
        """The id of the tournament this request made: `spec`'s, or an earlier one's on a retry;
        "" when the id is taken."""
        reply = await self.redis.run(
            script("tournaments/create"),
            [
                request_key,
                tournament_key(spec.tournament_id),
                tournament_list_key(),
                tournament_list_key("registering"),
                TOURNAMENTS_DUE,
            ],
            [spec.tournament_id, spec.encode(), spec.created_ms, spec.starts_at_ms, REQUEST_TTL_S],
        )
        return text(reply)

    async def replace_player(self, player_id: str, new_id: str, new_name: str) -> None:
        """An erased account: every tournament it was in names `new_id` / `new_name` instead
        (registration, state, events, a ban, the directors' audit), its results kept."""
        new = play_pb2.Player(player_id=new_id, username=new_name)
        for raw_tid in await self.redis.call("ZRANGE", tournament_list_key(), 0, -1):
            tid = text(raw_tid)
            who, score, state, spec, banned, audit = await self.redis.many(
                [
                    ("HGET", tournament_key(tid, "who"), player_id),
                    ("ZSCORE", tournament_key(tid, "reg"), player_id),
                    ("HGET", tournament_key(tid), "state"),
                    ("HGET", tournament_key(tid), "spec"),
                    ("SISMEMBER", tournament_key(tid, "banned"), player_id),
                    ("LRANGE", tournament_key(tid, "audit"), 0, -1),
                ]
            )
            quoted = f'"{player_id}"'.encode()
            in_state = state is not None and quoted in state
            in_spec = spec is not None and quoted in spec  # the organiser
            commands: list[Command] = []
            if who is not None:
                guest = bool(json.loads(who)[2])
                commands += [
                    ("HDEL", tournament_key(tid, "who"), player_id),
                    ("HSET", tournament_key(tid, "who"), new_id, json.dumps([new_id, new_name, guest])),
                ]
            if score is not None:
                commands += [
                    ("ZREM", tournament_key(tid, "reg"), player_id),
                    ("ZADD", tournament_key(tid, "reg"), score, new_id),
                ]
            if in_state:
                replaced = from_json(text(state).replace(f'"{player_id}"', f'"{new_id}"'))
                entrants = tuple(
                    dataclasses.replace(e, username=new_name) if e.player_id == new_id else e for e in replaced.entrants
                )
                commands.append(
                    ("HSET", tournament_key(tid), "state", to_json(dataclasses.replace(replaced, entrants=entrants)))
                )
                # A new revision: a writer holding the state read before (an arena's driver keeps
                # it between waves) must read it again rather than write the old names back.
                commands.append(("HINCRBY", tournament_key(tid), "rev", 1))
            if in_spec:
                decoded = Spec.decode(tid, text(spec).replace(f'"{player_id}"', f'"{new_id}"'))
                organiser = (new_id, new_name, decoded.organiser[2])
                commands.append(
                    ("HSET", tournament_key(tid), "spec", dataclasses.replace(decoded, organiser=organiser).encode())
                )
            if banned:
                commands += [
                    ("SREM", tournament_key(tid, "banned"), player_id),
                    ("SADD", tournament_key(tid, "banned"), new_id),
                ]
            if any(player_id.encode() in row for row in audit):
                rows = [_audit_renamed(text(row), player_id, new_id, new_name) for row in audit]
                commands += [("DEL", tournament_key(tid, "audit")), ("RPUSH", tournament_key(tid, "audit"), *rows)]
            if commands:
                await self.redis.many(commands)
            await replace_player_in_stream(
                self.redis, tournament_events_key(tid), tournaments_pb2.TournamentEvent, player_id, new
            )

    async def open_ids(self) -> list[str]:
        """Every tournament registering or running."""
        registering, running = await self.redis.many(
            [("ZRANGE", tournament_list_key("registering"), 0, -1), ("SMEMBERS", TOURNAMENTS_RUNNING)]
        )
        return sorted({text(t) for t in (*registering, *running)})

    async def load(self, tid: str) -> Loaded | None:
        flat_row, order, flat_who = await self.redis.many(
            [
                ("HGETALL", tournament_key(tid)),
                ("ZRANGE", tournament_key(tid, "reg"), 0, -1),
                ("HGETALL", tournament_key(tid, "who")),
            ]
        )
        row, who = pairs(flat_row), pairs(flat_who)
        if not row or b"spec" not in row:
            return None
        spec = Spec.decode(tid, row[b"spec"])
        state = self._parse(tid, row[b"state"]) if row.get(b"state") else None
        players: list[tuple[str, str, bool]] = []
        for member in order:
            raw = who.get(member)
            if raw is not None:
                data = json.loads(raw)
                players.append((str(data[0]), str(data[1]), bool(data[2])))
        return Loaded(
            spec=spec,
            status=text(row.get(b"status", b"")),
            rev=int(row.get(b"rev", 0)),
            registration_version=int(row.get(b"rv", 0)),
            state=state,
            players=tuple(players),
            started_ms=int(row.get(b"started_ms", 0)),
            finished_ms=int(row.get(b"finished_ms", 0)),
        )

    def _parse(self, tid: str, raw: bytes) -> State:
        hit = self._parsed.get(tid)
        if hit is not None and hit[0] == raw:
            return hit[1]
        state = from_json(raw)
        if len(self._parsed) >= PARSED_KEPT and tid not in self._parsed:
            self._parsed.pop(next(iter(self._parsed)))
        self._parsed[tid] = (raw, state)
        return state

    async def join(
        self, tid: str, player: tuple[str, str, bool], capacity: int, event: tournaments_pb2.TournamentEvent
    ) -> int:
        """1 joined, 0 already in, -1 not registering, -2 full, -3 no such tournament, -4 banned."""
        reply = await self.redis.run(
            script("tournaments/join"),
            [
                tournament_key(tid),
                tournament_key(tid, "reg"),
                tournament_key(tid, "who"),
                tournament_events_key(tid),
                tournament_key(tid, "banned"),
            ],
            [player[0], json.dumps(list(player)), capacity, EVENTS_MAXLEN, stamp(event)],
        )
        return int(reply)

    async def unregister(self, tid: str, player_id: str, event: tournaments_pb2.TournamentEvent) -> int:
        """1 left, 0 was not in, -1 not registering, -3 no such tournament."""
        reply = await self.redis.run(
            script("tournaments/unregister"),
            [tournament_key(tid), tournament_key(tid, "reg"), tournament_key(tid, "who"), tournament_events_key(tid)],
            [player_id, EVENTS_MAXLEN, stamp(event)],
        )
        return int(reply)

    async def start(self, loaded: Loaded, state: State, events: Sequence[tournaments_pb2.TournamentEvent]) -> int:
        """1 started, 0 registrations changed meanwhile, -1 not registering any more."""
        tid = loaded.spec.tournament_id
        reply = await self.redis.run(
            script("tournaments/start"),
            [
                tournament_key(tid),
                tournament_events_key(tid),
                TOURNAMENTS_RUNNING,
                tournament_list_key("registering"),
                tournament_list_key("running"),
                TOURNAMENTS_DUE,
            ],
            [
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
        reply = await self.redis.run(
            script("tournaments/save"),
            [
                tournament_key(tid),
                tournament_events_key(tid),
                TOURNAMENTS_RUNNING,
                tournament_list_key("running"),
                tournament_list_key("finished"),
            ],
            [
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
        reply = await self.redis.run(
            script("tournaments/cancel"),
            [
                tournament_key(tid),
                tournament_events_key(tid),
                tournament_list_key("registering"),
                tournament_list_key("cancelled"),
                TOURNAMENTS_DUE,
            ],
            [now_ms(), tid, loaded.spec.created_ms, EVENTS_MAXLEN, stamp(event)],
        )
        return int(reply)

    async def started_games(self, tid: str) -> set[str]:
        raw: Any = await self.redis.call("HKEYS", tournament_key(tid, "started"))
        return {text(k) for k in raw}

    async def mark_started(self, tid: str, game_id: str) -> None:
        await self.redis.call("HSET", tournament_key(tid, "started"), game_id, "1")

    async def wave_lease(self, tid: str, ms: int, holder: str) -> bool:
        """Whether `holder` (a replica) drives an arena's waves: the first to ask holds it, and
        keeps it by asking again within `ms`; when it stops, another takes over. One replica does
        the waves (and keeps the arena parsed) instead of each reading the whole arena every wave."""
        key = tournament_key(tid, "wave")
        if await self.redis.call("SET", key, holder, "NX", "PX", ms):
            return True
        if text(await self.redis.call("GET", key) or b"") != holder:
            return False
        await self.redis.call("PEXPIRE", key, ms)
        return True

    async def revision(self, tid: str) -> tuple[int, str]:
        """A tournament's state revision and status, without reading the state."""
        rev, status = await self.redis.call("HMGET", tournament_key(tid), "rev", "status")
        return int(rev or 0), text(status or b"")

    async def started_among(self, tid: str, game_ids: Sequence[str]) -> set[str]:
        """Which of these games were created (an arena asks about the games it is playing only)."""
        if not game_ids:
            return set()
        raw: Any = await self.redis.call("HMGET", tournament_key(tid, "started"), *game_ids)
        return {gid for gid, hit in zip(game_ids, raw, strict=True) if hit is not None}

    async def due(self, now: int) -> list[str]:
        raw: Any = await self.redis.call("ZRANGEBYSCORE", TOURNAMENTS_DUE, "-inf", now, "LIMIT", 0, 100)
        return [text(x) for x in raw]

    async def running(self) -> list[str]:
        raw: Any = await self.redis.call("SMEMBERS", TOURNAMENTS_RUNNING)
        return sorted(text(x) for x in raw)

    # -- directors ----------------------------------------------------------------------------------

    async def direct(
        self,
        loaded: Loaded,
        *,
        events: Sequence[tournaments_pb2.TournamentEvent] = (),
        audit: str = "",
        spec: Spec | None = None,
        state: State | None = None,
        starts_at_ms: int = -1,
        add: tuple[str, str, bool] | None = None,
        remove: str = "",
        ban: str = "",
    ) -> int:
        """A director's change against what `loaded` read (direct.lua): 1 done, 0 changed meanwhile
        (reload and recompute), -1 its status changed. `starts_at_ms`: -1 unchanged, 0 not due."""
        tid = loaded.spec.tournament_id
        version = loaded.registration_version if loaded.status == "registering" else loaded.rev
        reply = await self.redis.run(
            script("tournaments/direct"),
            [
                tournament_key(tid),
                tournament_events_key(tid),
                tournament_key(tid, "audit"),
                tournament_key(tid, "reg"),
                tournament_key(tid, "who"),
                tournament_key(tid, "banned"),
                TOURNAMENTS_RUNNING,
                tournament_list_key("running"),
                tournament_list_key("finished"),
                TOURNAMENTS_DUE,
            ],
            [
                loaded.status,
                version,
                spec.encode() if spec is not None else "",
                to_json(state) if state is not None else "",
                1 if state is not None and state.finished and loaded.status == "running" else 0,
                now_ms(),
                tid,
                loaded.spec.created_ms,
                starts_at_ms,
                audit,
                add[0] if add else "",
                json.dumps(list(add)) if add else "",
                remove,
                ban,
                EVENTS_MAXLEN,
                *(stamp(e) for e in events),
            ],
        )
        return int(reply)

    async def banned(self, tid: str, player_id: str) -> bool:
        return bool(await self.redis.call("SISMEMBER", tournament_key(tid, "banned"), player_id))

    async def announce(
        self, tid: str, request_id: str, recipients: int, audit: str, event: tournaments_pb2.TournamentEvent
    ) -> tuple[int, int]:
        """(1, recipients) sent before, (0, recipients) sent now, (-1, retry_after_ms) too many."""
        reply: Any = await self.redis.run(
            script("tournaments/announce"),
            [
                tournament_key(tid, f"ann:{request_id}"),
                tournament_key(tid, "announced"),
                tournament_events_key(tid),
                tournament_key(tid, "audit"),
            ],
            [
                now_ms(),
                ANNOUNCE_WINDOW_MS,
                ANNOUNCE_LIMIT,
                recipients,
                REQUEST_TTL_S,
                EVENTS_MAXLEN,
                audit,
                stamp(event),
                request_id,
            ],
        )
        return int(reply[0]), int(reply[1])

    async def audit(self, tid: str) -> list[dict[str, Any]]:
        raw: Any = await self.redis.call("LRANGE", tournament_key(tid, "audit"), 0, -1)
        return [json.loads(x) for x in raw]

    async def noticed(self, tid: str, what: str) -> bool:
        """Whether the notices named `what` (a round's start, a round starting soon) all went out."""
        return bool(await self.redis.call("SISMEMBER", tournament_key(tid, "noticed"), what))

    async def mark_noticed(self, tid: str, what: str) -> None:
        await self.redis.call("SADD", tournament_key(tid, "noticed"), what)

    async def due_within(self, now: int, ahead_ms: int) -> list[str]:
        """Registering tournaments that start by themselves within `ahead_ms`."""
        raw: Any = await self.redis.call("ZRANGEBYSCORE", TOURNAMENTS_DUE, now, now + ahead_ms, "LIMIT", 0, 100)
        return [text(x) for x in raw]


def audit_entry(director: tuple[str, str, bool], action: str, detail: str, reason: str = "") -> str:
    return json.dumps(
        {"at": now_ms(), "by": list(director), "action": action, "detail": detail, "reason": reason},
        separators=(",", ":"),
    )


def _audit_renamed(row: str, player_id: str, new_id: str, new_name: str) -> str:
    entry = json.loads(row)
    if entry["by"][0] == player_id:
        entry["by"] = [new_id, new_name, entry["by"][2]]
    entry["detail"] = str(entry["detail"]).replace(player_id, new_id)
    return json.dumps(entry, separators=(",", ":"))
