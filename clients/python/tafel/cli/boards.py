"""Drawing each game's view as rich Text, and turning keys into moves (no I/O here)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text

from tafel.coloursquare.v1 import coloursquare_pb2 as cs
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.plus4.v1 import plus4_pb2

SEAT_STYLES = ("bold yellow", "bold red", "bold green", "bold blue", "bold magenta", "bold cyan")
PLUS4_STYLES = ("bold red", "bold blue")
DISC = "●"


@dataclass
class Cursor:
    """What the player is pointing at: a column (Connect Four, Plus 4) or a cell (Colour Square)."""

    column: int = 0
    row: int = 0
    colour: int = 0  # Colour Square: which of the square's four cells (R, Y, G, B)
    bonus: bool = False  # Plus 4: push the bonus disc
    die: int = 0  # Colour Square: the die chosen for the next placement (index into DICE)
    placements: list[cs.Placement] = field(default_factory=list)


def render(view: games_pb2.GameView, cursor: Cursor, seat: int | None) -> Text:
    which = view.WhichOneof("game")
    if which == "connect4":
        return render_connect4(view.connect4, cursor)
    if which == "plus4":
        return render_plus4(view.plus4, cursor)
    if which == "coloursquare":
        return render_coloursquare(view.coloursquare, cursor, seat)
    return Text("(no view)")


def render_connect4(view: connect4_pb2.View, cursor: Cursor) -> Text:
    text = Text()
    text.append("  " + "".join(f" {c + 1} " if c != cursor.column else f"[{c + 1}]" for c in range(view.columns)))
    text.append("\n")
    winning = {(cell.row, cell.column) for cell in view.winning_cells}
    for row in reversed(range(view.rows)):
        text.append("  ")
        for column in range(view.columns):
            seats = view.board[column].seats if column < len(view.board) else []
            if row < len(seats):
                style = SEAT_STYLES[seats[row]] + (" reverse" if (row, column) in winning else "")
                text.append(f" {DISC} ", style=style)
            else:
                text.append(" · ", style="dim")
        text.append("\n")
    return text


def render_plus4(view: plus4_pb2.View, cursor: Cursor) -> Text:
    text = Text()
    text.append("  " + "".join(f" {c + 1} " if c != cursor.column else f"[{c + 1}]" for c in range(4)) + "\n")
    for row in view.frame:
        text.append("  ")
        for square in row.squares:
            if square.HasField("disc"):
                symbol = "◆" if square.disc.bonus else DISC
                text.append(f" {symbol} ", style=PLUS4_STYLES[square.disc.colour])
            else:
                text.append(" · ", style="dim")
        text.append("\n")
    for seat, supply in enumerate(view.supplies):
        text.append(f"  seat {seat}: ", style=PLUS4_STYLES[seat])
        text.append(f"{supply.ordinary} discs{' + bonus' if supply.bonus else ''}   ")
    text.append("\n  scores: " + " - ".join(str(s) for s in view.scores))
    if view.round_wins:
        text.append("   rounds won: " + " - ".join(str(s) for s in view.round_wins))
    text.append(f"\n  next push: {'BONUS disc' if cursor.bonus else 'ordinary disc'} (b toggles)\n")
    return text


DICE = ("R", "Y", "G", "B", "W")
DIE_ENUM = (cs.DIE_RED, cs.DIE_YELLOW, cs.DIE_GREEN, cs.DIE_BLUE, cs.DIE_WHITE)
COLOUR_STYLES = ("red", "yellow", "green", "blue")


def render_coloursquare(view: cs.View, cursor: Cursor, seat: int | None) -> Text:
    text = Text()
    roll = view.roll
    text.append(f"  round {view.round}   active seat {view.active_seat}   roll: ")
    for name, value, style in zip(
        DICE, (roll.red, roll.yellow, roll.green, roll.blue, roll.white), (*COLOUR_STYLES, "white"), strict=True
    ):
        chosen = " reverse" if DICE[cursor.die] == name else ""
        text.append(f" {name}{value} ", style=f"bold {style}{chosen}")
    text.append("\n")
    layout = {(sq.row, sq.column): sq for sq in view.sheet.squares}
    mine = next((p for p in view.players if seat is not None and p.seat == seat), None)
    sheet = mine or (view.players[0] if view.players else None)
    if sheet is None:
        return text
    for row in range(view.sheet.rows):
        for line in range(2):
            text.append("  ")
            for column in range(view.sheet.columns):
                square = sheet.squares[row * view.sheet.columns + column]
                spec = layout[(row, column)]
                for k in range(2):
                    colour = line * 2 + k
                    value = square.cells[colour] if colour < len(square.cells) else 0
                    target = cursor.die if cursor.die < 4 else cursor.colour
                    here = (cursor.row, cursor.column, target) == (row, column, colour)
                    style = COLOUR_STYLES[colour] + (" reverse" if here else "")
                    text.append(f"{value if value else '·':>2}", style=style)
                goal = f"{spec.goal_low}" if spec.goal_low == spec.goal_high else f"{spec.goal_low}-{spec.goal_high}"
                text.append(f" {goal:>5} |" if line == 0 else f" {_status(square.status):>5} |")
            text.append("\n")
    text.append(f"  jokers: {list(sheet.jokers)}   score: {sheet.breakdown.total}\n")
    pending = ", ".join(f"{DICE[_die_index(p.die)]}" for p in cursor.placements)
    text.append(
        f"  pending placements: {pending or '-'}  (arrows: square, r/y/g/b/w: die, t: white's cell colour,"
        " enter: place, j: joker, p: send, c: clear)\n"
    )
    return text


def _status(status: int) -> str:
    if status == cs.SQUARE_STATUS_CORRECT:
        return "ok"
    if status == cs.SQUARE_STATUS_WRONG:
        return "X"
    if status == cs.SQUARE_STATUS_CROSSED:
        return "--"
    return ""


def _die_index(die: int) -> int:
    return DIE_ENUM.index(die) if die in DIE_ENUM else 0


def connect4_move(cursor: Cursor) -> connect4_pb2.Move:
    return connect4_pb2.Move(column=cursor.column)


def plus4_move(cursor: Cursor) -> plus4_pb2.Move:
    return plus4_pb2.Move(column=cursor.column, bonus=cursor.bonus)


def columns_of(view: games_pb2.GameView) -> int:
    which = view.WhichOneof("game")
    if which == "connect4":
        return view.connect4.columns or 7
    if which == "plus4":
        return 4
    return 4
