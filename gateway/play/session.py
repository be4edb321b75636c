"""One Play stream: a reader task, one task per action, one pump per watched game, and the
writer loop (run) as the only writer.

The stream carries the unary calls' guarantees: the same request-id scoping (a retry on either
path gets the first answer), versions, and watches that resume from an event id. The writer drains
a queue; each action runs in its own task, so one slow game never holds up another on the same
stream. With batching (PlayOptions.batch_responses) responses waiting together leave in one message,
and an action's answer waits briefly for its own events so they leave together, events first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from functools import partial
from typing import Protocol

import grpc
from redis.exceptions import RedisError
from tafel.play.v1 import play_pb2

from gateway.auth import Identity
from gateway.games import GameMeta
from gateway.matchmaking.model import Leaving
from gateway.play.encoding import encode_batch, live_delivery, set_time
from gateway.play.steps import GAME_STORE_UNAVAILABLE, ActionCounters, GameSteps
from gateway.watch.event_ids import check_event_id
from gateway.watch.watcher import LAST_OF_HISTORY, LiveBatch
from kit import timesource
from kit.errors import INTERNAL, Refused, as_refused, invalid
from kit.queues import take_waiting
from kit.tasks import supervise
from kit.when_set import when_set

log = logging.getLogger("tafel.gateway.play")
MAX_IN_FLIGHT_PER_STREAM = 256
OUT_QUEUE_LIMIT = 4096
# How long a batching stream's answer waits for its action's own events (they come by pub/sub,
# which can lag the answer on a busy gateway) before it leaves without them.
OWN_EVENTS_WAIT_S = 0.5


class MatchSource(Protocol):
    """The lobby's matchmaking as the Play stream uses it (gateway/lobby.py)."""

    def match_updates(
        self, player: play_pb2.Player, request: play_pb2.FindMatchRequest, leaving: Leaving | None = None
    ) -> AsyncGenerator[play_pb2.FindMatchResponse, None]: ...


def failure_of(error: Exception, what: str) -> Refused | RedisError:
    """What a failed action, search or watch answers: a refusal or a Redis failure as it is;
    anything else is a bug, logged with its traceback and answered INTERNAL with a generic
    message (never its text), so the client is told instead of waiting on a task that died."""
    if isinstance(error, Refused | RedisError):
        return error
    log.error("%s failed", what, exc_info=error)
    return Refused(grpc.StatusCode.INTERNAL, "INTERNAL", f"the {what} failed; retry")


def refusal_of(error: Refused | RedisError) -> play_pb2.Refusal:
    """A refusal as the stream sends it (a Redis failure is STORE_UNAVAILABLE, retryable)."""
    refused = as_refused(error, GAME_STORE_UNAVAILABLE)
    refusal = play_pb2.Refusal(code=refused.code.value[0], reason=refused.reason, message=refused.message)
    if refused.current_version is not None:
        refusal.current_version = refused.current_version
    return refusal


def answer_version(response: play_pb2.PlayResponse) -> int:
    """The version an action's answer reports (0 for a refusal)."""
    kind = response.WhichOneof("kind")
    if kind == "move_accepted":
        return int(response.move_accepted.version)
    if kind == "resigned":
        return int(response.resigned.version)
    return 0


_DONE = None


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


MAX_BATCH = 64  # responses in one batched message


class PlaySession:
    """One Play stream: a reader task, one task per action, one pump per watched game, and the
    writer loop (run) as the only writer."""

    def __init__(
        self,
        steps: GameSteps,
        identity: Identity,
        *,
        counters: ActionCounters,
        stopping: asyncio.Event,
        drain_s: float,
        lobby: MatchSource | None,
    ) -> None:
        self.steps = steps
        self.identity = identity
        self.counters = counters
        self.stopping = stopping  # set when the gateway stops: the stream drains and says `reconnect`
        self.drain_s = drain_s
        self.lobby = lobby
        # Responses, live event deliveries already encoded (shared by every local watcher), or a
        # group that must leave in one message (an action's parked events and its answer).
        self.loop = asyncio.get_running_loop()
        self.out: asyncio.Queue[play_pb2.PlayResponse | bytes | list[play_pb2.PlayResponse | bytes] | None] = (
            asyncio.Queue(OUT_QUEUE_LIMIT)
        )
        self.batching = False  # PlayOptions.batch_responses
        # With batching, a watched game's events that arrive while this stream's own action on
        # that game is in flight wait for its answer and leave with it in one message.
        self.acting: dict[str, int] = {}
        self.parked: dict[str, list[play_pb2.PlayResponse | bytes]] = {}
        self.passed: dict[str, int] = {}  # game -> the newest event version passed on (or parked)
        # Answers held for their own events (_own_events): game -> (version awaited, its future).
        self.waiting: dict[str, list[tuple[int, asyncio.Future[None]]]] = {}
        self.actions: set[asyncio.Task[None]] = set()
        self.watches: dict[str, asyncio.Task[None]] = {}
        self.finds: dict[int, asyncio.Task[None]] = {}  # find_match correlation id -> its search
        # Each search's Leaving: StopFinding marks it (a correspondence search then leaves the queue).
        self.leavings: dict[asyncio.Task[None], Leaving] = {}
        self.reading_done = False
        self.broken = False  # the reader failed with a bug: the stream ends INTERNAL
        self.closed = False  # the response stream ended: answers of late actions are dropped

    async def run(
        self,
        requests: AsyncIterator[play_pb2.PlayRequest],
        write: Callable[[play_pb2.PlayResponse | bytes], Awaitable[None]],
    ) -> None:
        """Serve the stream until it ends, sending every response with `write` (the call's
        context.write: no generator between this loop and gRPC, docs/benchmarks.md tenth pass)."""
        loop = self.loop
        reader = supervise(loop.create_task(self._read(requests)), "play stream reader", log=log)
        # The drain's task is made only when the gateway stops: none waits per idle stream.
        draining: list[asyncio.Task[None]] = []

        def drain() -> None:
            draining.append(supervise(loop.create_task(self._drain(reader)), "play stream drain", log=log))

        forget_stop = when_set(self.stopping, drain)
        try:
            while True:
                response = await self.out.get()
                if response is _DONE:
                    break
                if not self.batching:
                    assert not isinstance(response, list)
                    await write(response)
                    continue
                items = list(response) if isinstance(response, list) else [response]
                ended = False
                for more in take_waiting(self.out, MAX_BATCH - len(items)):
                    if more is _DONE:
                        ended = True  # (what follows it is dropped with the stream, as before)
                        break
                    if isinstance(more, list):
                        items.extend(more)
                    else:
                        items.append(more)
                await write(items[0] if len(items) == 1 else encode_batch(items))
                if ended:
                    break
            if self.broken:
                raise Refused(grpc.StatusCode.INTERNAL, "INTERNAL", INTERNAL)
        finally:
            # Action tasks are never cancelled: once sent, an action and its bookkeeping finish
            # (this is what lets them run unshielded, one task per move).
            self.closed = True
            forget_stop()
            for task in draining:
                task.cancel()
            reader.cancel()
            for task in (*self.watches.values(), *self.finds.values()):
                task.cancel()
            take_waiting(self.out)  # wakes any action waiting for room, so it can end

    async def _drain(self, reader: asyncio.Task[None]) -> None:
        """The gateway is stopping: take no more requests, let the actions in flight finish and
        answer, then end the stream (the client resumes elsewhere from its last event id)."""
        reader.cancel()
        for task in (*self.watches.values(), *self.finds.values()):
            task.cancel()
        if self.actions:
            await asyncio.wait(tuple(self.actions), timeout=self.drain_s)
        # Said before the end, so a client tells a graceful stop from a finished conversation and
        # reconnects (to another gateway: this one no longer takes calls) with what is unanswered.
        move = play_pb2.Reconnect(reason="GATEWAY_STOPPING")
        await self.out.put(play_pb2.PlayResponse(reconnect=move))
        await self.out.put(_DONE)

    def _check_session(self) -> None:
        if self.identity.expires_at <= time.time():
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED", "the session has expired; sign in again")
        self.steps.auth.check_not_revoked(self.identity)  # signed out while the stream is open

    async def _read(self, requests: AsyncIterator[play_pb2.PlayRequest]) -> None:
        try:
            async for request in requests:
                kind = request.WhichOneof("action")
                correlation = request.correlation_id
                if kind == "ping":
                    pong = play_pb2.Pong(nonce=request.ping.nonce)
                    await self.out.put(play_pb2.PlayResponse(correlation_id=correlation, pong=pong))
                    continue
                try:
                    self._check_session()
                except Refused as refused:
                    await self.out.put(play_pb2.PlayResponse(correlation_id=correlation, refusal=refusal_of(refused)))
                    break
                if kind in ("submit_move", "resign"):
                    if len(self.actions) >= MAX_IN_FLIGHT_PER_STREAM:  # (a semaphore's acquire per move cost more)
                        await asyncio.wait(tuple(self.actions), return_when=asyncio.FIRST_COMPLETED)
                    task = supervise(self.loop.create_task(self._act(request)), "play stream action", log=log)
                    self.actions.add(task)
                    task.add_done_callback(self._action_done)
                elif kind == "watch":
                    self._start_watch(correlation, request.watch)
                elif kind == "stop_watching":
                    await self._stop_watch(correlation, request.stop_watching.game_id)
                elif kind == "find_match":
                    self._start_find(correlation, request.find_match)
                elif kind == "stop_finding":
                    finding = self.finds.pop(request.stop_finding.find_correlation_id, None)
                    if finding is not None:  # answered once the search has ended (its ticket is leaving)
                        self._withdraw_search(finding)
                        finding.cancel()
                        await asyncio.wait((finding,))
                    stopped = play_pb2.PlayResponse(
                        correlation_id=correlation, match_update=play_pb2.FindMatchResponse()
                    )
                    await self.out.put(stopped)
                elif kind == "set_options":
                    self.batching = request.set_options.batch_responses
                    if not self.batching:
                        self._release_all_parked()
                    answer = play_pb2.PlayResponse(correlation_id=correlation, options_set=request.set_options)
                    await self.out.put(answer)
                else:
                    missing = invalid("ACTION_MISSING", "set one of the PlayRequest actions")
                    await self.out.put(play_pb2.PlayResponse(correlation_id=correlation, refusal=refusal_of(missing)))
        except (grpc.aio.AioRpcError, asyncio.CancelledError):
            pass
        except Exception:
            # A bug (logged by its supervisor): nothing more would be read while the watches went
            # on, so the stream ends, INTERNAL (run), and the client reconnects.
            self.broken = True
            raise
        finally:
            self.reading_done = True
            for task in self.finds.values():  # a client that stopped sending leaves the queues
                task.cancel()
            if self.actions:
                await asyncio.gather(*tuple(self.actions), return_exceptions=True)
            if not self.watches or self.broken:
                await self.out.put(_DONE)

    def _action_done(self, task: asyncio.Task[None]) -> None:
        self.actions.discard(task)

    async def _act(self, request: play_pb2.PlayRequest) -> None:
        response = play_pb2.PlayResponse(correlation_id=request.correlation_id)
        submit = request.WhichOneof("action") == "submit_move"
        game_id = request.submit_move.game_id if submit else request.resign.game_id
        parking = self.batching
        if parking:
            self.acting[game_id] = self.acting.get(game_id, 0) + 1
        try:
            # The action itself, here rather than in a coroutine of its own: the move's answer
            # resumes this task through every frame it awaits in, once a move.
            started = time.perf_counter()
            try:
                if submit:
                    await self.steps.submit(
                        self.identity, request.submit_move, into=response.move_accepted, shielded=False
                    )
                else:
                    response.resigned.CopyFrom(await self.steps.resign(self.identity, request.resign))
                self.counters.applied.inc()
                self.counters.latency.observe(time.perf_counter() - started)
            except Exception as error:  # the answer is a refusal, whatever went wrong (never its text)
                self._refuse(request, response, error)
            if parking and game_id in self.watches:
                version = answer_version(response)
                if self.passed.get(game_id, 0) < version:  # (else no coroutine to make and run)
                    await self._own_events(game_id, version)
        finally:
            if parking:
                left = self.acting[game_id] - 1
                if left:
                    self.acting[game_id] = left
                else:
                    del self.acting[game_id]
        if self.closed:
            return  # nobody reads this stream any more
        parked = self.parked.pop(game_id, None) if game_id not in self.acting else None
        answer = [*parked, response] if parked else response
        if self.out.full():
            await self.out.put(answer)
        else:
            self.out.put_nowait(answer)

    def _refuse(self, request: play_pb2.PlayRequest, response: play_pb2.PlayResponse, error: Exception) -> None:
        """Make `response` the refusal of a failed action (a Redis failure is retryable; anything
        unexpected is INTERNAL, logged, and never shows its text)."""
        refusal = failure_of(error, "action")
        if isinstance(error, Refused):
            self.counters.refused.inc()
        response.Clear()
        response.correlation_id = request.correlation_id
        response.refusal.CopyFrom(refusal_of(refusal))

    async def _own_events(self, game_id: str, version: int) -> None:
        """Hold a batching stream's answer until the pump has passed on its action's events (so
        they leave together, events first), at most OWN_EVENTS_WAIT_S."""
        if not version or self.passed.get(game_id, 0) >= version or game_id not in self.watches:
            return  # the usual case: pub/sub's copy came before the rules service's answer
        # A future woken by _deliver (or the watch's end) and a timer: no task, no Event.
        waiter = self.loop.create_future()
        entry = (version, waiter)
        self.waiting.setdefault(game_id, []).append(entry)
        timer = self.loop.call_later(OWN_EVENTS_WAIT_S, _wake, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            waiters = self.waiting.get(game_id)
            if waiters is not None and entry in waiters:
                waiters.remove(entry)
                if not waiters:
                    del self.waiting[game_id]

    def _wake_waiting(self, game_id: str, version: int | None) -> None:
        """Wake the answers waiting for `game_id`'s events up to `version` (None: all of them)."""
        waiters = self.waiting.get(game_id)
        if waiters is None:
            return
        kept = [entry for entry in waiters if version is not None and entry[0] > version]
        for awaited, waiter in waiters:
            if version is None or awaited <= version:
                _wake(waiter)
        if kept:
            self.waiting[game_id] = kept
        else:
            del self.waiting[game_id]

    async def _deliver(self, game_id: str, delivery: play_pb2.PlayResponse | bytes, version: int) -> None:
        """A watched game's event: parked while this stream's own action on the game is in
        flight (batching streams only), else queued."""
        if not self._parked(game_id, delivery, version):
            await self.out.put(delivery)

    def _parked(self, game_id: str, delivery: play_pb2.PlayResponse | bytes, version: int) -> bool:
        """Note a watched game's event as passed on; True when it is parked instead of queued."""
        if version > self.passed.get(game_id, 0):
            self.passed[game_id] = version
            if game_id in self.waiting:
                self._wake_waiting(game_id, version)
        if game_id in self.acting:
            self.parked.setdefault(game_id, []).append(delivery)
            return True
        return False

    def _takes(self, pump: asyncio.Task[None] | None, game_id: str, count: int) -> bool:
        """Whether a pump's watch may hand `count` live events over now (Watch.listen): it is
        still the game's watch on an open stream, and the queue has room for them."""
        return (
            pump is not None
            and not self.closed
            and pump.cancelling() == 0
            and self.watches.get(game_id) is pump
            and self.out.qsize() + count <= OUT_QUEUE_LIMIT
        )

    def _hand_live(self, meta: GameMeta, live: LiveBatch, index: int) -> None:
        """A live event handed over by the watch itself (no pump wake-up): what _pump does with it."""
        self.steps.metrics.events_sent.inc()
        delivery = live_delivery(live, index, meta, True)
        if not self._parked(meta.game_id, delivery, live.batch.events[index].version):
            self.out.put_nowait(delivery)

    def _release_all_parked(self) -> None:
        for game_id in tuple(self.parked):
            for delivery in self.parked.pop(game_id):
                with contextlib.suppress(asyncio.QueueFull):
                    self.out.put_nowait(delivery)

    def _start_find(self, correlation: int, request: play_pb2.FindMatchRequest) -> None:
        previous = self.finds.pop(correlation, None)
        if previous is not None:  # the same request again (a resend): the new search replaces it
            self._withdraw_search(previous)
            previous.cancel()
        leaving = Leaving()
        task = supervise(
            self.loop.create_task(self._find(correlation, request, previous, leaving)), "play stream search", log=log
        )
        self.leavings[task] = leaving
        self.finds[correlation] = task

        def done(finished: asyncio.Task[None]) -> None:
            self.leavings.pop(finished, None)
            if self.finds.get(correlation) is finished:
                del self.finds[correlation]

        task.add_done_callback(done)

    def _withdraw_search(self, finding: asyncio.Task[None]) -> None:
        """The player asked this search to stop: a correspondence search leaves the queue too
        (the stream ending unasked would leave it queued)."""
        leaving = self.leavings.get(finding)
        if leaving is not None:
            leaving.withdraw = True

    async def _find(
        self,
        correlation: int,
        request: play_pb2.FindMatchRequest,
        previous: asyncio.Task[None] | None,
        leaving: Leaving | None = None,
    ) -> None:
        lobby = self.lobby
        if previous is not None:
            await asyncio.wait((previous,))  # its ticket leaves the queue first
        try:
            if lobby is None:
                raise Refused(grpc.StatusCode.UNIMPLEMENTED, "NO_LOBBY", "this gateway has no matchmaking")
            async with contextlib.aclosing(lobby.match_updates(self.identity.player(), request, leaving)) as updates:
                async for update in updates:
                    if request.watch and update.WhichOneof("status") == "matched":
                        # FindMatchRequest.watch: an ordinary watch under the search's id, whose
                        # `watching` answer carries the MatchFound along (one message when batching).
                        update.matched.watch_started = True
                        found = play_pb2.PlayResponse(correlation_id=correlation, match_update=update)
                        self._start_watch(correlation, play_pb2.WatchGameRequest(game_id=update.matched.game_id), found)
                        return
                    await self.out.put(play_pb2.PlayResponse(correlation_id=correlation, match_update=update))
        except Exception as error:
            refusal = refusal_of(failure_of(error, "search"))
            await self.out.put(play_pb2.PlayResponse(correlation_id=correlation, refusal=refusal))

    def _start_watch(
        self, correlation: int, request: play_pb2.WatchGameRequest, lead: play_pb2.PlayResponse | None = None
    ) -> None:
        """Watch a game on this stream; `lead` (a search's MatchFound) leaves with the watch's
        first answer."""
        self.parked.pop(request.game_id, None)  # the new watch replays from its own position
        previous = self.watches.pop(request.game_id, None)
        if previous is not None:
            previous.cancel()
        task = supervise(self.loop.create_task(self._pump(correlation, request, lead)), "play stream watch", log=log)
        self.watches[request.game_id] = task

        def done(finished: asyncio.Task[None]) -> None:
            if self.watches.get(request.game_id) is finished:
                del self.watches[request.game_id]
                self._wake_waiting(request.game_id, None)  # its answers wait for events no more
            if self.reading_done and not self.watches and not self.actions:
                with contextlib.suppress(asyncio.QueueFull):
                    self.out.put_nowait(_DONE)

        task.add_done_callback(done)

    async def _stop_watch(self, correlation: int, game_id: str) -> None:
        self.parked.pop(game_id, None)
        task = self.watches.pop(game_id, None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        ack = play_pb2.GetGameResponse()
        ack.summary.game_id = game_id
        await self.out.put(play_pb2.PlayResponse(correlation_id=correlation, watching=ack))

    async def _put_led(self, lead: play_pb2.PlayResponse | None, response: play_pb2.PlayResponse) -> None:
        """`response` after `lead` (when there is one): in one message on a batching stream."""
        if lead is None:
            await self.out.put(response)
        elif self.batching:
            await self.out.put([lead, response])
        else:
            await self.out.put(lead)
            await self.out.put(response)

    async def _pump(
        self, correlation: int, request: play_pb2.WatchGameRequest, lead: play_pb2.PlayResponse | None = None
    ) -> None:
        steps = self.steps
        try:
            meta = await steps.meta(request.game_id, self.identity.player_id)
            check_event_id(request.after_event_id)
            async with steps.hub.watch(meta.game_id, request.after_event_id) as watch:
                view = await steps.game_view(meta, self.identity.player_id)
                if not request.after_event_id:
                    # One rule (play.proto, WatchGameRequest): with no id the view stands for the
                    # history, and only events after it follow; with an id, the events after it.
                    watch.start_at_view(view.last_event_id, view.summary.status.over)
                await watch.prepare()  # a bad starting point is refused before the answer
                await self._put_led(lead, play_pb2.PlayResponse(correlation_id=correlation, watching=view))
                lead = None
                pump = asyncio.current_task()
                # partial, not lambdas: called in C, one Python frame fewer per call (two a move)
                watch.listen(partial(self._takes, pump, meta.game_id), partial(self._hand_live, meta))
                async for event, source in watch.events():
                    current = watch.current
                    if current is not None:
                        steps.metrics.events_sent.inc()
                        live = live_delivery(current[0], current[1], meta, True)
                        await self._deliver(meta.game_id, live, event.version)
                        continue
                    delivery = play_pb2.GameEventDelivery(game_id=meta.game_id, event=event)
                    if watch.status is not None and watch.status.version == event.version:
                        delivery.status.CopyFrom(watch.status)
                    if source == LAST_OF_HISTORY and event.WhichOneof("kind") != "ended":
                        summary = view.summary
                        if summary.status.version == event.version and summary.HasField("turn_deadline"):
                            # A version's deadline never changes once set: the one just read stands.
                            delivery.turn_deadline.CopyFrom(summary.turn_deadline)
                        else:
                            deadline = await steps.clocks.deadline(meta.game_id, event.version)
                            set_time(delivery.turn_deadline, deadline)
                    else:
                        set_time(delivery.turn_deadline, steps.deadline_of(meta, event, source, timesource.now_s()))
                    steps.metrics.events_sent.inc()
                    await self._deliver(meta.game_id, play_pb2.PlayResponse(event=delivery), event.version)
        except Exception as error:
            refusal = refusal_of(failure_of(error, "watch"))
            await self._put_led(lead, play_pb2.PlayResponse(correlation_id=correlation, refusal=refusal))
        except asyncio.CancelledError:
            # Replaced or stopped before its first answer: the match it carries is still told.
            if lead is not None and not self.closed:
                with contextlib.suppress(asyncio.QueueFull):
                    self.out.put_nowait(lead)
            raise
