"""Mapping between a pure rules module's values and protobuf.

Each game supplies a `GameCodec` for its own messages (`tafel.<game>.v1`); this module wraps the
shared parts — the `tafel.games.v1` unions and the common events — so no game repeats them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Protocol, TypeVar

from google.protobuf.message import Message
from tafel.games.v1 import games_pb2
from tafel_rules.game import GameEnded, Outcome, Resigned, TakenBack, TimedOut

from kit import wire

StateT = TypeVar("StateT")
MoveT = TypeVar("MoveT")
OptionsT = TypeVar("OptionsT")
EventT = TypeVar("EventT", contravariant=True)
ViewT = TypeVar("ViewT", contravariant=True)


class MalformedMessage(ValueError):
    """A message that cannot mean anything in this game (INVALID_ARGUMENT, not an illegal move)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class GameCodec(Protocol, Generic[StateT, MoveT, OptionsT, EventT, ViewT]):
    """A game's own protobuf mapping. `field` is the game's field name in the games.v1 unions."""

    field: str

    def options_from_proto(self, message: Any) -> OptionsT: ...

    def options_to_proto(self, options: OptionsT) -> Message: ...

    def move_from_proto(self, message: Any) -> MoveT:
        """Raise MalformedMessage for a move that is malformed (not merely illegal)."""
        ...

    def move_to_proto(self, move: MoveT) -> Message: ...

    def event_to_proto(self, event: EventT) -> Message:
        """Only the game's own events; the common ones are handled by `GameEnvelope`."""
        ...

    def view_to_proto(self, view: ViewT) -> Message: ...

    def state_to_bytes(self, state: StateT) -> bytes: ...

    def state_from_bytes(self, data: bytes) -> StateT: ...


def outcome_to_proto(outcome: Outcome) -> games_pb2.Outcome:
    return games_pb2.Outcome(
        ranks=outcome.ranks,
        reason=outcome.reason,
        scores=outcome.scores,
        winners=outcome.winners,
        draw=outcome.is_draw,
    )


def outcome_from_proto(message: games_pb2.Outcome) -> Outcome:
    return Outcome(ranks=tuple(message.ranks), reason=message.reason, scores=tuple(message.scores))


_EVENT_ID = wire.key_of(games_pb2.GameEvent, "event_id")
_EVENT_VERSION = wire.key_of(games_pb2.GameEvent, "version")
_ENDED = wire.key_of(games_pb2.GameEvent, "ended")
_RESIGNED = wire.key_of(games_pb2.GameEvent, "resigned")
_TIMED_OUT = wire.key_of(games_pb2.GameEvent, "timed_out")
_TAKEN_BACK = wire.key_of(games_pb2.GameEvent, "taken_back")

EventU = TypeVar("EventU")
ViewU = TypeVar("ViewU")


class GameEnvelope(Generic[StateT, MoveT, OptionsT, EventU, ViewU]):
    """A game's codec seen through the games.v1 unions (GameOptions, GameMove, GameView, GameEvent)."""

    def __init__(self, codec: GameCodec[StateT, MoveT, OptionsT, EventU, ViewU]) -> None:
        self.codec = codec
        self.field = codec.field
        self._event_key = wire.key_of(games_pb2.GameEvent, codec.field)

    def options_from_union(self, union: games_pb2.GameOptions, default: OptionsT) -> OptionsT:
        which = union.WhichOneof("game")
        if which is None:
            return default
        if which != self.field:
            raise MalformedMessage("WRONG_GAME", f"options are for {which}, this game is {self.field}")
        return self.codec.options_from_proto(getattr(union, which))

    def options_to_union(self, options: OptionsT) -> games_pb2.GameOptions:
        union = games_pb2.GameOptions()
        getattr(union, self.field).CopyFrom(self.codec.options_to_proto(options))
        return union

    def move_from_union(self, union: games_pb2.GameMove) -> MoveT:
        which = union.WhichOneof("game")
        if which is None:
            raise MalformedMessage("MOVE_MISSING", "the move names no game")
        if which != self.field:
            raise MalformedMessage("WRONG_GAME", f"a {which} move sent to a {self.field} game")
        return self.codec.move_from_proto(getattr(union, which))

    def move_to_union(self, move: MoveT) -> games_pb2.GameMove:
        union = games_pb2.GameMove()
        getattr(union, self.field).CopyFrom(self.codec.move_to_proto(move))
        return union

    def view_to_union(self, view: ViewU) -> games_pb2.GameView:
        union = games_pb2.GameView()
        getattr(union, self.field).CopyFrom(self.codec.view_to_proto(view))
        return union

    def events_to_union(self, events: Sequence[object], version: int) -> list[games_pb2.GameEvent]:
        """Events of one move, numbered "<version>-1", "<version>-2", ... (their stream ids)."""
        out = []
        for index, event in enumerate(events, start=1):
            message = games_pb2.GameEvent(event_id=f"{version}-{index}", version=version)
            if isinstance(event, GameEnded):
                message.ended.outcome.CopyFrom(outcome_to_proto(event.outcome))
            elif isinstance(event, Resigned):
                message.resigned.seat = event.seat
            elif isinstance(event, TimedOut):
                message.timed_out.seat = event.seat
                message.timed_out.removed = event.removed
            elif isinstance(event, TakenBack):
                message.taken_back.to_version = event.to_version
            else:
                getattr(message, self.field).CopyFrom(self.codec.event_to_proto(event))  # type: ignore[arg-type]
            out.append(message)
        return out

    def events_to_bytes(self, events: Sequence[object], version: int) -> list[tuple[str, bytes]]:
        """The same events as events_to_union, as (event id, encoded GameEvent): each game event
        is encoded once by its codec and wrapped in GameEvent's fields, not copied into one."""
        out = []
        head = wire.uint_field(_EVENT_VERSION, version)
        for index, event in enumerate(events, start=1):
            event_id = f"{version}-{index}"
            kind: Message
            if isinstance(event, GameEnded):
                key, kind = _ENDED, games_pb2.GameEnded(outcome=outcome_to_proto(event.outcome))
            elif isinstance(event, Resigned):
                key, kind = _RESIGNED, games_pb2.PlayerResigned(seat=event.seat)
            elif isinstance(event, TimedOut):
                key, kind = _TIMED_OUT, games_pb2.TurnTimedOut(seat=event.seat, removed=event.removed)
            elif isinstance(event, TakenBack):
                key, kind = _TAKEN_BACK, games_pb2.MovesTakenBack(to_version=event.to_version)
            else:
                key, kind = self._event_key, self.codec.event_to_proto(event)  # type: ignore[arg-type]
            encoded = wire.string_field(_EVENT_ID, event_id) + head + wire.embedded(key, kind.SerializeToString())
            out.append((event_id, encoded))
        return out
