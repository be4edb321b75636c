"""The steps a unary call and the Play stream share: who may see a game, its view, a move, a
resignation, and the deadline after a live event.

Only a seated player moves, and only for their own seat (PERMISSION_DENIED otherwise); anyone
signed in may read and watch. Every input is checked before anything is written: ids are 1-64
characters of [A-Za-z0-9_-] (INVALID_ARGUMENT), a move must be for the game's own type; the
server's max message size caps everything else.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from prometheus_client import Counter, Histogram
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2
from tafel.rules.v1 import rules_pb2

from gateway.actions import Actions, Applied, rules_request_id
from gateway.auth import Authenticator, Identity
from gateway.games import GameDirectory, GameMeta, not_found
from gateway.metrics import GatewayMetrics
from gateway.play.encoding import set_time
from gateway.watch.hub import EventHub
from gateway.watch.watcher import LIVE
from kit.errors import Refused, invalid
from kit.ids import check_id

GAME_STORE_UNAVAILABLE = "game storage is unavailable; retry"


def permission_denied(reason: str, message: str) -> Refused:
    return Refused(grpc.StatusCode.PERMISSION_DENIED, reason, message)


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


@dataclass(frozen=True)
class ActionCounters:
    """The action metrics of one path (unary or stream), labelled once."""

    applied: Counter
    refused: Counter
    latency: Histogram

    @classmethod
    def of(cls, metrics: GatewayMetrics, path: str) -> ActionCounters:
        return cls(
            applied=metrics.actions.labels(path, "applied"),
            refused=metrics.actions.labels(path, "refused"),
            latency=metrics.latency.labels(path),
        )


class GameSteps:
    def __init__(
        self, auth: Authenticator, directory: GameDirectory, actions: Actions, hub: EventHub, metrics: GatewayMetrics
    ) -> None:
        self.auth = auth
        self.directory = directory
        self.actions = actions
        self.router = actions.router
        self.clocks = actions.clocks
        self.hub = hub
        self.metrics = metrics

    async def meta(self, game_id: str, viewer: str) -> GameMeta:
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
        move = request.move  # (an unset move reads as an empty one: no game set either)
        game = move.WhichOneof("game")
        if game is None:
            raise invalid("MOVE_MISSING", "set the move", field="move")
        meta = await self.directory.meta(request.game_id)
        seat = resolve_seat(meta, identity.player_id, request.seat if request.HasField("seat") else None)
        if game != meta.game:
            raise invalid("WRONG_GAME", f"this is a {meta.game} game: send a {meta.game} move", field="move")
        applied = await self.actions.apply(
            meta,
            seat,
            expected_version=request.expected_version,
            request_id=rules_request_id(seat, request.request_id),
            move=move,
            timeout_s=timeout_s,
            shielded=shielded,
        )
        response = play_pb2.SubmitMoveResponse() if into is None else into
        response.version = applied.response.version
        response.events.extend(applied.response.events)
        response.status.CopyFrom(applied.response.status)
        if applied.stamp is not None:
            response.turn_deadline.CopyFrom(applied.stamp)
        else:
            set_time(response.turn_deadline, applied.deadline)
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
