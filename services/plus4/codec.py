"""Plus 4 values <-> `tafel.plus4.v1` messages.

The stored form is the whole position (three 16-bit masks, supplies, counts, the scored-line
history and the outcome), so a replica loads a game without replaying its moves.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from tafel.plus4.v1 import plus4_pb2 as pb
from tafel_rules.game import InvalidOptions, Outcome
from tafel_rules.plus4 import (
    LINES,
    Disc,
    DiscFellOut,
    DiscPushed,
    Frame,
    LineScored,
    Mode,
    Move,
    Plus4Event,
    Plus4Options,
    Plus4State,
    Plus4View,
    RoundWon,
    TurnSkipped,
)

_MODE_TO_PROTO: Final = {
    Mode.POINTS: pb.MODE_POINTS,
    Mode.FIRST_LINE: pb.MODE_FIRST_LINE,
    Mode.ROUNDS: pb.MODE_ROUNDS,
}
_MODE_FROM_PROTO: Final = {v: k for k, v in _MODE_TO_PROTO.items()}
_LINE_INDEX: Final = {cells: index for index, cells in enumerate(LINES)}
_FULL_FRAME: Final = 0xFFFF


def _cells(cells: tuple[tuple[int, int], ...]) -> list[pb.Cell]:
    return [pb.Cell(row=r, column=c) for r, c in cells]


def _disc(disc: Disc) -> pb.Disc:
    return pb.Disc(colour=disc.colour, bonus=disc.bonus)


def _frame(frame: Frame) -> list[pb.Row]:
    return [
        pb.Row(squares=[pb.Square() if d is None else pb.Square(disc=_disc(d)) for d in row]) for row in frame
    ]


def _line(line: LineScored) -> pb.LineScored:
    return pb.LineScored(
        cells=_cells(line.cells),
        colour=line.colour,
        points=line.points,
        move_number=line.move_no,
        round=line.round_no,
    )


def _pack_line(line: LineScored) -> int:
    return (
        _LINE_INDEX[line.cells]
        | line.colour << 4
        | line.points << 5
        | line.move_no << 8
        | line.round_no << 24
    )


def _unpack_line(packed: int) -> LineScored:
    index = packed & 0xF
    if index >= len(LINES):
        raise ValueError(f"stored Plus 4 state names line {index}")
    return LineScored(
        LINES[index], (packed >> 4) & 1, (packed >> 5) & 0x7, (packed >> 8) & 0xFFFF, packed >> 24
    )


def _pair(values: Iterable[int], name: str) -> tuple[int, int]:
    items = tuple(values)
    if len(items) != 2:
        raise ValueError(f"stored Plus 4 state has {len(items)} {name}, not 2")
    return (int(items[0]), int(items[1]))


class Plus4Codec:
    field = "plus4"

    # ---- options and moves ----

    def options_from_proto(self, message: pb.Options) -> Plus4Options:
        defaults = Plus4Options()
        if message.mode == pb.MODE_UNSPECIFIED:
            mode = defaults.mode
        elif message.mode in _MODE_FROM_PROTO:
            mode = _MODE_FROM_PROTO[message.mode]
        else:
            raise InvalidOptions("mode", f"unknown mode {message.mode}")
        return Plus4Options(
            mode=mode,
            target=message.target or defaults.target,
            move_limit=message.move_limit or defaults.move_limit,
        )

    def options_to_proto(self, options: Plus4Options) -> pb.Options:
        return pb.Options(
            mode=_MODE_TO_PROTO[Mode(options.mode)], target=options.target, move_limit=options.move_limit
        )

    def move_from_proto(self, message: pb.Move) -> Move:
        # Any column number is a well-formed move; one outside 0..3 is refused by the rules
        # (COLUMN_OUT_OF_RANGE), as the rules page lists it among the illegal moves.
        return Move(column=message.column, bonus=message.bonus)

    def move_to_proto(self, move: Move) -> pb.Move:
        return pb.Move(column=move.column, bonus=move.bonus)

    # ---- what clients see ----

    def event_to_proto(self, event: Plus4Event) -> pb.Event:
        if isinstance(event, DiscPushed):
            return pb.Event(
                disc_pushed=pb.DiscPushed(
                    seat=event.colour, column=event.column, bonus=event.bonus, frame=_frame(event.frame)
                )
            )
        if isinstance(event, DiscFellOut):
            return pb.Event(
                disc_fell_out=pb.DiscFellOut(
                    disc=pb.Disc(colour=event.colour, bonus=event.bonus), returned_to=event.returned_to
                )
            )
        if isinstance(event, LineScored):
            return pb.Event(line_scored=_line(event))
        if isinstance(event, TurnSkipped):
            return pb.Event(turn_skipped=pb.TurnSkipped(seat=event.seat))
        if isinstance(event, RoundWon):
            return pb.Event(
                round_won=pb.RoundWon(
                    round=event.round_no,
                    winners=event.winners,
                    round_wins=event.round_wins,
                    frame=_frame(event.frame),
                    frame_emptied=event.frame_emptied,
                )
            )
        raise TypeError(f"not a Plus 4 event: {event!r}")

    def view_to_proto(self, view: Plus4View) -> pb.View:
        message = pb.View(
            options=pb.Options(
                mode=_MODE_TO_PROTO[view.mode], target=view.target, move_limit=view.move_limit
            ),
            frame=_frame(view.frame),
            supplies=[pb.Supply(ordinary=s.ordinary, bonus=s.bonus) for s in view.supplies],
            scores=view.scores,
            round_wins=view.round_wins,
            scored_lines=[_line(line) for line in view.scored_lines],
            moves_made=view.moves_made,
            round=view.round_no,
            legal_moves=[pb.Move(column=m.column, bonus=m.bonus) for m in view.legal_moves],
        )
        if view.to_move is not None:
            message.to_move = view.to_move
        return message

    # ---- the stored form ----

    def state_to_bytes(self, state: Plus4State) -> bytes:
        options = state.options
        message = pb.State(
            options=pb.Options(
                mode=_MODE_TO_PROTO[options.mode], target=options.target, move_limit=options.move_limit
            ),
            red=state.red,
            blue=state.blue,
            bonus=state.bonus,
            ordinary=state.ordinary,
            bonus_in_hand=state.bonus_in_hand,
            scores=state.scores,
            round_wins=state.round_wins,
            moves_made=state.moves_made,
            round=state.round_no,
            scored_lines=[_pack_line(line) for line in state.scored],
        )
        if state.to_move is not None:
            message.to_move = state.to_move
        result = state.result
        if result is not None:
            message.outcome.ranks.extend(result.ranks)
            message.outcome.reason = result.reason
            message.outcome.scores.extend(result.scores)
        return message.SerializeToString()

    def state_from_bytes(self, data: bytes) -> Plus4State:
        message = pb.State.FromString(data)
        mode = _MODE_FROM_PROTO.get(message.options.mode)
        if mode is None:
            raise ValueError("stored Plus 4 state has no valid mode")
        if message.red > _FULL_FRAME or message.blue > _FULL_FRAME or message.bonus > _FULL_FRAME:
            raise ValueError("stored Plus 4 frame is out of range")
        ordinary = _pair(message.ordinary, "supplies")
        in_hand = tuple(message.bonus_in_hand)
        if len(in_hand) != 2:
            raise ValueError("stored Plus 4 state has no bonus supplies")
        result = None
        if message.HasField("outcome"):
            outcome = message.outcome
            result = Outcome(tuple(outcome.ranks), outcome.reason, tuple(outcome.scores))
        return Plus4State(
            options=Plus4Options(mode, message.options.target, message.options.move_limit),
            red=message.red,
            blue=message.blue,
            bonus=message.bonus,
            ordinary=ordinary,
            bonus_in_hand=(in_hand[0], in_hand[1]),
            scores=_pair(message.scores, "scores"),
            round_wins=_pair(message.round_wins, "round counts"),
            to_move=message.to_move if message.HasField("to_move") else None,
            moves_made=message.moves_made,
            round_no=message.round,
            scored=tuple(_unpack_line(packed) for packed in message.scored_lines),
            result=result,
        )


CODEC: Final = Plus4Codec()
