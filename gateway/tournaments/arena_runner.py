"""Driving arenas: a wave every few seconds per running arena, on every gateway replica.

A wave (`TournamentRunner.advance`, which hands an arena here under its per-tournament lock) reads
the arena, asks Redis which of its games being played have a record (EXISTS, one pipeline; only
those records are read), lets the pure `arena.wave` record the results and pair the free players,
and saves state and events with the package's compare-and-set (`store.save`; on a conflict it reads
again and recomputes). Then it makes sure every game being played exists: game ids are fixed per
pairing (`<tid>-r0b<n>`) and `GameDirectory.start_game` is idempotent per id, so a retried wave, a
second replica or a restart between the save and the start makes the same games, never two.

The game-end hook does not start a wave per game (a 2,000-player arena ends games by the dozen a
second): the loop here is the arena's clock (`TAFEL_ARENA_WAVE_S`). Events per wave: each game
decided (`game_finished`, round 0), each game paired (`arena_game_started`), live standings
(`standings_changed`, the first `STANDINGS_EVENT_TOP` places, at most every `TAFEL_ARENA_STANDINGS_S`;
GetStandings has them all), and at the end `finished` with every place.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
from collections.abc import Callable
from typing import Any, Protocol

import grpc
from tafel.play.v1 import play_pb2, tournaments_pb2

from gateway.tournaments import arena, engine, messages
from gateway.tournaments.model import Format, Game, Result, State
from gateway.tournaments.store import Loaded, TournamentStore, now_ms
from kit.errors import Refused, invalid
from kit.loops import Loop
from kit.redis.keys import record_key
from kit.redis.layer import RedisLayer

log = logging.getLogger("tafel.gateway.tournaments")

ATTEMPTS = 50
STANDINGS_EVENT_TOP = 100
MIN_DURATION_MS, MAX_DURATION_MS = 5 * 60_000, 24 * 3_600_000


def is_arena_game(game_id: str) -> bool:
    """An arena game's id names round 0 (`<tid>-r0b<n>`)."""
    return "-r0b" in game_id


def duration_ms(seconds: int, nanos: int, *, shortest_ms: int = MIN_DURATION_MS) -> int:
    """An arena's duration from CreateTournamentRequest.arena_duration: 5 minutes to 24 hours
    (`shortest_ms` lower in tests: TAFEL_ARENA_MIN_S), else BAD_ARENA_DURATION."""
    ms = seconds * 1000 + nanos // 1_000_000
    if not shortest_ms <= ms <= MAX_DURATION_MS:
        raise invalid("BAD_ARENA_DURATION", "an arena lasts 5 minutes to 24 hours", field="arena_duration")
    return ms


class ArenaHost(Protocol):
    """What the driver uses of TournamentRunner (which owns it): its Redis, store, lock-holding
    advance (which hands an arena back to `wave`) and game start."""

    redis: RedisLayer
    store: TournamentStore

    async def advance(self, tid: str) -> None: ...

    async def _start_game(self, loaded: Loaded, state: State, game_id: str, g: Game) -> None: ...


class ArenaDriver:
    def __init__(
        self,
        runner: ArenaHost,
        *,
        result_of: Callable[[play_pb2.GameRecord], Result],
        wave_s: float = 2.0,
        standings_s: float = 5.0,
        shortest_s: float = 300.0,
    ) -> None:
        self.runner = runner
        self.result_of = result_of
        self.standings_ms = int(standings_s * 1000)
        self.shortest_ms = int(shortest_s * 1000)
        self.loop = Loop("arena waves", self._tick, every_s=wave_s, log=log)
        # One replica drives each arena while it lives (a lease it renews every wave; a few waves
        # without it and another takes over) and keeps the arena as it last saved it: a wave then
        # reads the revision, not the whole state (a 2,000-player arena's JSON is most of a wave).
        self.holder = secrets.token_hex(8)
        self.lease_ms = max(1, int(wave_s * 2500))
        self._kept: dict[str, Loaded] = {}
        # Running tournaments seen here that are (not) arenas (a spec never changes its format).
        self._other: set[str] = set()
        self._arenas: set[str] = set()

    async def _tick(self) -> None:
        failed: Exception | None = None
        for tid in await self.runner.store.running():
            if tid in self._other or not await self.runner.store.wave_lease(tid, self.lease_ms, self.holder):
                self._kept.pop(tid, None)  # another replica drives it: what is kept here goes stale
                continue
            try:
                await self.runner.advance(tid)
            except Exception as error:
                failed = failed or error
        if failed is not None:
            raise failed

    def not_arena(self, tid: str) -> None:
        self._other.add(tid)
        if len(self._other) > 10_000:
            self._other.clear()
        if len(self._arenas) > 10_000:
            self._arenas.clear()

    def drives(self, tid: str) -> bool:
        """Whether `tid` is an arena, so its waves come from this loop (on whichever replica holds
        its lease): the tournament sweep leaves it alone."""
        return tid in self._arenas

    def keeps(self, tid: str) -> bool:
        """Whether this replica keeps the arena parsed (TournamentRunner.advance then calls
        `wave_kept` instead of reading the state)."""
        return tid in self._kept

    async def wave_kept(self, tid: str) -> None:
        """A wave from the arena as kept here when no one has written it since, else as read."""
        kept = self._kept.get(tid)
        if kept is not None and await self.runner.store.revision(tid) == (kept.rev, "running"):
            await self.wave(kept)
            return
        self._kept.pop(tid, None)
        loaded = await self.runner.store.load(tid)
        if loaded is not None and loaded.state is not None and loaded.state.arena is not None:
            await self.wave(loaded)

    # -- a wave -------------------------------------------------------------------------------------

    async def wave(self, loaded: Loaded) -> None:
        """One wave (the caller holds the tournament's lock): results, pairings, the end; then the
        games being played are made sure to exist."""
        tid = loaded.spec.tournament_id
        self._arenas.add(tid)
        current: Loaded | None = loaded
        saved: State | None = None
        for _ in range(ATTEMPTS):
            if current is None or current.status != "running" or current.state is None or current.state.finished:
                self._kept.pop(tid, None)
                return
            state = current.state
            results = await self._results(tid, state)
            now = now_ms()
            ends = current.started_ms + current.spec.arena_ms
            step = arena.wave(state, results, now_ms=now, ends_ms=ends, hold=state.paused)
            new = step.state
            if new is state:
                saved = state
                self._kept[tid] = current
                break
            events: list[tournaments_pb2.TournamentEvent] = []
            for g in step.finished:
                events.append(
                    tournaments_pb2.TournamentEvent(
                        game_finished=tournaments_pb2.TournamentGameFinished(
                            round=arena.ROUND, game=messages.game(tid, new, arena.ROUND, g)
                        )
                    )
                )
            for g in step.paired:
                events.append(
                    tournaments_pb2.TournamentEvent(
                        arena_game_started=tournaments_pb2.TournamentArenaGameStarted(
                            game=messages.game(tid, new, arena.ROUND, g)
                        )
                    )
                )
            if new.finished:
                final = messages.standings(new)
                events.append(
                    tournaments_pb2.TournamentEvent(
                        standings_changed=tournaments_pb2.TournamentStandingsChanged(standings=final)
                    )
                )
                events.append(
                    tournaments_pb2.TournamentEvent(finished=tournaments_pb2.TournamentFinished(standings=final))
                )
            elif step.finished and now - arena.arena_of(new).standings_ms >= self.standings_ms:
                new = arena.with_standings_time(new, now)
                events.append(
                    tournaments_pb2.TournamentEvent(
                        standings_changed=tournaments_pb2.TournamentStandingsChanged(
                            standings=messages.standings(new, STANDINGS_EVENT_TOP)
                        )
                    )
                )
            reply = await self.runner.store.save(current, new, events)
            if reply == 1:
                saved = new
                if new.finished:
                    self._kept.pop(tid, None)
                else:  # the script bumped the revision by one
                    self._kept[tid] = dataclasses.replace(current, rev=current.rev + 1, state=new)
                break
            if reply == -1:
                self._kept.pop(tid, None)
                return
            current = await self.runner.store.load(tid)
        else:
            raise Refused(grpc.StatusCode.ABORTED, "BUSY", "the arena kept changing")
        if saved is not None and current is not None and not saved.finished:
            await self._ensure_games(current, saved)

    async def _results(self, tid: str, state: State) -> dict[int, Result]:
        """The results of the games being played that have ended (their record exists)."""
        playing = arena.playing(state)
        if not playing:
            return {}
        ids = [engine.game_id(tid, arena.ROUND, g) for g in playing]
        exists: list[Any] = await self.runner.redis.many([("EXISTS", record_key(gid)) for gid in ids])
        ended = [(g, gid) for g, gid, hit in zip(playing, ids, exists, strict=True) if int(hit)]
        if not ended:
            return {}
        raws: list[Any] = await self.runner.redis.many([("GET", record_key(gid)) for _, gid in ended])
        out: dict[int, Result] = {}
        for (g, gid), raw in zip(ended, raws, strict=True):
            if raw is None:
                continue
            record = play_pb2.GameRecord.FromString(raw)
            seated = [p.player.player_id for p in record.players]
            if seated != list(g.seats) or len(record.outcome.ranks) != len(g.seats):
                log.warning("arena game record does not match its pairing", extra={"game_id": gid})
                continue
            out[g.board] = self.result_of(record)
        return out

    async def _ensure_games(self, loaded: Loaded, state: State) -> None:
        tid = loaded.spec.tournament_id
        playing = arena.playing(state)
        ids = [engine.game_id(tid, arena.ROUND, g) for g in playing]
        started = await self.runner.store.started_among(tid, ids)
        todo: list[tuple[str, Game]] = [(gid, g) for gid, g in zip(ids, playing, strict=True) if gid not in started]
        if todo:
            await asyncio.gather(*(self.runner._start_game(loaded, state, gid, g) for gid, g in todo))

    # -- a player steps away or comes back ----------------------------------------------------------

    async def pause_play(self, tid: str, player_id: str, paused: bool) -> Loaded:
        """PauseArenaPlay: not paired again while paused (a game being played goes on). Idempotent."""
        for _ in range(ATTEMPTS):
            loaded = await self.runner.store.load(tid)
            if loaded is None:
                raise Refused(grpc.StatusCode.NOT_FOUND, "TOURNAMENT_NOT_FOUND", f"there is no tournament {tid}")
            if loaded.spec.format is not Format.ARENA:
                raise Refused(
                    grpc.StatusCode.FAILED_PRECONDITION, "NOT_ARENA", "only an arena's players pause and come back"
                )
            state = loaded.state
            if loaded.status != "running" or state is None or state.finished:
                raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "NOT_RUNNING", f"the arena is {loaded.status}")
            if player_id not in arena.arena_of(state).tallies or state.is_withdrawn(player_id):
                raise Refused(
                    grpc.StatusCode.FAILED_PRECONDITION, "NOT_IN_TOURNAMENT", "you are not playing in this arena"
                )
            new = arena.set_paused(state, player_id, paused)
            if new is state:
                return loaded
            reply = await self.runner.store.save(loaded, new, [])
            if reply == 1:
                after = await self.runner.store.load(tid)
                assert after is not None
                return after
            if reply == -1:
                raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "NOT_RUNNING", "the arena is not running")
        raise Refused(grpc.StatusCode.ABORTED, "BUSY", "the arena kept changing; retry")
