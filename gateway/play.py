"""GameService: read, move, resign, list, watch, the play stream, and finished games' records.

Only a seated player moves, and only for their own seat (PERMISSION_DENIED otherwise); anyone
signed in may read and watch. Every input is checked before anything is written: ids are 1-64
characters of [A-Za-z0-9_-] (INVALID_ARGUMENT), a move must be for the game's own type, event ids
look like "12-1"; the server's max message size caps everything else.

The Play stream carries the unary calls' guarantees: the same request-id scoping (a retry on either
path gets the first answer), versions, and watches that resume from an event id. One writer (the
response generator) drains a queue; each action runs in its own task, so one slow game never holds
up another on the same stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Protocol

import grpc
from redis.exceptions import RedisError
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2, play_pb2_grpc
from tafel.rules.v1 import rules_pb2

from gateway.actions import Actions, Applied, rules_request_id
from gateway.auth import Authenticator, Identity
from gateway.games import GameDirectory, GameMeta, check_id, not_found
from gateway.metrics import GatewayMetrics
from gateway.records import Records
from gateway.watch.event_ids import check_event_id
from gateway.watch.hub import EventHub
from gateway.watch.watcher import LAST_OF_HISTORY, LIVE, LiveBatch
from kit.errors import Refused, abort, abort_stream, invalid

log = logging.getLogger("tafel.gateway.play")
MAX_IN_FLIGHT_PER_STREAM = 256
OUT_QUEUE_LIMIT = 4096
# How long a batching stream's answer waits for its action's own events (they come by pub/sub,
# which can lag the answer on a busy gateway) before it leaves without them.
OWN_EVENTS_WAIT_S = 0.5


def permission_denied(reason: str, message: str) -> Refused:
    return Refused(grpc.StatusCode.PERMISSION_DENIED, reason, message)


def unavailable() -> Refused:
    return Refused(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE", "game storage is unavailable; retry")


def resolve_seat(meta: GameMeta, player_id: str, requested: int | None) -> int:
    seats = meta.seats_of(player_id)
    if not seats:
        raise permission_denied("NOT_A_PLAYER", "you do not play in this game")
    if requested is not None:
        if requested not in seats:
            raise permission_denied("NOT_YOUR_SEAT", f"seat {requested} is not yours")
        return requested
    if len(seats) > 1:
        raise invalid("SEAT_REQUIRED", "you hold several seats in this game: name the seat", field="seat")
    return seats[0]


def refusal_of(refused: Refused) -> play_pb2.Refusal:
    refusal = play_pb2.Refusal(code=refused.code.value[0], reason=refused.reason, message=refused.message)
    if refused.current_version is not None:
        refusal.current_version = refused.current_version
    return refusal


def _answer_version(response: play_pb2.PlayResponse) -> int:
    """The version an action's answer reports (0 for a refusal)."""
    kind = response.WhichOneof("kind")
    if kind == "move_accepted":
        return int(response.move_accepted.version)
    if kind == "resigned":
        return int(response.resigned.version)
    return 0


def _set_time(target: Any, seconds: float | None) -> None:
    if seconds is not None:
        target.FromMilliseconds(int(seconds * 1000))


def _live_delivery(live: LiveBatch, index: int, meta: GameMeta, play: bool) -> bytes:
    """The encoded Play (or WatchGame) response for a live event, built once per gateway and
    shared by every local watcher of the game. Its turn deadline is the batch's arrival plus the
    per-move time (see deadline_of)."""
    key = (play, index)
    data = live.encoded.get(key)
    if data is not None:
        return data
    batch = live.batch
    event = batch.events[index]
    response: play_pb2.PlayResponse | play_pb2.WatchGameResponse
    if play:
        response = play_pb2.PlayResponse()
        delivery: Any = response.event
        delivery.game_id = meta.game_id
    else:
        response = delivery = play_pb2.WatchGameResponse()
    delivery.event.CopyFrom(event)
    if batch.HasField("status") and batch.status.version == event.version:
        delivery.status.CopyFrom(batch.status)
    if event.WhichOneof("kind") != "ended":
        delivery.turn_deadline.FromMilliseconds(int((live.received + meta.per_move_s) * 1000))
    data = live.encoded[key] = response.SerializeToString()
    return data


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_BATCH_TAG = b"\x4a"  # PlayResponse.batch: field 9, length-delimited
_RESPONSES_TAG = b"\x0a"  # PlayResponseBatch.responses: field 1, length-delimited


def encode_batch(items: list[play_pb2.PlayResponse | bytes]) -> bytes:
    """A PlayResponse holding `items` in its batch, built from their encodings (live event
    deliveries are already encoded and shared, so they are never decoded again)."""
    parts = []
    for item in items:
        data = item if type(item) is bytes else item.SerializeToString()  # type: ignore[union-attr]
        parts.append(_RESPONSES_TAG + _varint(len(data)) + data)
    inner = b"".join(parts)
    return _BATCH_TAG + _varint(len(inner)) + inner


def _encoded_or_message(message: Any) -> bytes:
    """Response serializer of the event streams: responses may come already encoded."""
    if type(message) is bytes:
        return message
    data: bytes = message.SerializeToString()
    return data


class MatchSource(Protocol):
    """The lobby's matchmaking as the Play stream uses it (gateway/lobby.py)."""

    def match_updates(
        self, player: play_pb2.Player, request: play_pb2.FindMatchRequest
    ) -> AsyncGenerator[play_pb2.FindMatchResponse, None]: ...


class _Handlers:
    """Collects the generated method handlers instead of registering them."""

    handlers: dict[str, grpc.RpcMethodHandler]

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        pass

    def add_registered_method_handlers(self, service: str, handlers: dict[str, grpc.RpcMethodHandler]) -> None:
        self.handlers = handlers


def add_game_service(servicer: GameServicer, server: grpc.aio.Server) -> None:
    """Register GameService with Play and WatchGame taking pre-encoded responses (shared event
    deliveries); everything else is the generated registration."""
    collected = _Handlers()
    play_pb2_grpc.add_GameServiceServicer_to_server(servicer, collected)
    handlers = dict(collected.handlers)
    handlers["Play"] = grpc.stream_stream_rpc_method_handler(
        servicer.Play,
        request_deserializer=play_pb2.PlayRequest.FromString,
        response_serializer=_encoded_or_message,
    )
    handlers["WatchGame"] = grpc.unary_stream_rpc_method_handler(
        servicer.WatchGame,
        request_deserializer=play_pb2.WatchGameRequest.FromString,
        response_serializer=_encoded_or_message,
    )
    service = "tafel.play.v1.GameService"
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    server.add_registered_method_handlers(service, handlers)


class GameServicer(play_pb2_grpc.GameServiceServicer):
    def __init__(
        self,
        auth: Authenticator,
        directory: GameDirectory,
        actions: Actions,
        hub: EventHub,
        records: Records,
        metrics: GatewayMetrics,
    ) -> None:
        self.auth = auth
        self.directory = directory
        self.actions = actions
        self.router = actions.router
        self.clocks = actions.clocks
        self.hub = hub
        self.records = records
        self.metrics = metrics
        self.lobby: MatchSource | None = None  # set by the server: matchmaking on the Play stream
        self.stopping = asyncio.Event()
        self.drain_s = 5.0
        self.m_unary_applied = metrics.actions.labels("unary", "applied")
        self.m_unary_refused = metrics.actions.labels("unary", "refused")
        self.m_unary_latency = metrics.latency.labels("unary")
        self.m_stream_applied = metrics.actions.labels("stream", "applied")
        self.m_stream_refused = metrics.actions.labels("stream", "refused")
        self.m_stream_latency = metrics.latency.labels("stream")

    # -- shared steps -------------------------------------------------------------------------------

    async def _meta(self, game_id: str, viewer: str) -> GameMeta:
        """The game's metadata for a viewer; a private room's game is NOT_FOUND to strangers
        (the same answer as for no game, so its existence is not confirmed either)."""
        check_id("game_id", game_id)
        meta = await self.directory.meta(game_id)
        if not meta.visible_to(viewer):
            raise not_found(game_id)
        return meta

    async def game_view(self, meta: GameMeta, player_id: str) -> play_pb2.GetGameResponse:
        seats = meta.seats_of(player_id)
        request = rules_pb2.GetViewRequest(game_id=meta.game_id)
        if seats:
            request.seat = seats[0]
        view = await self.router.get_view(meta.game, request)
        response = play_pb2.GetGameResponse(
            summary=await self.directory.summary(meta.game_id, view.status, meta),
            view=view.view,
            last_event_id=view.last_event_id,
        )
        if seats:
            response.seat = seats[0]
        return response

    async def submit(
        self,
        identity: Identity,
        request: play_pb2.SubmitMoveRequest,
        into: play_pb2.SubmitMoveResponse | None = None,
        timeout_s: float | None = None,
        shielded: bool = True,
    ) -> play_pb2.SubmitMoveResponse:
        check_id("game_id", request.game_id)
        check_id("request_id", request.request_id)
        if not request.HasField("move") or request.move.WhichOneof("game") is None:
            raise invalid("MOVE_MISSING", "set the move", field="move")
        meta = await self.directory.meta(request.game_id)
        seat = resolve_seat(meta, identity.player_id, request.seat if request.HasField("seat") else None)
        if request.move.WhichOneof("game") != meta.game:
            raise invalid("WRONG_GAME", f"this is a {meta.game} game: send a {meta.game} move", field="move")
        applied = await self.actions.apply(
            meta,
            seat,
            expected_version=request.expected_version,
            request_id=rules_request_id(seat, request.request_id),
            move=request.move,
            timeout_s=timeout_s,
            shielded=shielded,
        )
        response = play_pb2.SubmitMoveResponse() if into is None else into
        response.version = applied.response.version
        response.events.extend(applied.response.events)
        response.status.CopyFrom(applied.response.status)
        _set_time(response.turn_deadline, applied.deadline)
        return response

    async def resign(
        self, identity: Identity, request: play_pb2.ResignRequest, timeout_s: float | None = None
    ) -> play_pb2.ResignResponse:
        check_id("game_id", request.game_id)
        check_id("request_id", request.request_id)
        meta = await self.directory.meta(request.game_id)
        seat = resolve_seat(meta, identity.player_id, request.seat if request.HasField("seat") else None)
        rid = rules_request_id(seat, request.request_id)
        # A resignation is valid at any version: read the current one, retry once on a race.
        applied: Applied | None = None
        for _ in range(3):
            view = await self.router.get_view(meta.game, rules_pb2.GetViewRequest(game_id=meta.game_id))
            try:
                applied = await self.actions.apply(
                    meta, seat, expected_version=view.status.version, request_id=rid, resign=True, timeout_s=timeout_s
                )
                break
            except Refused as refused:
                if refused.code != grpc.StatusCode.ABORTED:
                    raise
        if applied is None:
            raise Refused(grpc.StatusCode.ABORTED, "VERSION_MISMATCH", "the game kept moving; retry")
        return play_pb2.ResignResponse(
            version=applied.response.version, events=applied.response.events, status=applied.response.status
        )

    def deadline_of(self, meta: GameMeta, event: games_pb2.GameEvent, source: int, received: float) -> float | None:
        """The turn deadline in force after a live event: its arrival plus the per-move time (the
        authoritative deadline lives in Redis; GetGame reads it)."""
        if event.WhichOneof("kind") == "ended" or source != LIVE:
            return None
        return received + meta.per_move_s

    def time_left(self, context: grpc.aio.ServicerContext[Any, Any]) -> float | None:
        """The caller's deadline, if it is shorter than the rules service timeout."""
        remaining: float | None = context.time_remaining()
        if remaining is None or remaining >= self.router.timeout_s:
            return None
        return max(0.0, remaining)

    # -- unary RPCs ---------------------------------------------------------------------------------

    async def _guard(self, context: grpc.aio.ServicerContext[Any, Any], work: Any) -> Any:
        try:
            return await work
        except Refused as refused:
            await abort(context, refused)
        except RedisError:
            await abort(context, unavailable())

    async def GetGame(
        self, request: play_pb2.GetGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.GetGameResponse:
        async def work() -> play_pb2.GetGameResponse:
            identity = self.auth.identity(context.invocation_metadata())
            return await self.game_view(await self._meta(request.game_id, identity.player_id), identity.player_id)

        result: play_pb2.GetGameResponse = await self._guard(context, work())
        return result

    async def SubmitMove(
        self, request: play_pb2.SubmitMoveRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.SubmitMoveResponse:
        started = time.perf_counter()

        async def work() -> play_pb2.SubmitMoveResponse:
            identity = self.auth.identity(context.invocation_metadata())
            return await self.submit(identity, request, timeout_s=self.time_left(context))

        try:
            result: play_pb2.SubmitMoveResponse = await self._guard(context, work())
        except BaseException:
            self.m_unary_refused.inc()
            raise
        self.m_unary_applied.inc()
        self.m_unary_latency.observe(time.perf_counter() - started)
        return result

    async def Resign(
        self, request: play_pb2.ResignRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.ResignResponse:
        async def work() -> play_pb2.ResignResponse:
            identity = self.auth.identity(context.invocation_metadata())
            return await self.resign(identity, request, timeout_s=self.time_left(context))

        result: play_pb2.ResignResponse = await self._guard(context, work())
        return result

    async def ListMyGames(
        self, request: play_pb2.ListMyGamesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.ListMyGamesResponse:
        async def work() -> play_pb2.ListMyGamesResponse:
            identity = self.auth.identity(context.invocation_metadata())
            games, token = await self.directory.list_for_player(
                identity.player_id, request.page_size, request.page_token
            )
            return play_pb2.ListMyGamesResponse(games=games, next_page_token=token)

        result: play_pb2.ListMyGamesResponse = await self._guard(context, work())
        return result

    async def ListLiveGames(
        self, request: play_pb2.ListLiveGamesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.ListLiveGamesResponse:
        async def work() -> play_pb2.ListLiveGamesResponse:
            self.auth.identity(context.invocation_metadata())
            games, token = await self.directory.list_live(request.game, request.page_size, request.page_token)
            return play_pb2.ListLiveGamesResponse(games=games, next_page_token=token)

        result: play_pb2.ListLiveGamesResponse = await self._guard(context, work())
        return result

    async def GetGameRecord(
        self, request: play_pb2.GetGameRecordRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.GetGameRecordResponse:
        async def work() -> play_pb2.GetGameRecordResponse:
            viewer = self.auth.identity(context.invocation_metadata())
            try:
                record = await self.records.get(request.game_id, viewer.player_id)
            except Refused as refused:
                if refused.code != grpc.StatusCode.NOT_FOUND or not await self._settled_now(request.game_id):
                    raise
                # The game ended a moment ago and the process that ended it has not written the
                # record yet (or died before it could): settled now, so a finished game always has one.
                record = await self.records.get(request.game_id, viewer.player_id)
            return play_pb2.GetGameRecordResponse(record=record)

        result: play_pb2.GetGameRecordResponse = await self._guard(context, work())
        return result

    async def _settled_now(self, game_id: str) -> bool:
        """Write the record of a game its rules service says is over; False if it is not (yet)."""
        try:
            meta = await self.directory.meta(game_id)
        except Refused:
            return False
        if await self.records.exists(game_id):
            return True  # written meanwhile (the viewer may still not be allowed to see it)
        view = await self.router.get_view(meta.game, rules_pb2.GetViewRequest(game_id=game_id))
        if not view.status.over:
            return False
        await self.actions.settle(meta, view.status)  # idempotent: the record is written once
        return True

    async def ListGameRecords(
        self, request: play_pb2.ListGameRecordsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.ListGameRecordsResponse:
        async def work() -> play_pb2.ListGameRecordsResponse:
            viewer = self.auth.identity(context.invocation_metadata())
            records, token = await self.records.list(
                player_id=request.player_id, game=request.game, page_size=request.page_size,
                page_token=request.page_token, viewer=viewer.player_id,
            )
            return play_pb2.ListGameRecordsResponse(records=records, next_page_token=token)

        result: play_pb2.ListGameRecordsResponse = await self._guard(context, work())
        return result

    # -- streams ------------------------------------------------------------------------------------

    # Responses may be pre-encoded bytes (see add_game_service), hence the ignored overrides.
    async def WatchGame(  # type: ignore[override]
        self, request: play_pb2.WatchGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[play_pb2.WatchGameResponse | bytes]:
        try:
            viewer = self.auth.identity(context.invocation_metadata())
            meta = await self._meta(request.game_id, viewer.player_id)
            check_event_id(request.after_event_id)
        except Refused as refused:
            await abort(context, refused)
        except RedisError:
            await abort(context, unavailable())
        self.metrics.watch_streams.inc()
        try:
            async with self.hub.watch(meta.game_id, request.after_event_id) as watch:
                # Subscribed: tell the client the watch is live before any event arrives.
                await context.send_initial_metadata(())
                async for event, source in watch.events():
                    current = watch.current
                    if current is not None:
                        self.metrics.events_sent.inc()
                        yield _live_delivery(current[0], current[1], meta, False)
                        continue
                    response = play_pb2.WatchGameResponse(event=event)
                    if watch.status is not None and watch.status.version == event.version:
                        response.status.CopyFrom(watch.status)
                    if source == LAST_OF_HISTORY and event.WhichOneof("kind") != "ended":
                        _set_time(response.turn_deadline, await self.clocks.deadline(meta.game_id, event.version))
                    else:
                        _set_time(response.turn_deadline, self.deadline_of(meta, event, source, time.time()))
                    self.metrics.events_sent.inc()
                    yield response
            if self.stopping.is_set():
                # The gateway is stopping, not the game over: a retryable end, so clients watch
                # again elsewhere from their last event id rather than take it for the game's end.
                raise Refused(
                    grpc.StatusCode.UNAVAILABLE,
                    "GATEWAY_STOPPING",
                    "this gateway is stopping; watch again (elsewhere) from your last event id",
                )
        except Refused as refused:
            await abort(context, refused)
        except RedisError:
            await abort(context, unavailable())
        finally:
            self.metrics.watch_streams.dec()

    async def Play(  # type: ignore[override]
        self, request_iterator: AsyncIterator[play_pb2.PlayRequest], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[play_pb2.PlayResponse | bytes]:
        try:
            identity = self.auth.identity(context.invocation_metadata())
        except Refused as refused:
            await abort_stream(request_iterator, context, refused)
        session = PlaySession(self, identity)
        self.metrics.play_streams.inc()
        try:
            async for response in session.run(request_iterator):
                yield response
        finally:
            self.metrics.play_streams.dec()


_DONE = None
MAX_BATCH = 64  # responses in one batched message


class PlaySession:
    """One Play stream: a reader task, one task per action, one pump per watched game, and the
    response generator as the only writer."""

    def __init__(self, servicer: GameServicer, identity: Identity) -> None:
        self.servicer = servicer
        self.identity = identity
        # Responses, live event deliveries already encoded (shared by every local watcher), or a
        # group that must leave in one message (an action's parked events and its answer).
        self.out: asyncio.Queue[play_pb2.PlayResponse | bytes | list[play_pb2.PlayResponse | bytes] | None] = (
            asyncio.Queue(OUT_QUEUE_LIMIT)
        )
        self.batching = False  # PlayOptions.batch_responses
        # With batching, a watched game's events that arrive while this stream's own action on
        # that game is in flight wait for its answer and leave with it in one message.
        self.acting: dict[str, int] = {}
        self.parked: dict[str, list[play_pb2.PlayResponse | bytes]] = {}
        self.passed: dict[str, int] = {}  # game -> the newest event version passed on (or parked)
        self.progress = asyncio.Event()  # set whenever `passed` moves
        self.slots = asyncio.Semaphore(MAX_IN_FLIGHT_PER_STREAM)
        self.actions: set[asyncio.Task[None]] = set()
        self.watches: dict[str, asyncio.Task[None]] = {}
        self.finds: dict[int, asyncio.Task[None]] = {}  # find_match correlation id -> its search
        self.reading_done = False
        self.closed = False  # the response stream ended: answers of late actions are dropped

    async def run(
        self, requests: AsyncIterator[play_pb2.PlayRequest]
    ) -> AsyncIterator[play_pb2.PlayResponse | bytes]:
        loop = asyncio.get_running_loop()
        reader = loop.create_task(self._read(requests))
        stopping = loop.create_task(self._drain_when_stopping(reader))
        try:
            while True:
                response = await self.out.get()
                if response is _DONE:
                    break
                if not self.batching:
                    assert not isinstance(response, list)
                    yield response
                    continue
                items = list(response) if isinstance(response, list) else [response]
                ended = False
                while len(items) < MAX_BATCH and not self.out.empty():
                    more = self.out.get_nowait()
                    if more is _DONE:
                        ended = True
                        break
                    if isinstance(more, list):
                        items.extend(more)
                    else:
                        items.append(more)
                yield items[0] if len(items) == 1 else encode_batch(items)
                if ended:
                    break
        finally:
            # Action tasks are never cancelled: once sent, an action and its bookkeeping finish
            # (this is what lets them run unshielded, one task per move).
            self.closed = True
            stopping.cancel()
            reader.cancel()
            for task in (*self.watches.values(), *self.finds.values()):
                task.cancel()
            while not self.out.empty():  # wakes any action waiting for room, so it can end
                self.out.get_nowait()

    async def _drain_when_stopping(self, reader: asyncio.Task[None]) -> None:
        """The gateway is stopping: take no more requests, let the actions in flight finish and
        answer, then end the stream (the client resumes elsewhere from its last event id)."""
        await self.servicer.stopping.wait()
        reader.cancel()
        for task in (*self.watches.values(), *self.finds.values()):
            task.cancel()
        if self.actions:
            await asyncio.wait(tuple(self.actions), timeout=self.servicer.drain_s)
        # Said before the end, so a client tells a graceful stop from a finished conversation and
        # reconnects (to another gateway: this one no longer takes calls) with what is unanswered.
        move = play_pb2.Reconnect(reason="GATEWAY_STOPPING")
        await self.out.put(play_pb2.PlayResponse(reconnect=move))
        await self.out.put(_DONE)

    def _check_session(self) -> None:
        if self.identity.expires_at <= time.time():
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED", "the session has expired; sign in again")
        self.servicer.auth.check_not_revoked(self.identity)  # signed out while the stream is open

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
                    await self.slots.acquire()
                    task = asyncio.get_running_loop().create_task(self._act(request))
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
        finally:
            self.reading_done = True
            for task in self.finds.values():  # a client that stopped sending leaves the queues
                task.cancel()
            if self.actions:
                await asyncio.gather(*tuple(self.actions), return_exceptions=True)
            if not self.watches:
                await self.out.put(_DONE)

    def _action_done(self, task: asyncio.Task[None]) -> None:
        self.actions.discard(task)
        self.slots.release()

    async def _act(self, request: play_pb2.PlayRequest) -> None:
        response = play_pb2.PlayResponse(correlation_id=request.correlation_id)
        submit = request.WhichOneof("action") == "submit_move"
        game_id = request.submit_move.game_id if submit else request.resign.game_id
        parking = self.batching
        if parking:
            self.acting[game_id] = self.acting.get(game_id, 0) + 1
        try:
            await self._act_on(request, response)
            if parking and game_id in self.watches:
                await self._own_events(game_id, _answer_version(response))
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
        await self.out.put([*parked, response] if parked else response)

    async def _act_on(self, request: play_pb2.PlayRequest, response: play_pb2.PlayResponse) -> None:
        servicer = self.servicer
        started = time.perf_counter()
        try:
            if request.WhichOneof("action") == "submit_move":
                await servicer.submit(self.identity, request.submit_move, into=response.move_accepted, shielded=False)
            else:
                response.resigned.CopyFrom(await servicer.resign(self.identity, request.resign))
            servicer.m_stream_applied.inc()
            servicer.m_stream_latency.observe(time.perf_counter() - started)
        except Refused as refused:
            response.Clear()
            response.correlation_id = request.correlation_id
            response.refusal.CopyFrom(refusal_of(refused))
            servicer.m_stream_refused.inc()
        except RedisError:
            response.Clear()
            response.correlation_id = request.correlation_id
            response.refusal.CopyFrom(refusal_of(unavailable()))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("action failed")
            response.Clear()
            response.correlation_id = request.correlation_id
            response.refusal.CopyFrom(
                refusal_of(Refused(grpc.StatusCode.INTERNAL, "INTERNAL", "the action failed; retry"))
            )

    async def _own_events(self, game_id: str, version: int) -> None:
        """Hold a batching stream's answer until the pump has passed on its action's events (so
        they leave together, events first), at most OWN_EVENTS_WAIT_S."""
        if not version:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + OWN_EVENTS_WAIT_S
        while self.passed.get(game_id, 0) < version and game_id in self.watches:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            self.progress.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.progress.wait(), remaining)

    async def _deliver(self, game_id: str, delivery: play_pb2.PlayResponse | bytes, version: int) -> None:
        """A watched game's event: parked while this stream's own action on the game is in
        flight (batching streams only), else queued."""
        if version > self.passed.get(game_id, 0):
            self.passed[game_id] = version
            self.progress.set()
        if game_id in self.acting:
            self.parked.setdefault(game_id, []).append(delivery)
            return
        await self.out.put(delivery)

    def _release_all_parked(self) -> None:
        for game_id in tuple(self.parked):
            for delivery in self.parked.pop(game_id):
                with contextlib.suppress(asyncio.QueueFull):
                    self.out.put_nowait(delivery)

    def _start_find(self, correlation: int, request: play_pb2.FindMatchRequest) -> None:
        previous = self.finds.pop(correlation, None)
        if previous is not None:  # the same request again (a resend): the new search replaces it
            previous.cancel()
        task = asyncio.get_running_loop().create_task(self._find(correlation, request, previous))
        self.finds[correlation] = task

        def done(finished: asyncio.Task[None]) -> None:
            if self.finds.get(correlation) is finished:
                del self.finds[correlation]

        task.add_done_callback(done)

    async def _find(
        self, correlation: int, request: play_pb2.FindMatchRequest, previous: asyncio.Task[None] | None
    ) -> None:
        lobby = self.servicer.lobby
        if previous is not None:
            await asyncio.wait((previous,))  # its ticket leaves the queue first
        try:
            if lobby is None:
                raise Refused(grpc.StatusCode.UNIMPLEMENTED, "NO_LOBBY", "this gateway has no matchmaking")
            async with contextlib.aclosing(lobby.match_updates(self.identity.player(), request)) as updates:
                async for update in updates:
                    await self.out.put(play_pb2.PlayResponse(correlation_id=correlation, match_update=update))
        except Refused as refused:
            await self.out.put(play_pb2.PlayResponse(correlation_id=correlation, refusal=refusal_of(refused)))
        except RedisError:
            await self.out.put(play_pb2.PlayResponse(correlation_id=correlation, refusal=refusal_of(unavailable())))

    def _start_watch(self, correlation: int, request: play_pb2.WatchGameRequest) -> None:
        self.parked.pop(request.game_id, None)  # the new watch replays from its own position
        previous = self.watches.pop(request.game_id, None)
        if previous is not None:
            previous.cancel()
        task = asyncio.get_running_loop().create_task(self._pump(correlation, request))
        self.watches[request.game_id] = task

        def done(finished: asyncio.Task[None]) -> None:
            if self.watches.get(request.game_id) is finished:
                del self.watches[request.game_id]
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

    async def _pump(self, correlation: int, request: play_pb2.WatchGameRequest) -> None:
        servicer = self.servicer
        try:
            meta = await servicer._meta(request.game_id, self.identity.player_id)
            check_event_id(request.after_event_id)
            async with servicer.hub.watch(meta.game_id, request.after_event_id) as watch:
                view = await servicer.game_view(meta, self.identity.player_id)
                if not request.after_event_id:
                    # One rule (play.proto, WatchGameRequest): with no id the view stands for the
                    # history, and only events after it follow; with an id, the events after it.
                    watch.start_after(view.last_event_id)
                await watch.prepare()  # a bad starting point is refused before the answer
                await self.out.put(play_pb2.PlayResponse(correlation_id=correlation, watching=view))
                async for event, source in watch.events():
                    current = watch.current
                    if current is not None:
                        servicer.metrics.events_sent.inc()
                        live = _live_delivery(current[0], current[1], meta, True)
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
                            deadline = await servicer.clocks.deadline(meta.game_id, event.version)
                            _set_time(delivery.turn_deadline, deadline)
                    else:
                        _set_time(delivery.turn_deadline, servicer.deadline_of(meta, event, source, time.time()))
                    servicer.metrics.events_sent.inc()
                    await self._deliver(meta.game_id, play_pb2.PlayResponse(event=delivery), event.version)
        except Refused as refused:
            await self.out.put(play_pb2.PlayResponse(correlation_id=correlation, refusal=refusal_of(refused)))
        except RedisError:
            await self.out.put(play_pb2.PlayResponse(correlation_id=correlation, refusal=refusal_of(unavailable())))
