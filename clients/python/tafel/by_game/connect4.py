"""Connect Four in the Python client: the board, the sentences of its events, its options in
words, its keys."""

from __future__ import annotations

import random
from typing import Any

from rich.text import Text

from tafel.by_game.base import SEAT_STYLES, Cursor, GameClient, Namer, Say, Seating
from tafel.connect4.v1 import connect4_pb2
from tafel.i18n import N_, _

# A symbol per seat, so the discs differ by more than colour (a monochrome terminal, colour blindness).
SYMBOLS = ("●", "○")


def column_header(columns: int, cursor: Cursor, show_cursor: bool) -> str:
    return "  " + "".join(f"[{c + 1}]" if show_cursor and c == cursor.column else f" {c + 1} " for c in range(columns))


def render(view: connect4_pb2.View, cursor: Cursor, seat: int | None, table: Seating) -> Text:
    text = Text()
    text.append(column_header(view.columns, cursor, seat is not None) + "\n")
    winning = {(cell.row, cell.column) for cell in view.winning_cells}
    last: tuple[int, int] | None = None
    if view.moves:
        column = int(view.moves[-1]) - 1
        last = (len(view.board[column].seats) - 1, column) if column < len(view.board) else None
    for row in reversed(range(view.rows)):
        text.append("  ")
        for column in range(view.columns):
            seats = view.board[column].seats if column < len(view.board) else []
            if row < len(seats):
                style = SEAT_STYLES[seats[row]] + (" reverse" if (row, column) in winning else "")
                symbol = SYMBOLS[seats[row] % 2]
                cell = f"({symbol})" if (row, column) == last else f" {symbol} "
                text.append(cell, style=style)
            else:
                text.append(" · ", style="dim")
        text.append("\n")
    if last is not None:
        text.append("  " + "   " * last[1] + " ^  " + _("last move") + "\n", style="dim")
    for s in range(2):
        text.append(f"  {SYMBOLS[s]} {table.name(s)}", style=SEAT_STYLES[s])
        text.append(f"  {table.clock_of(s)}\n")
    return text


def describe(event: connect4_pb2.Event, name: Namer) -> str:
    dropped = event.disc_dropped
    column = dropped.column + 1
    if len(dropped.winning_cells):
        return name.say(
            dropped.seat,
            _("You dropped a disc in column {column} and made four in a row."),
            _("{name} dropped a disc in column {column} and made four in a row."),
            column=column,
        )
    return name.say(
        dropped.seat,
        _("You dropped a disc in column {column}."),
        _("{name} dropped a disc in column {column}."),
        column=column,
    )


def _submit(_view: connect4_pb2.View, cursor: Cursor, _seat: int, _say: Say) -> connect4_pb2.Move:
    return connect4_pb2.Move(column=cursor.column)


def _random_move(view: connect4_pb2.View, rng: random.Random) -> connect4_pb2.Move:
    return connect4_pb2.Move(column=rng.choice(list(view.legal_columns)))


def _bot(level: int, *, seed: int | None = None, **options: Any) -> Any:
    from tafel.bots.connect4 import Connect4Bot

    return Connect4Bot(level, seed=seed, **options)


GAME = GameClient(
    name="connect4",
    # As the game's clubs say it ("Vier op een rij", "Vier gewinnt").
    title=N_("Connect Four"),
    render=render,
    describe=describe,
    bot=_bot,
    endings={"FOUR_IN_A_ROW": N_("four in a row"), "BOARD_FULL": N_("the board is full")},
    option_words={
        "rows": (N_("rows"), N_("the height of the board")),
        "columns": (N_("columns"), N_("the width of the board")),
    },
    columns=lambda view: view.columns or 7,
    submit=_submit,
    random_move=_random_move,
)
