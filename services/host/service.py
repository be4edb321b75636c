"""The gRPC adapter that turns any pure rules module into a `tafel.rules.v1.RulesService`.

ApplyMove and every action on the ApplyMoves stream take one path, MovePath.act
(services/host/moves.py); the stream's plumbing is services/host/stream.py. Here: the RPCs, a new
game (CreateGame) and a view (GetView). The state cache (services/host/cache.py) is only a cache:
every write is checked against Redis, so any replica can serve any game.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Sequence
from typing import Any, Generic, TypeVar

import grpc
from redis.exceptions import RedisError
from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2, rules_pb2_grpc
from tafel_rules.game import InvalidOptions, Rules

from kit.errors import Refused, abort, invalid
from kit.handlers import add_pre_encoded
from kit.ids import check_id
from services.host.cache import CachedGame, GameCache
from services.host.codec import GameCodec, GameEnvelope, MalformedMessage, outcome_to_proto
from services.host.describe import describe_game
from services.host.metrics import RulesMetrics
from services.host.moves import MovePath, unavailable
from services.host.store import Exists, GameStore, NewEvent, Replayed, StoredGame, commit_keys
from services.host.stream import ApplyMovesStream, StreamCalls
from services.host.views import ReplayViews

StateT = TypeVar("StateT")
MoveT = TypeVar("MoveT")
OptionsT = TypeVar("OptionsT")
EventT = TypeVar("EventT")
ViewT = TypeVar("ViewT")

# The methods whose answers are joined bytes (services/host/encoded.py says why; add_rules_service).
PRE_ENCODED = ("ApplyMove", "ApplyMoves")


class RulesServicer(rules_pb2_grpc.RulesServiceServicer, Generic[StateT, MoveT, OptionsT, EventT, ViewT]):
    def __init__(
        self,
        rules: Rules[StateT, MoveT, OptionsT, EventT, ViewT],
        codec: GameCodec[StateT, MoveT, OptionsT, EventT, ViewT],
        store: GameStore,
        metrics: RulesMetrics,
        *,
        cache_games: int = 10_000,
        rules_url: str = "",
    ) -> None:
        self.rules = rules
        self.rules_url = rules_url
        self.codec = codec
        self.envelope = GameEnvelope(codec)
        self.store = store
        self.replays = ReplayViews(rules, codec, store)  # GetReplayViews (services/host/views.py)
        self.metrics = metrics
        self.cache: GameCache[StateT] = GameCache(cache_games)
        metrics.cached_games.set_function(lambda: len(self.cache))
        self.moves = MovePath(rules, codec, store, metrics, self.cache)
        self._stream_calls = StreamCalls(self.moves.act, self.create, self.view, self.moves.begin, self.moves.end)

    def _status(self, state: StateT, version: int) -> games_pb2.GameStatus:
        outcome = self.rules.outcome(state)
        status = games_pb2.GameStatus(
            version=version, to_act=sorted(self.rules.to_act(state)), over=outcome is not None
        )
        if outcome is not None:
            status.outcome.CopyFrom(outcome_to_proto(outcome))
        return status

    # -- RPCs ---------------------------------------------------------------------------------------

    async def DescribeGame(
        self, request: rules_pb2.DescribeGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> rules_pb2.DescribeGameResponse:
        return describe_game(self.rules, self.codec, self.rules_url)

    async def CreateGame(
        self, request: rules_pb2.CreateGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> rules_pb2.CreateGameResponse:
        try:
            return await self.create(request)
        except Refused as refused:
            await abort(context, refused)

    # Pre-encoded answers: bytes, not the generated response class (services/host/encoded.py says why,
    # with the figure), so these two override the generated servicer's signatures.
    async def ApplyMove(  # type: ignore[override]
        self, request: rules_pb2.ApplyMoveRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes:
        try:
            return await self.moves.act(request)
        except MalformedMessage as bad:
            await abort(context, invalid(bad.reason, bad.message))
        except Refused as refused:
            await abort(context, refused)

    async def ApplyMoves(  # type: ignore[override]
        self,
        request_iterator: AsyncIterator[rules_pb2.ApplyMovesRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[bytes]:
        # (An async generator itself: gRPC serves a stream from one, not from a function returning it.)
        answers = ApplyMovesStream(self._stream_calls, self.metrics).run(request_iterator, context)
        try:
            async for answer in answers:
                yield answer
        finally:
            await answers.aclose()

    async def GetView(
        self, request: rules_pb2.GetViewRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> rules_pb2.GetViewResponse:
        try:
            return await self.view(request)
        except Refused as refused:
            await abort(context, refused)

    async def GetReplayViews(
        self, request: rules_pb2.GetReplayViewsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> rules_pb2.GetReplayViewsResponse:
        try:
            return await self.replays.views(request)
        except Refused as refused:
            await abort(context, refused)

    # -- the work, shared by the RPCs and the stream (Refused; a Redis failure is retryable) --------

    async def create(self, request: rules_pb2.CreateGameRequest) -> rules_pb2.CreateGameResponse:
        try:
            return await self._create(request)
        except RedisError as error:
            raise unavailable(error) from None

    async def view(self, request: rules_pb2.GetViewRequest) -> rules_pb2.GetViewResponse:
        try:
            return await self._view(request)
        except RedisError as error:
            raise unavailable(error) from None

    async def _create(self, request: rules_pb2.CreateGameRequest) -> rules_pb2.CreateGameResponse:
        check_id("game_id", request.game_id)
        check_id("request_id", request.request_id, required=False)
        try:
            options = self.envelope.options_from_union(request.options, self.rules.default_options())
            self.rules.check_options(options, request.seats)
        except MalformedMessage as bad:
            raise invalid(bad.reason, bad.message) from None
        except InvalidOptions as bad:
            raise invalid("BAD_OPTIONS", bad.message, field=bad.field) from None
        seed = request.seed or secrets.randbits(63)
        state = self.rules.new_game(options, request.seats, seed)
        options_union = self.envelope.options_to_union(options)
        created = games_pb2.GameEvent(event_id="0-1", version=0)
        created.created.game = self.rules.name
        created.created.seats = request.seats
        created.created.options.CopyFrom(options_union)
        opening = [created]
        more = self.envelope.events_to_union(self.rules.opening_events(state), 0)
        for index, event in enumerate(more, start=2):  # (GameCreated is 0-1)
            event.event_id = f"0-{index}"
        opening.extend(more)
        response = rules_pb2.CreateGameResponse(
            game_id=request.game_id, options=options_union, status=self._status(state, 0), events=opening
        )
        options_bytes = options_union.SerializeToString()
        state_bytes = self.codec.state_to_bytes(state)
        window_from = 0 if self.rules.commute_window(state) is not None else None
        result = await self.store.create(
            game_id=request.game_id,
            request_id=request.request_id,
            game=self.rules.name,
            seats=request.seats,
            options=options_bytes,
            state=state_bytes,
            seed=seed,
            created=[NewEvent(event.event_id, event.SerializeToString()) for event in opening],
            response=response.SerializeToString(),
            publish=games_pb2.GameEventBatch(
                game_id=request.game_id, events=opening, status=response.status
            ).SerializeToString(),
            status=response.status.SerializeToString(),
            window_from=window_from,
        )
        if isinstance(result, Replayed):
            return rules_pb2.CreateGameResponse.FromString(result.response)
        if isinstance(result, Exists):
            raise Refused(grpc.StatusCode.ALREADY_EXISTS, "GAME_EXISTS", f"a game {request.game_id} exists already")
        self.metrics.games_created.inc()
        # The first move usually comes here next (routing is by game): start it from memory.
        stored = StoredGame(
            game_id=request.game_id,
            game=self.rules.name,
            seats=request.seats,
            version=0,
            state=state_bytes,
            options=options_bytes,
            last_event_id=opening[-1].event_id,
            over=response.status.over,
            window_from=window_from,
        )
        self.cache.remember(request.game_id, CachedGame(0, state, stored, window_from, commit_keys(request.game_id)))
        return response

    async def _view(self, request: rules_pb2.GetViewRequest) -> rules_pb2.GetViewResponse:
        check_id("game_id", request.game_id)
        loaded = await self.moves.load(request.game_id)
        assert isinstance(loaded, StoredGame)
        seat = request.seat if request.HasField("seat") else None
        if seat is not None and seat >= loaded.seats:
            raise invalid("BAD_SEAT", f"seat {seat} does not exist in a {loaded.seats}-seat game")
        state = self.moves.decode(loaded)
        return rules_pb2.GetViewResponse(
            view=self.envelope.view_to_union(self.rules.view(state, seat)),
            status=self._status(state, loaded.version),
            last_event_id=loaded.last_event_id,
            game=loaded.game,
            seats=loaded.seats,
            options=games_pb2.GameOptions.FromString(loaded.options),
        )


def add_rules_service(servicer: RulesServicer[Any, Any, Any, Any, Any], server: grpc.aio.Server) -> None:
    """The generated registration, with ApplyMove and ApplyMoves answering pre-encoded bytes."""
    add_pre_encoded(
        rules_pb2_grpc.add_RulesServiceServicer_to_server, servicer, server, service_names()[0], PRE_ENCODED
    )


def service_names() -> Sequence[str]:
    return (rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name,)
