"""What the kit reads out of the client's traffic: its moves and resignations (unary or on the
Play stream), the refusals it was sent, the events delivered to it, its account event stream
(each opening's resume point, the events it was sent), its chat watches (each opening's resume
point, the lines sent down them), whether it followed someone, and how often it called each method."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import grpc
from google.rpc import error_details_pb2, status_pb2

from tafel.conformance.proxy import Cut, Policy, Proxy, Reply
from tafel.play.v1 import challenges_pb2, play_pb2, social_pb2

SUBMIT = "/tafel.play.v1.GameService/SubmitMove"
RESIGN = "/tafel.play.v1.GameService/Resign"
WATCH = "/tafel.play.v1.GameService/WatchGame"
PLAY = "/tafel.play.v1.GameService/Play"
EVENTS = "/tafel.play.v1.EventService/WatchMyEvents"
CHAT = "/tafel.play.v1.ChatService/WatchChat"
FOLLOW = "/tafel.play.v1.FriendService/Follow"


def refusal_status(code: grpc.StatusCode, reason: str, message: str) -> status_pb2.Status:
    """A status as the gateway writes it: the code, a message and an ErrorInfo with the reason."""
    status = status_pb2.Status(code=code.value[0], message=message)
    status.details.add().Pack(error_details_pb2.ErrorInfo(reason=reason, domain="tafel.games"))
    return status


def reason_of(trailing: Sequence[tuple[str, str | bytes]]) -> str:
    for key, value in trailing:
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return str(info.reason)
    return ""


def flatten(response: play_pb2.PlayResponse) -> list[play_pb2.PlayResponse]:
    return list(response.batch.responses) if response.WhichOneof("kind") == "batch" else [response]


@dataclass
class Traffic(Policy):
    """Records; changes nothing. Scenarios that inject faults build on it."""

    moves: list[play_pb2.SubmitMoveRequest] = field(default_factory=list)
    resignations: int = 0
    # (code name, reason) of every refusal of a move or resignation the client was sent.
    refusals: list[tuple[str, str]] = field(default_factory=list)
    events_delivered: int = 0
    watch_requests: list[str] = field(default_factory=list)  # after_event_id of each watch
    _play_moves: dict[int, play_pb2.SubmitMoveRequest] = field(default_factory=dict)
    proxy: Proxy | None = None  # the proxy this traffic goes through (set by the scenario)
    calls: Counter[str] = field(default_factory=Counter)  # requests per method ("ListChallenges": 2)
    event_watches: list[str] = field(default_factory=list)  # after_event_id of each WatchMyEvents
    account_events: int = 0  # AccountEvents sent down the client's event streams
    events_live: asyncio.Event = field(default_factory=asyncio.Event)  # an event stream said ready
    chat_watches: list[str] = field(default_factory=list)  # after_message_id of each WatchChat
    chat_messages: int = 0  # ChatMessages sent down the client's chat watches
    chat_live: asyncio.Event = field(default_factory=asyncio.Event)  # a chat watch said ready
    followed: asyncio.Event = field(default_factory=asyncio.Event)  # a Follow was answered

    def request(self, method: str, raw: bytes) -> Cut | Reply | None:
        self.calls[method.rsplit("/", 1)[-1]] += 1
        if method == EVENTS:
            self.event_watches.append(challenges_pb2.WatchMyEventsRequest.FromString(raw).after_event_id)
        elif method == CHAT:
            self.chat_watches.append(social_pb2.WatchChatRequest.FromString(raw).after_message_id)
        if method == SUBMIT:
            move = play_pb2.SubmitMoveRequest.FromString(raw)
            self.moves.append(move)
            return self.on_move(method, move, 0)
        if method == RESIGN:
            self.resignations += 1
        elif method == WATCH:
            self.watch_requests.append(play_pb2.WatchGameRequest.FromString(raw).after_event_id)
        elif method == PLAY:
            request = play_pb2.PlayRequest.FromString(raw)
            kind = request.WhichOneof("action")
            if kind == "submit_move":
                self.moves.append(request.submit_move)
                self._play_moves[request.correlation_id] = request.submit_move
                return self.on_move(method, request.submit_move, request.correlation_id)
            if kind == "resign":
                self.resignations += 1
            elif kind == "watch":
                self.watch_requests.append(request.watch.after_event_id)
        return None

    def response(self, method: str, raw: bytes) -> Cut | None:
        if method == EVENTS:
            if challenges_pb2.WatchMyEventsResponse.FromString(raw).WhichOneof("kind") == "ready":
                self.events_live.set()
                return None
            self.account_events += 1
            return self.on_account_event()
        if method == CHAT:
            if social_pb2.WatchChatResponse.FromString(raw).WhichOneof("kind") == "ready":
                self.chat_live.set()
                return None
            self.chat_messages += 1
            return self.on_chat_message()
        if method == FOLLOW:
            self.followed.set()
            return None
        if method == WATCH:
            self.events_delivered += 1
            return self.on_event()
        if method == SUBMIT:
            return self.on_accepted(self.moves[-1])
        if method != PLAY:
            return None
        for part in flatten(play_pb2.PlayResponse.FromString(raw)):
            kind = part.WhichOneof("kind")
            if kind == "refusal" and part.correlation_id in self._play_moves:
                self.refusals.append((code_name(part.refusal.code), part.refusal.reason))
            elif kind == "event":
                self.events_delivered += 1
                if (cut := self.on_event()) is not None:
                    return cut
            elif kind == "move_accepted" and part.correlation_id in self._play_moves:
                if (cut := self.on_accepted(self._play_moves[part.correlation_id])) is not None:
                    return cut
        return None

    def status(self, method: str, code: grpc.StatusCode, trailing: Sequence[tuple[str, str | bytes]]) -> None:
        if method in (SUBMIT, RESIGN) and code is not grpc.StatusCode.OK:
            self.refusals.append((code.name, reason_of(trailing)))

    # Hooks for scenarios: return a Cut / Reply to change what happens.
    def on_move(self, method: str, move: play_pb2.SubmitMoveRequest, correlation_id: int) -> Cut | Reply | None:
        return None

    def on_accepted(self, move: play_pb2.SubmitMoveRequest) -> Cut | None:
        return None

    def on_event(self) -> Cut | None:
        return None

    def on_account_event(self) -> Cut | None:
        return None

    def on_chat_message(self) -> Cut | None:
        return None

    def illegal(self) -> list[tuple[str, str]]:
        """Refusals that mean the client sent a move the rules or the API do not allow."""
        return [r for r in self.refusals if r[0] in ("FAILED_PRECONDITION", "INVALID_ARGUMENT", "PERMISSION_DENIED")]


def code_name(value: int) -> str:
    """A google.rpc.Code number as its name (10 -> "ABORTED")."""
    for code in grpc.StatusCode:
        if code.value[0] == value:
            return str(code.name)
    return str(value)
