"""Running tournaments: start, collect results, pair the next round, start its games, withdraw.

Nothing lives in a process: the state is in Redis (store.py) and every step here is "read, compute
with the pure engine, compare-and-set, then act", safe on any number of gateway replicas at once
and after any of them dies:

- `advance(tid)` reads the running tournament, takes the result of every game of the current round
  whose record exists (gateway/records.py), pairs the next round when the round is done (again and
  again while rounds finish without games: byes and forfeits), saves state and events in one
  script (on a conflict it starts over), then makes sure every game of the current round exists.
  Game ids are fixed by the tournament, round, board and decider (engine.game_id) and
  GameDirectory.start_game is idempotent per id, so a retry, a second replica or a restart creates
  the same games, never new ones.
- It is driven by the game-end hook (Records.hooks: a tournament game's record schedules an
  advance) and by a sweep every few seconds over the running tournaments and the registering ones
  that are due to start, so it survives a restart of every gateway.

Missed games: a seat that made no move and timed out (its record has a timeout for the seat and no
move) missed the game; the engine withdraws a player after two in a row.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
from typing import Any

import grpc
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2, tournaments_pb2
from tafel.rules.v1 import rules_pb2

from gateway.actions import Actions
from gateway.games import GameDirectory
from gateway.ratings.book import RatingBook
from gateway.tournaments import engine, messages
from gateway.tournaments.arena_runner import ArenaDriver, is_arena_game
from gateway.tournaments.model import Entrant, Format, Game, Result, State
from gateway.tournaments.notices import SOON_MS, RoundNotices
from gateway.tournaments.store import Loaded, TournamentStore, now_ms
from kit.errors import Refused
from kit.loops import Loop
from kit.redis.keys import record_key
from kit.redis.layer import RedisLayer
from kit.tasks import spawn

log = logging.getLogger("tafel.gateway.tournaments")

GAME_ID = re.compile(r"^(t[0-9a-f]{16})-r([0-9]+)b([0-9]+)(?:d([0-9]+))?$")
ATTEMPTS = 50
ADVANCE_GAP = 3.0
# ... but never longer than this: the advance's time is wall-clock, and on a gateway saturated at a
# 10,000-player round start it read 10-20 s, so the next round was paired up to a minute after the
# last game ended (docs/benchmarks.md, "Tournaments at an organiser's size").
ADVANCE_GAP_MAX_S = 5.0


def tournament_of(game_id: str) -> str | None:
    match = GAME_ID.match(game_id)
    return match.group(1) if match else None


def result_of(record: play_pb2.GameRecord) -> Result:
    """A tournament result from a game's record: ranks, scores, and the seats that missed it."""
    seats = len(record.players)
    moved = [False] * seats
    timed_out = [False] * seats
    for action in record.actions:
        if action.seat >= seats:
            continue
        kind = action.WhichOneof("action")
        if kind == "move":
            moved[action.seat] = True
        elif kind == "timed_out":
            timed_out[action.seat] = True
    missed = tuple(timed_out[s] and not moved[s] for s in range(seats))
    return Result(
        ranks=tuple(int(r) for r in record.outcome.ranks),
        scores=tuple(int(s) for s in record.outcome.scores),
        missed=missed if any(missed) else (),
    )


def _event(**kind: Any) -> tournaments_pb2.TournamentEvent:
    return tournaments_pb2.TournamentEvent(**kind)


def _refused(code: grpc.StatusCode, reason: str, message: str) -> Refused:
    return Refused(code, reason, message)


class TournamentRunner:
    def __init__(
        self,
        redis: RedisLayer,
        store: TournamentStore,
        directory: GameDirectory,
        actions: Actions | None,
        book: RatingBook | None,
        *,
        sweep_interval_s: float = 5.0,
        start_concurrency: int = 8,
        arena_wave_s: float = 2.0,
        arena_standings_s: float = 5.0,
        arena_shortest_s: float = 300.0,
    ) -> None:
        self.redis = redis
        self.store = store
        self.directory = directory
        self.actions = actions
        self.book = book
        self.sweep_interval_s = sweep_interval_s
        self._starting = asyncio.Semaphore(start_concurrency)
        self._locks: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._noticing: set[str] = set()  # tournaments whose notices are being sent
        self._queued: set[str] = set()
        self._advance_after: dict[str, float] = {}
        # Tournament notices to players' inboxes (none until the composition root sets an inbox).
        self.notices = RoundNotices(store)
        self.sweeper = Loop("tournament sweeper", self._sweep_step, every_s=sweep_interval_s, log=log)
        # Arenas pair in waves on a clock of their own (arena_runner.py); advance hands them over.
        self.arena = ArenaDriver(
            self,
            result_of=result_of,
            wave_s=arena_wave_s,
            standings_s=arena_standings_s,
            shortest_s=arena_shortest_s,
        )

    # -- lifecycle ----------------------------------------------------------------------------------

    def start(self) -> None:
        self.sweeper.start()
        self.arena.loop.start()

    async def stop(self) -> None:
        await self.sweeper.stop()
        await self.arena.loop.stop()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()

    def _spawn(self, tid: str) -> None:
        # One advance waiting per tournament is enough: it reads every record there is when it
        # runs. (A Swiss of 10,000 ends 5,000 games a round: an advance queued for each, one after
        # another, each loading the whole state and every unfinished game's record.)
        if tid in self._queued:
            return
        self._queued.add(tid)
        task = spawn(self._advance_queued(tid), f"tournament advance {tid}", log=log)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _advance_queued(self, tid: str) -> None:
        loop = asyncio.get_running_loop()
        try:
            async with self._lock(tid):  # the advance running now, if any, ends first
                pass
            # A big tournament's advance (its whole state read and written) takes a while; the
            # game ends meanwhile wait ADVANCE_GAP times that before the next, so the bookkeeping
            # keeps to about a quarter of the event loop instead of all of it while a round is
            # played (a round's end is seen up to that much later; milliseconds at a club's size).
            wait = self._advance_after.pop(tid, 0.0) - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
        finally:
            self._queued.discard(tid)
        began = loop.time()
        await self._advance_or_sweep(tid)
        self._advance_after[tid] = loop.time() + min(ADVANCE_GAP_MAX_S, ADVANCE_GAP * (loop.time() - began))

    async def _advance_or_sweep(self, tid: str) -> None:
        """Advance now; a failure is left to the sweep, woken to retry at once: it logs a run of
        failing passes once (an outage as an outage), where each game end logging its own
        traceback repeated one fault per game."""
        try:
            await self.advance(tid)
        except asyncio.CancelledError:
            raise
        except Exception:
            self.sweeper.wake()

    async def on_record(self, record: play_pb2.GameRecord) -> None:
        """The game-end hook: a tournament game ended; move its tournament on (in the background,
        so the move that ended the game is not held up)."""
        tid = tournament_of(record.game_id)
        if tid is not None and not is_arena_game(record.game_id):  # an arena's next wave takes it
            self._spawn(tid)

    async def _sweep_step(self) -> None:
        await self.sweep_once()

    async def sweep_once(self) -> None:
        """Start the due tournaments and advance the running ones. A tournament that fails does
        not hold up the others; the pass then fails with its error, for the Loop to log once and
        retry with backoff (a clean pass logs the recovery)."""
        failed: Exception | None = None
        for tid in await self.store.due(now_ms()):
            try:
                await self.start_tournament(tid, by=None)
            except Refused as refused:
                log.info("due tournament not started", extra={"tournament_id": tid, "reason": refused.reason})
        for tid in await self.store.due_within(now_ms(), SOON_MS):
            soon = await self.store.load(tid)
            if soon is not None:
                await self.notices.starting_soon(soon)
        for tid in await self.store.running():
            if self.arena.drives(tid):
                continue  # the arena's own loop waves it
            # An advance from a game end is waiting and does the same (at 10,000 players the sweep's
            # own pass every 5 s was a fifth of the gateway's samples while a round was played).
            if tid in self._queued:
                continue
            try:
                await self.advance(tid)
            except Exception as error:
                failed = failed or error
        if failed is not None:
            raise failed

    # -- starting -----------------------------------------------------------------------------------

    async def _rating(self, spec_game: str, seats: int, player_id: str) -> float:
        if self.book is None:
            return 1500.0
        pool = await self.book.pools.pool_for(spec_game, seats)
        if pool is None:
            return 1500.0
        stored = await self.book.stored(pool, player_id)
        return stored.rating.rating if stored else 1500.0

    async def start_tournament(self, tid: str, *, by: str | None) -> Loaded:
        """Start a registering tournament (`by`: the organiser asking, None for the sweep). A due
        tournament with too few players is cancelled."""
        for _ in range(ATTEMPTS):
            loaded = await self.store.load(tid)
            if loaded is None:
                raise _refused(grpc.StatusCode.NOT_FOUND, "TOURNAMENT_NOT_FOUND", f"there is no tournament {tid}")
            spec = loaded.spec
            if by is not None and by != spec.organiser[0]:
                raise _refused(
                    grpc.StatusCode.PERMISSION_DENIED, "NOT_ORGANISER", "only the organiser starts a tournament"
                )
            if loaded.status == "running" and by is not None:
                return loaded  # already started: a retry gets the same answer
            if loaded.status != "registering":
                raise _refused(
                    grpc.StatusCode.FAILED_PRECONDITION, "NOT_REGISTERING", f"the tournament is {loaded.status}"
                )
            if len(loaded.players) < spec.min_players:
                if by is None:
                    await self.store.cancel(
                        loaded,
                        _event(cancelled=tournaments_pb2.TournamentCancelled(reason="TOO_FEW_PLAYERS")),
                    )
                raise _refused(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "TOO_FEW_PLAYERS",
                    f"at least {spec.min_players} players are needed",
                )
            seats = spec.table_size if spec.format is Format.TABLES else 2
            entrants = [
                Entrant(pid, name, await self._rating(spec.game, seats, pid), guest)
                for pid, name, guest in loaded.players
            ]
            state = engine.start(spec.config(), entrants)
            started = messages.tournament(loaded)
            started.state = tournaments_pb2.TOURNAMENT_STATE_RUNNING
            event = _event(started=tournaments_pb2.TournamentStarted(tournament=started))
            reply = await self.store.start(loaded, state, [event])
            if reply == 1:
                await self._advance_or_sweep(tid)  # pairs round 1; started either way
                after = await self.store.load(tid)
                assert after is not None
                return after
            if reply == -1 and by is not None:
                continue  # someone else started or cancelled it: report what stands
        raise _refused(grpc.StatusCode.ABORTED, "BUSY", "the tournament kept changing; retry")

    # -- the round loop -----------------------------------------------------------------------------

    def _lock(self, tid: str) -> asyncio.Lock:
        lock = self._locks.get(tid)
        if lock is None:
            lock = self._locks[tid] = asyncio.Lock()
            if len(self._locks) > 10_000:
                for key in list(self._locks)[:1000]:
                    if not self._locks[key].locked():
                        del self._locks[key]
        return lock

    async def advance(self, tid: str) -> None:
        async with self._lock(tid):
            if self.arena.keeps(tid):  # parsed here since its last save: no need to read it all
                await self.arena.wave_kept(tid)
                return
            loaded: Loaded | None = None
            for _ in range(ATTEMPTS):
                loaded = await self.store.load(tid)
                if loaded is None or loaded.status != "running" or loaded.state is None:
                    return
                if loaded.state.arena is not None:
                    await self.arena.wave(loaded)
                    return
                self.arena.not_arena(tid)
                state, events = await self._step(tid, loaded.state, loaded.spec.schedule)
                if state == loaded.state:
                    break
                reply = await self.store.save(loaded, state, events)
                if reply == -1:
                    return
            else:
                raise _refused(grpc.StatusCode.ABORTED, "BUSY", "the tournament kept changing")
            if loaded is not None and loaded.state is not None and not loaded.state.finished:
                await self._ensure_games(loaded)
                self._notices_later(loaded)

    def _notices_later(self, loaded: Loaded) -> None:
        """The round's notices in the background (10,000 players' inboxes take seconds: not
        under the tournament's lock, nor in the sweep's way); one batch per tournament at a time.
        A batch cut short is sent again by a later advance (store.noticed marks a finished one)."""
        tid = loaded.spec.tournament_id
        if self.notices.inbox is None or tid in self._noticing:
            return
        self._noticing.add(tid)

        async def send() -> None:
            try:
                await self.notices.round_started(loaded)
                await self.notices.starting_soon(loaded)
            finally:
                self._noticing.discard(tid)

        task = spawn(send(), f"tournament notices {tid}", log=log)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _step(
        self, tid: str, state: State, schedule: engine.Schedule | None = None
    ) -> tuple[State, list[tournaments_pb2.TournamentEvent]]:
        """Everything that follows from the records now: results, withdrawals, next rounds (unless
        the next one waits: a pause, a director, its planned time)."""
        events: list[tournaments_pb2.TournamentEvent] = []
        state = await self._collect(tid, state, events)
        while not state.finished and engine.round_done(state):
            had_round = state.current is not None
            before = state
            waiting = engine.waiting_round(state, schedule or engine.Schedule(), now_ms())
            if waiting is not None:
                # The round is over but the next waits: its standings and the wait told once.
                number, at = waiting
                if state.held != number:
                    state = dataclasses.replace(state, held=number)
                    events.append(
                        _event(
                            standings_changed=tournaments_pb2.TournamentStandingsChanged(
                                standings=messages.standings(before), rounds_completed=len(before.rounds)
                            )
                        )
                    )
                    scheduled = tournaments_pb2.TournamentRoundScheduled(round=number)
                    if at:
                        scheduled.starts_at.FromMilliseconds(at)
                    events.append(_event(round_scheduled=scheduled))
                break
            state = engine.next_round(state)
            if had_round and before.held != len(before.rounds) + 1:
                events.append(
                    _event(
                        standings_changed=tournaments_pb2.TournamentStandingsChanged(
                            standings=messages.standings(before), rounds_completed=len(before.rounds)
                        )
                    )
                )
            if state.finished:
                events.append(_event(finished=tournaments_pb2.TournamentFinished(standings=messages.standings(state))))
                break
            rnd = state.current
            assert rnd is not None
            paired = messages.round_message(tid, state, rnd)
            events.append(_event(round_started=tournaments_pb2.TournamentRoundStarted(round=paired)))
        return state, events

    async def _collect(self, tid: str, state: State, events: list[tournaments_pb2.TournamentEvent]) -> State:
        rnd = state.current
        if rnd is None:
            return state
        waiting = [g for g in rnd.games if g.result is None and not g.bye]
        if not waiting:
            return state
        ids = [engine.game_id(tid, rnd.number, g) for g in waiting]
        stored: list[Any] = await self.redis.many([("GET", record_key(game_id)) for game_id in ids])
        for g, raw in zip(waiting, stored, strict=True):
            if raw is None:
                continue
            record = play_pb2.GameRecord.FromString(raw)
            seated = [p.player.player_id for p in record.players]
            if seated != list(g.seats) or len(record.outcome.ranks) != len(g.seats):
                log.warning("tournament game record does not match its pairing", extra={"game_id": record.game_id})
                continue
            withdrawn = set(state.withdrawn)
            state = engine.record(state, rnd.number, g.board, g.decider, result_of(record))
            done = state.rounds[rnd.number - 1].game(g.board, g.decider)
            assert done is not None
            events.append(
                _event(
                    game_finished=tournaments_pb2.TournamentGameFinished(
                        round=rnd.number, game=messages.game(tid, state, rnd.number, done)
                    )
                )
            )
            for pid in state.withdrawn:
                if pid not in withdrawn:
                    entrant = state.entrant(pid)
                    events.append(
                        _event(
                            player_left=tournaments_pb2.TournamentPlayerLeft(
                                player=messages.player((pid, entrant.username, entrant.guest)),
                                withdrawn=True,
                                missed_games=True,
                            )
                        )
                    )
            # A knockout draw adds a decider to this round: it is started below with the rest.
        return state

    async def _ensure_games(self, loaded: Loaded) -> None:
        state = loaded.state
        assert state is not None
        rnd = state.current
        if rnd is None:
            return
        tid = loaded.spec.tournament_id
        wanted = [g for g in rnd.games if g.result is None and g.needs_game]
        if not wanted:
            return
        started = await self.store.started_games(tid)
        todo = [(engine.game_id(tid, rnd.number, g), g) for g in wanted]
        todo = [(gid, g) for gid, g in todo if gid not in started]
        if todo:
            await asyncio.gather(*(self._start_game(loaded, state, gid, g) for gid, g in todo))

    async def _start_game(self, loaded: Loaded, state: State, game_id: str, g: Game) -> None:
        spec = loaded.spec
        players = [
            play_pb2.Player(player_id=p, username=state.entrant(p).username, guest=state.entrant(p).guest)
            for p in g.seats
        ]
        async with self._starting:
            await self.directory.start_game(
                game=spec.game,
                options=games_pb2.GameOptions.FromString(spec.options),
                players=players,
                per_move_s=spec.per_move_ms / 1000.0,
                rated=spec.rated and not any(p.guest for p in players),
                origin=f"tournament:{spec.tournament_id}",
                game_id=game_id,
            )
        await self.store.mark_started(spec.tournament_id, game_id)

    # -- players ------------------------------------------------------------------------------------

    async def leave(self, tid: str, player: play_pb2.Player) -> Loaded:
        """Leave a tournament: unregistered before it starts, withdrawn once it runs."""
        event = tournaments_pb2.TournamentEvent(player_left=tournaments_pb2.TournamentPlayerLeft(player=player))
        reply = await self.store.unregister(tid, player.player_id, event)
        if reply == -3:
            raise _refused(grpc.StatusCode.NOT_FOUND, "TOURNAMENT_NOT_FOUND", f"there is no tournament {tid}")
        if reply == -1:
            current = await self.store.load(tid)
            if current is None or current.status != "running":
                status = current.status if current is not None else "gone"
                raise _refused(grpc.StatusCode.FAILED_PRECONDITION, "NOT_RUNNING", f"the tournament is {status}")
            return await self.withdraw(tid, player)
        after = await self.store.load(tid)
        if after is None:
            raise _refused(grpc.StatusCode.NOT_FOUND, "TOURNAMENT_NOT_FOUND", f"there is no tournament {tid}")
        return after

    async def tournaments_of(self, player_id: str) -> list[str]:
        """The registering and running tournaments the player is in (and not withdrawn from). Reads
        each such tournament: fine for the few a platform runs at once; an index per player would
        be the next step."""
        ids = await self.store.open_ids()
        out = []
        for tid in ids:
            loaded = await self.store.load(tid)
            if loaded is None:
                continue
            if loaded.state is not None:
                if player_id in {e.player_id for e in loaded.state.entrants} and not loaded.state.is_withdrawn(
                    player_id
                ):
                    out.append(tid)
            elif player_id in {p[0] for p in loaded.players}:
                out.append(tid)
        return out

    async def withdraw(self, tid: str, player: play_pb2.Player) -> Loaded:
        """Withdraw a player from a running tournament: paired no more, future games forfeited,
        a game of theirs still running resigned. Idempotent."""
        for _ in range(ATTEMPTS):
            loaded = await self.store.load(tid)
            if loaded is None or loaded.state is None or loaded.status != "running":
                raise _refused(grpc.StatusCode.FAILED_PRECONDITION, "NOT_RUNNING", "the tournament is not running")
            state = loaded.state
            if player.player_id not in {e.player_id for e in state.entrants}:
                raise _refused(
                    grpc.StatusCode.FAILED_PRECONDITION, "NOT_IN_TOURNAMENT", "you are not in this tournament"
                )
            if state.is_withdrawn(player.player_id):
                break
            new = engine.withdraw(state, player.player_id)
            event = _event(player_left=tournaments_pb2.TournamentPlayerLeft(player=player, withdrawn=True))
            reply = await self.store.save(loaded, new, [event])
            if reply == 1:
                break
            if reply == -1:
                raise _refused(grpc.StatusCode.FAILED_PRECONDITION, "NOT_RUNNING", "the tournament is not running")
        # The round may be paired with its games still being created (here or on another replica):
        # advancing first creates what is missing (creating a game id again is safe), so the game
        # the player was paired in exists to be resigned instead of timing out as a missed game.
        await self._advance_or_sweep(tid)
        await self._resign_running(tid, player.player_id)
        await self._advance_or_sweep(tid)
        after = await self.store.load(tid)
        assert after is not None
        return after

    async def after_withdrawal(self, tid: str, player_id: str) -> None:
        """What follows a director's removal (already saved): the games made, the player's running
        game resigned, the round moved on."""
        await self._advance_or_sweep(tid)
        await self._resign_running(tid, player_id)
        await self._advance_or_sweep(tid)

    async def _resign_running(self, tid: str, player_id: str) -> None:
        if self.actions is None:
            return
        loaded = await self.store.load(tid)
        if loaded is None or loaded.state is None or loaded.state.current is None:
            return
        rnd = loaded.state.current
        for g in rnd.games:
            if g.result is not None or not g.needs_game or player_id not in g.seats:
                continue
            await self._resign(engine.game_id(tid, rnd.number, g), player_id)

    async def _resign(self, game_id: str, player_id: str) -> None:
        assert self.actions is not None
        await self.actions.forfeit(game_id, player_id, "w")

    async def abort_game(self, game_id: str, request_id: str) -> None:
        """End a game being played without a result that counts (a director's terminate or
        correction). A game already over, or never made, is left as it is; a retry is answered."""
        if self.actions is None:
            return
        try:
            meta = await self.directory.meta(game_id)
        except Refused:
            return
        for _ in range(3):
            try:
                view = await self.actions.router.get_view(meta.game, rules_pb2.GetViewRequest(game_id=game_id))
                if view.status.over:
                    return
                await self.actions.apply(
                    meta, 0, expected_version=view.status.version, request_id=request_id, abort=True
                )
                return
            except Refused as refused:
                if refused.code != grpc.StatusCode.ABORTED:
                    log.info("abort refused", extra={"game_id": game_id, "reason": refused.reason})
                    return
