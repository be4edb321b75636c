"""The play stream: one long-lived bidirectional stream per connection — moves in; acks,
refusals and the watched games' events out (the fast path for bots and busy clients).

    async with client.play_stream() as stream:
        await stream.watch(game_id)
        answer = await stream.submit_move(game_id, connect4_pb2.Move(column=3), expected_version=0)
        async for delivery in stream.events():
            ...

If the connection drops, or the gateway stops gracefully (it says `reconnect` and ends the stream
with OK), the stream reopens by itself — on a channel over several gateways, to another one —
watches every game again from the last event it delivered (so no event is lost or repeated) and
resends unanswered requests and searches with their original request ids (so nothing is applied
twice and a search takes over its own ticket). Once it gives up, every pending and later request
fails at once with the error (nothing waits forever).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, Protocol

import grpc
from google.protobuf.message import Message

from tafel.errors import TafelError, Unavailable, error_for, from_rpc_error
from tafel.fifo import Fifo
from tafel.messages import put_game_move
from tafel.play.v1 import play_pb2, play_pb2_grpc
from tafel.requests import find_match_request, is_after, new_request_id
from tafel.retry import Attempts

MAX_RECONNECTS = 20


class Connection(Protocol):
    """What the stream needs of its client (a TafelClient): the stub and the call's token."""

    @property
    def games(self) -> play_pb2_grpc.GameServiceStub: ...

    def metadata(self) -> tuple[tuple[str, str], ...]: ...


class PlayStream:
    def __init__(
        self,
        client: Connection,
        *,
        batch_responses: bool = True,
        max_reconnects: int | None = MAX_RECONNECTS,
        on_connection: Callable[[bool], object] | None = None,
    ) -> None:
        """`max_reconnects`: consecutive failed reconnects before giving up (None: never).
        `on_connection(False)` is called when the stream is lost, `on_connection(True)` when a
        gateway answers again (so a program can say it is reconnecting)."""
        self.client = client
        self.batch_responses = batch_responses
        self.max_reconnects = max_reconnects
        self.on_connection = on_connection
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[play_pb2.PlayRequest, asyncio.Future[play_pb2.PlayResponse]]] = {}
        # Fifos, not asyncio.Queues: the outbox and the events are crossed by every move (tafel/fifo.py).
        self._outbox: Fifo[play_pb2.PlayRequest] = Fifo()
        self._events: Fifo[play_pb2.GameEventDelivery | None] = Fifo()
        # The loop the stream runs on, learnt once: on Python 3.11 each get_running_loop() is a
        # getpid system call, and a request asked for it to make its answer's future.
        self._loop: asyncio.AbstractEventLoop | None = None
        # find_match searches in progress: correlation id -> (the request, its updates).
        self._searches: dict[int, tuple[play_pb2.PlayRequest, Fifo[play_pb2.PlayResponse | None]]] = {}
        self._last_event: dict[str, str] = {}  # game id -> last event id delivered
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._failure: TafelError | None = None  # set once the stream gave up: requests fail at once
        self.reconnects = 0  # streams reopened (after a drop or a gateway's `reconnect`)

    async def __aenter__(self) -> PlayStream:
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._run())
        self._task.add_done_callback(self._ran)
        return self

    def _ran(self, task: asyncio.Task[None]) -> None:
        # However the connection task ended (even by a bug), nobody may be left waiting.
        if not self._closed and self._failure is None:
            crashed = not task.cancelled() and task.exception() is not None
            reason = "the play stream failed" if crashed else "the play stream ended"
            self._fail_all(Unavailable("STREAM_CLOSED", reason))

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
        for _, future in self._pending.values():
            if not future.done():
                future.set_exception(Unavailable("STREAM_CLOSED", "the play stream was closed"))
        for _, updates in self._searches.values():
            updates.put_nowait(None)
        self._events.put_nowait(None)

    # -- requests -------------------------------------------------------------------------------------

    async def _request(self, **action: Any) -> play_pb2.PlayResponse:
        self._check_open()
        return await self._send(play_pb2.PlayRequest(correlation_id=next(self._ids), **action))

    async def _send(self, request: play_pb2.PlayRequest) -> play_pb2.PlayResponse:
        """Send `request` (its correlation id set) and wait for its answer; a refusal raises."""
        loop = self._loop or asyncio.get_running_loop()
        future: asyncio.Future[play_pb2.PlayResponse] = loop.create_future()
        self._pending[request.correlation_id] = (request, future)
        self._outbox.put_nowait(request)
        response = await future
        if response.WhichOneof("kind") == "refusal":
            refusal = response.refusal
            raise error_for(grpc.StatusCode(_code(refusal.code)), refusal.reason, refusal.message)
        return response

    async def submit_move(
        self, game_id: str, move: Message, *, expected_version: int, request_id: str | None = None
    ) -> play_pb2.SubmitMoveResponse:
        self._check_open()
        # Filled in place: the move is copied once, into the request that is sent (built as
        # nested messages it was copied three times, each level's constructor copying the last).
        request = play_pb2.PlayRequest(correlation_id=next(self._ids))
        submit = request.submit_move
        submit.game_id = game_id
        submit.expected_version = expected_version
        submit.request_id = request_id or new_request_id()
        put_game_move(submit.move, move)
        return (await self._send(request)).move_accepted

    async def resign(self, game_id: str, *, request_id: str | None = None) -> play_pb2.ResignResponse:
        resign = play_pb2.ResignRequest(game_id=game_id, request_id=request_id or new_request_id())
        return (await self._request(resign=resign)).resigned

    async def watch(self, game_id: str, after_event_id: str = "") -> play_pb2.GetGameResponse:
        """Receive this game's events after `after_event_id` on `events()`."""
        self._last_event.setdefault(game_id, after_event_id)
        watch = play_pb2.WatchGameRequest(game_id=game_id, after_event_id=self._last_event[game_id])
        return (await self._request(watch=watch)).watching

    async def stop_watching(self, game_id: str) -> None:
        self._last_event.pop(game_id, None)
        await self._request(stop_watching=play_pb2.StopWatching(game_id=game_id))

    async def find_match(self, game: str, options: Message | None = None, **kwargs: Any) -> play_pb2.MatchFound:
        """Queue for a match on this stream (no call of its own) and wait until matched."""
        async with contextlib.aclosing(self.find_match_updates(game, options, **kwargs)) as updates:
            async for update in updates:
                if update.WhichOneof("status") == "matched":
                    return update.matched
        raise TafelError("MATCH_ENDED", "the search ended without a match")

    async def find_match_updates(
        self,
        game: str,
        options: Message | None = None,
        *,
        per_move_s: float | None = None,
        min_seats: int = 0,
        max_seats: int = 0,
    ) -> AsyncGenerator[play_pb2.FindMatchResponse, None]:
        """Each status of a search on this stream until matched. Closing the iterator (or
        cancelling the task) withdraws the ticket: iterate inside `contextlib.aclosing(...)` so that
        breaking out withdraws it at once. After a reconnect the search is sent again."""
        request = find_match_request(game, options, per_move_s=per_move_s, min_seats=min_seats, max_seats=max_seats)
        async with contextlib.aclosing(self._search(request)) as responses:
            async for response in responses:
                yield response.match_update

    async def find_and_watch(
        self, game: str, options: Message | None = None, **kwargs: Any
    ) -> tuple[play_pb2.MatchFound, play_pb2.GetGameResponse]:
        """find_match, then watch() the game, in one request (FindMatchRequest.watch): the
        gateway starts the watch when it pairs us, and its `watching` answer (the game's first
        view) comes with MatchFound; the game's events follow on `events()`. Against a gateway
        that predates the option (or whose watch was refused) it sends the watch itself."""
        request = find_match_request(game, options, **kwargs)
        request.watch = True
        matched: play_pb2.MatchFound | None = None
        async with contextlib.aclosing(self._search(request)) as responses:
            async for response in responses:
                if response.WhichOneof("kind") == "watching":
                    assert matched is not None
                    return matched, response.watching
                if response.match_update.WhichOneof("status") == "matched":
                    matched = response.match_update.matched
        if matched is None:
            raise TafelError("MATCH_ENDED", "the search ended without a match")
        return matched, await self.watch(matched.game_id)

    async def _search(self, request: play_pb2.FindMatchRequest) -> AsyncGenerator[play_pb2.PlayResponse, None]:
        """A search's responses: its match updates until matched, then (when it started the
        game's watch: MatchFound.watch_started) the watch's `watching` answer."""
        self._check_open()
        correlation = next(self._ids)
        message = play_pb2.PlayRequest(correlation_id=correlation, find_match=request)
        updates: Fifo[play_pb2.PlayResponse | None] = Fifo()
        self._searches[correlation] = (message, updates)
        self._outbox.put_nowait(message)
        matched: play_pb2.MatchFound | None = None
        watched = False
        try:
            while True:
                response = await updates.get()
                if response is None:
                    raise Unavailable("STREAM_CLOSED", "the play stream was closed")
                kind = response.WhichOneof("kind")
                if kind == "refusal":
                    if matched is not None:
                        return  # the watch's refusal, not the search's: the match stands
                    refusal = response.refusal
                    raise error_for(grpc.StatusCode(_code(refusal.code)), refusal.reason, refusal.message)
                if kind == "watching":
                    watched = True
                    yield response
                    return
                if matched is not None:
                    continue  # the match told again: the search was resent after a reconnect
                yield response
                if response.match_update.WhichOneof("status") == "matched":
                    matched = response.match_update.matched
                    if not matched.watch_started:
                        return
        finally:
            searching = self._searches.pop(correlation, None) is not None
            if searching and matched is None and not self._closed:
                stop = play_pb2.StopFinding(find_correlation_id=correlation)
                self._outbox.put_nowait(play_pb2.PlayRequest(correlation_id=next(self._ids), stop_finding=stop))
            if matched is not None and matched.watch_started and not watched and not self._closed:
                # Left before the watch it started answered: nobody wants that game's events.
                self._last_event.pop(matched.game_id, None)
                stop_watch = play_pb2.StopWatching(game_id=matched.game_id)
                self._outbox.put_nowait(play_pb2.PlayRequest(correlation_id=next(self._ids), stop_watching=stop_watch))

    async def ping(self, nonce: int = 0) -> int:
        return int((await self._request(ping=play_pb2.Ping(nonce=nonce))).pong.nonce)

    async def events(self) -> AsyncIterator[play_pb2.GameEventDelivery]:
        while (delivery := await self._events.get()) is not None:
            yield delivery

    async def next_event(self, timeout: float | None = None) -> play_pb2.GameEventDelivery:
        events = self._events
        if events:
            delivery = events.get_nowait()  # already here (a mover's own event comes with its answer)
        else:
            delivery = await (events.get() if timeout is None else asyncio.wait_for(events.get(), timeout))
        if delivery is None:
            raise Unavailable("STREAM_CLOSED", "the play stream was closed")
        return delivery

    # -- the connection -------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._closed:
            raise Unavailable("STREAM_CLOSED", "the play stream was closed")

    async def _run(self) -> None:
        attempts = Attempts(self.max_reconnects)
        reconnecting = False  # the first connection sends what the outbox already holds
        lost = False  # told on_connection(False), not yet True
        while not self._closed:
            call = self.client.games.Play(metadata=self.client.metadata())
            writer = asyncio.get_running_loop().create_task(self._write(call))
            try:
                if reconnecting:
                    self._requeue()
                elif self.batch_responses:
                    self._outbox.put_nowait(self._set_options())
                async for response in call:
                    attempts.reset()
                    if lost:
                        lost = False
                        self._tell(True)
                    self._dispatch(response)
                # Ended with OK while this side still talks: the gateway stopped gracefully (it
                # said `reconnect` first). Not the end of the conversation: move and resume.
            except grpc.aio.AioRpcError as error:
                # CANCELLED here is the server's doing (this side cancels only in close()): a
                # gateway whose stop grace ran out. Like UNAVAILABLE, a reason to move.
                if error.code() not in (
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.INTERNAL,
                    grpc.StatusCode.CANCELLED,
                ):
                    self._fail_all(from_rpc_error(error))  # gRPC's own text is no message for people
                    return
            finally:
                writer.cancel()
                call.cancel()
            if self._closed:
                return
            reconnecting = True
            self.reconnects += 1
            if not lost:
                lost = True
                self._tell(False)
            if attempts.exhausted:
                self._fail_all(Unavailable("UNAVAILABLE", "the play stream could not reconnect"))
                return
            await attempts.failed()

    def _tell(self, up: bool) -> None:
        if self.on_connection is not None:
            self.on_connection(up)

    def _set_options(self) -> play_pb2.PlayRequest:
        return play_pb2.PlayRequest(correlation_id=0, set_options=play_pb2.PlayOptions(batch_responses=True))

    def _requeue(self) -> None:
        """What a new stream sends first: its options, the watches again from the last delivered
        events, then everything unanswered. What the old stream had not written yet is dropped
        (it is all in there again), except withdrawals of searches, which nothing else repeats."""
        kept: list[play_pb2.PlayRequest] = []
        while not self._outbox.empty():
            left = self._outbox.get_nowait()
            if left.WhichOneof("action") == "stop_finding":
                kept.append(left)
        if self.batch_responses:
            self._outbox.put_nowait(self._set_options())
        for game_id, last in self._last_event.items():
            watch = play_pb2.WatchGameRequest(game_id=game_id, after_event_id=last)
            self._outbox.put_nowait(play_pb2.PlayRequest(correlation_id=0, watch=watch))
        for request in kept:
            self._outbox.put_nowait(request)
        for request, _ in list(self._pending.values()):
            self._outbox.put_nowait(request)
        for request, _ in list(self._searches.values()):
            self._outbox.put_nowait(request)

    async def _write(self, call: Any) -> None:
        # A grpc.aio stream takes one write at a time: this task is its only writer.
        while True:
            request = await self._outbox.get()
            await call.write(request)

    def _dispatch(self, response: play_pb2.PlayResponse) -> None:
        kind = response.WhichOneof("kind")
        if kind == "event":
            self._deliver(response.event)
            return
        if kind == "batch":
            for item in response.batch.responses:
                if item.WhichOneof("kind") == "event":
                    self._deliver(item.event)
                else:
                    self._dispatch(item)
            return
        if kind == "reconnect":
            return  # the stream ends next; _run moves to another gateway and resends
        search = self._searches.get(response.correlation_id)
        if search is not None:
            if kind == "watching":
                # The watch the search started: a reconnect resumes it after this view, and no
                # longer resends the search.
                self._last_event[response.watching.summary.game_id] = response.watching.last_event_id
                del self._searches[response.correlation_id]
            search[1].put_nowait(response)
            return
        entry = self._pending.pop(response.correlation_id, None)
        if entry is not None and not entry[1].done():
            request = entry[0]
            if request.WhichOneof("action") == "watch" and response.WhichOneof("kind") == "watching":
                # A watch from "now": resume after the view it was answered with, not from "now"
                # again (the events in between would be lost on a reconnect).
                game_id = request.watch.game_id
                if game_id in self._last_event and not self._last_event[game_id]:
                    self._last_event[game_id] = response.watching.last_event_id
            entry[1].set_result(response)

    def _deliver(self, delivery: play_pb2.GameEventDelivery) -> None:
        game_id = delivery.game_id
        last = self._last_event.get(game_id)
        if last is not None:
            event = delivery.event
            event_id = event.event_id
            if last and not is_after(event_id, last):
                return  # already delivered before a reconnect
            if event.WhichOneof("kind") == "ended":
                # The gateway's watch ends with the game: nothing to resume or stop any more.
                del self._last_event[game_id]
            else:
                self._last_event[game_id] = event_id
        self._events.put_nowait(delivery)

    def _fail_all(self, error: TafelError) -> None:
        self._failure = error
        for _, future in self._pending.values():
            if not future.done():
                future.set_exception(error)
        self._pending.clear()
        for _, updates in self._searches.values():
            updates.put_nowait(None)
        self._events.put_nowait(None)


def _code(value: int) -> tuple[int, str]:
    for code in grpc.StatusCode:
        if code.value[0] == value:
            return code.value  # type: ignore[no-any-return]
    return grpc.StatusCode.UNKNOWN.value  # type: ignore[no-any-return]
