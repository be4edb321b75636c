"""GameService: read, move, resign, list, watch, the Play stream, and finished games' records.

The unary calls and WatchGame run the shared steps (steps.py) under kit.errors.refusing (a refusal
is the call's status, a Redis failure UNAVAILABLE); each Play stream is a PlaySession (session.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
from tafel.play.v1 import play_pb2, play_pb2_grpc
from tafel.rules.v1 import rules_pb2

from gateway.actions import Actions
from gateway.auth import Authenticator
from gateway.games import GameDirectory
from gateway.metrics import GatewayMetrics
from gateway.offers.service import Offers
from gateway.play.encoding import live_delivery, set_time
from gateway.play.session import MatchSource, PlaySession
from gateway.play.steps import GAME_STORE_UNAVAILABLE, ActionCounters, GameSteps
from gateway.records import Records
from gateway.watch.event_ids import check_event_id
from gateway.watch.hub import EventHub
from gateway.watch.watcher import LAST_OF_HISTORY
from kit import timesource
from kit.errors import Refused, abort, abort_stream, refusing


class GameServicer(play_pb2_grpc.GameServiceServicer):
    def __init__(
        self,
        auth: Authenticator,
        directory: GameDirectory,
        actions: Actions,
        hub: EventHub,
        records: Records,
        metrics: GatewayMetrics,
        *,
        lobby: MatchSource | None = None,
        offers: Offers | None = None,
        drain_s: float = 5.0,
    ) -> None:
        self.steps = GameSteps(auth, directory, actions, hub, metrics)  # (the parts, shared with the streams)
        self.auth = auth
        self.records = records
        self.metrics = metrics
        self.lobby = lobby  # matchmaking on the Play stream (None: a gateway without a lobby)
        self.offers = offers  # draw, takeback and rematch offers, abort (None: not offered here)
        self.stopping = asyncio.Event()
        self.drain_s = drain_s  # how long a stopping Play stream waits for its moves in flight
        self.unary = ActionCounters.of(metrics, "unary")
        self.stream = ActionCounters.of(metrics, "stream")

    def time_left(self, context: grpc.aio.ServicerContext[Any, Any]) -> float | None:
        """The caller's deadline, if it is shorter than the rules service timeout."""
        remaining: float | None = context.time_remaining()
        if remaining is None or remaining >= self.steps.router.timeout_s:
            return None
        return max(0.0, remaining)

    # -- unary RPCs ---------------------------------------------------------------------------------

    @refusing(GAME_STORE_UNAVAILABLE)
    async def GetGame(
        self, request: play_pb2.GetGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.GetGameResponse:
        identity = self.auth.identity(context.invocation_metadata())
        meta = await self.steps.meta(request.game_id, identity.player_id)
        response = await self.steps.game_view(meta, identity.player_id)
        if self.offers is not None:
            response.pending_offers.extend(await self.offers.pending(meta, response.summary.status))
        return response

    @refusing(GAME_STORE_UNAVAILABLE)
    async def SubmitMove(
        self, request: play_pb2.SubmitMoveRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.SubmitMoveResponse:
        started = time.perf_counter()
        try:
            identity = self.auth.identity(context.invocation_metadata())
            result = await self.steps.submit(identity, request, timeout_s=self.time_left(context))
        except BaseException:
            self.unary.refused.inc()
            raise
        self.unary.applied.inc()
        self.unary.latency.observe(time.perf_counter() - started)
        return result

    @refusing(GAME_STORE_UNAVAILABLE)
    async def Resign(
        self, request: play_pb2.ResignRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.ResignResponse:
        identity = self.auth.identity(context.invocation_metadata())
        return await self.steps.resign(identity, request, timeout_s=self.time_left(context))

    @refusing(GAME_STORE_UNAVAILABLE)
    async def ListMyGames(
        self, request: play_pb2.ListMyGamesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.ListMyGamesResponse:
        identity = self.auth.identity(context.invocation_metadata())
        games, token = await self.steps.directory.list_for_player(
            identity.player_id, request.page_size, request.page_token
        )
        return play_pb2.ListMyGamesResponse(games=games, next_page_token=token)

    @refusing(GAME_STORE_UNAVAILABLE)
    async def ListLiveGames(
        self, request: play_pb2.ListLiveGamesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.ListLiveGamesResponse:
        self.auth.identity(context.invocation_metadata())
        games, token = await self.steps.directory.list_live(request.game, request.page_size, request.page_token)
        return play_pb2.ListLiveGamesResponse(games=games, next_page_token=token)

    @refusing(GAME_STORE_UNAVAILABLE)
    async def GetGameRecord(
        self, request: play_pb2.GetGameRecordRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.GetGameRecordResponse:
        viewer = self.auth.identity(context.invocation_metadata())
        try:
            record = await self.records.get(request.game_id, viewer.player_id)
        except Refused as refused:
            if refused.code != grpc.StatusCode.NOT_FOUND or not await self._settled_now(request.game_id):
                raise
            # The game ended a moment ago and the process that ended it has not written the
            # record yet (or died before it could): settled now, so a finished game always has one.
            record = await self.records.get(request.game_id, viewer.player_id)
        if self.offers is not None:
            record.offers.extend(await self.offers.log(request.game_id))
        response = play_pb2.GetGameRecordResponse(record=record)
        if request.include_views:
            response.views.extend(await self._replay_views(record))
        return response

    async def _replay_views(self, record: play_pb2.GameRecord) -> list[Any]:
        """The record's positions from its rules service; none once the game's keys have expired
        or when its rules no longer rebuild it (the record stands without them: play.proto)."""
        try:
            views = await self.steps.router.replay_views(record.game, record.game_id)
        except Refused as refused:
            if refused.reason in ("GAME_NOT_FOUND", "REPLAY_UNAVAILABLE"):
                return []
            raise
        # A game's keys outlive its record's last action only by what it holds: a record of fewer
        # actions than the positions rebuilt (or more) is another game's, never shown as this one.
        return views if len(views) == len(record.actions) + 1 else []

    def _offers(self) -> Offers:
        if self.offers is None:
            raise Refused(grpc.StatusCode.UNIMPLEMENTED, "UNKNOWN_METHOD", "offers are not served here")
        return self.offers

    @refusing(GAME_STORE_UNAVAILABLE)
    async def MakeOffer(
        self, request: play_pb2.MakeOfferRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.MakeOfferResponse:
        identity = self.auth.identity(context.invocation_metadata())
        return play_pb2.MakeOfferResponse(offer=await self._offers().make(identity.player_id, request))

    @refusing(GAME_STORE_UNAVAILABLE)
    async def AnswerOffer(
        self, request: play_pb2.AnswerOfferRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.AnswerOfferResponse:
        identity = self.auth.identity(context.invocation_metadata())
        return play_pb2.AnswerOfferResponse(offer=await self._offers().answer(identity.player_id, request))

    @refusing(GAME_STORE_UNAVAILABLE)
    async def AbortGame(
        self, request: play_pb2.AbortGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.AbortGameResponse:
        identity = self.auth.identity(context.invocation_metadata())
        return play_pb2.AbortGameResponse(summary=await self._offers().abort(identity.player_id, request))

    async def _settled_now(self, game_id: str) -> bool:
        """Write the record of a game its rules service says is over; False if it is not (yet)."""
        try:
            meta = await self.steps.directory.meta(game_id)
        except Refused:
            return False
        if await self.records.exists(game_id):
            return True  # written meanwhile (the viewer may still not be allowed to see it)
        view = await self.steps.router.get_view(meta.game, rules_pb2.GetViewRequest(game_id=game_id))
        if not view.status.over:
            return False
        await self.steps.actions.settle(meta, view.status)  # idempotent: the record is written once
        return True

    @refusing(GAME_STORE_UNAVAILABLE)
    async def ListGameRecords(
        self, request: play_pb2.ListGameRecordsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.ListGameRecordsResponse:
        viewer = self.auth.identity(context.invocation_metadata())
        records, token = await self.records.list(
            player_id=request.player_id,
            game=request.game,
            page_size=request.page_size,
            page_token=request.page_token,
            viewer=viewer.player_id,
        )
        return play_pb2.ListGameRecordsResponse(records=records, next_page_token=token)

    # -- streams ------------------------------------------------------------------------------------

    # Responses may be pre-encoded bytes (see registration.py), hence the ignored overrides.
    @refusing(GAME_STORE_UNAVAILABLE)
    async def WatchGame(  # type: ignore[override]
        self, request: play_pb2.WatchGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[play_pb2.WatchGameResponse | bytes]:
        viewer = self.auth.identity(context.invocation_metadata())
        meta = await self.steps.meta(request.game_id, viewer.player_id)
        check_event_id(request.after_event_id)
        self.metrics.watch_streams.inc()
        try:
            async with self.steps.hub.watch(meta.game_id, request.after_event_id) as watch:
                # Subscribed: tell the client the watch is live before any event arrives.
                await context.send_initial_metadata(())
                async for event, source in watch.events():
                    current = watch.current
                    if current is not None:
                        self.metrics.events_sent.inc()
                        yield live_delivery(current[0], current[1], meta, False)
                        continue
                    response = play_pb2.WatchGameResponse(event=event)
                    if watch.status is not None and watch.status.version == event.version:
                        response.status.CopyFrom(watch.status)
                    if source == LAST_OF_HISTORY and event.WhichOneof("kind") != "ended":
                        set_time(response.turn_deadline, await self.steps.clocks.deadline(meta.game_id, event.version))
                    else:
                        deadline = self.steps.deadline_of(meta, event, source, timesource.now_s())
                        set_time(response.turn_deadline, deadline)
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
        finally:
            self.metrics.watch_streams.dec()

    async def Play(  # type: ignore[override]
        self, request_iterator: AsyncIterator[play_pb2.PlayRequest], context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        """The session's writer runs as a task of its own and sends with context.write. As an
        async generator here (or a coroutine awaited here) every resumption of the writer, two
        or more a move, passed through this frame and each interceptor's wrapper
        (kit/undecodable.py, gateway/limits.py); now this call waits once, for the stream's end.
        Cancelling the call cancels the writer through the await (and the finally, to be sure)."""
        try:
            identity = self.auth.identity(context.invocation_metadata())
        except Refused as refused:
            await abort_stream(request_iterator, context, refused)
        session = PlaySession(
            self.steps,
            identity,
            counters=self.stream,
            stopping=self.stopping,
            drain_s=self.drain_s,
            lobby=self.lobby,
        )
        self.metrics.play_streams.inc()
        writer = asyncio.get_running_loop().create_task(session.run(request_iterator, context.write))
        try:
            await writer
        except Refused as refused:  # the session broke (its reader failed): a status, not gRPC's text
            await abort(context, refused)
        finally:
            writer.cancel()
            self.metrics.play_streams.dec()
