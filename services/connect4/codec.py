"""Connect Four values <-> `tafel.connect4.v1` messages."""

from __future__ import annotations

from tafel.connect4.v1 import connect4_pb2 as pb
from tafel_rules.connect4 import (
    MAX_SIZE,
    RESIGNED,
    RULES,
    TIMEOUT,
    DiscDropped,
    Move,
    Options,
    State,
    View,
    notation,
    replay,
)
from tafel_rules.game import PLATFORM_ENDINGS, Outcome


class Connect4Codec:
    field = "connect4"

    def options_from_proto(self, message: pb.Options) -> Options:
        defaults = Options()
        return Options(rows=message.rows or defaults.rows, columns=message.columns or defaults.columns)

    def options_to_proto(self, options: Options) -> pb.Options:
        return pb.Options(rows=options.rows, columns=options.columns)

    def move_from_proto(self, message: pb.Move) -> Move:
        # Any column number is well formed: one the board lacks is the rules' COLUMN_OUT_OF_RANGE
        # (FAILED_PRECONDITION), one rule for every game (docs/architecture.md, Contract rules).
        return Move(column=message.column)

    def move_to_proto(self, move: Move) -> pb.Move:
        return pb.Move(column=move.column)

    def event_to_proto(self, event: DiscDropped) -> pb.Event:
        # Set in place: a message passed to a constructor is copied (half of this, once a move).
        message = pb.Event()
        dropped = message.disc_dropped
        dropped.seat, dropped.column, dropped.row = event.seat, event.column, event.row
        for row, column in event.winning_cells:
            dropped.winning_cells.add(row=row, column=column)
        return message

    def view_to_proto(self, view: View) -> pb.View:
        # The columns and cells added in place: messages given to a constructor are copied (a
        # view is read twice a game, once per seat's watch: 7.3 -> 4.5 us).
        message = pb.View(rows=view.rows, columns=view.columns, moves=view.moves, legal_columns=view.legal_columns)
        board = message.board
        for seats in view.board:
            board.add(seats=seats)
        cells = message.winning_cells
        for row, column in view.winning_cells:
            cells.add(row=row, column=column)
        if view.to_move is not None:
            message.to_move = view.to_move
        return message

    def state_to_bytes(self, state: State) -> bytes:
        message = pb.State(moves=bytes(state.moves))
        options = message.options  # set in place, not copied from a message of its own (once a move)
        options.rows, options.columns = state.options.rows, state.options.columns
        outcome = state.outcome
        if outcome is not None and outcome.reason in (RESIGNED, TIMEOUT):
            message.forfeited_seat = outcome.ranks.index(2)
            message.forfeit_reason = outcome.reason
        elif outcome is not None and outcome.reason in PLATFORM_ENDINGS:
            # Ended by the platform (a draw agreed, an abort): the reason without a forfeited seat.
            message.forfeit_reason = outcome.reason
        return message.SerializeToString()

    def state_from_bytes(self, data: bytes) -> State:
        message = pb.State.FromString(data)
        options = Options(rows=message.options.rows, columns=message.options.columns)
        if not (0 < options.rows <= MAX_SIZE and 0 < options.columns <= MAX_SIZE):
            raise ValueError("stored Connect Four state has no valid options")
        state = replay(options, list(message.moves))
        if message.HasField("forfeited_seat"):
            seat = message.forfeited_seat
            outcome = Outcome(ranks=(2, 1) if seat == 0 else (1, 2), reason=message.forfeit_reason)
            state = State(state.options, state.discs, state.heights, state.moves, outcome)
        elif message.forfeit_reason in PLATFORM_ENDINGS:
            state = RULES.end(state, message.forfeit_reason)
        return state


CODEC = Connect4Codec()
__all__ = ["CODEC", "Connect4Codec", "notation"]
