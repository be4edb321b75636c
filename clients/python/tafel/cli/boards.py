"""Drawing each game's view as rich renderables, and turning keys into moves (no I/O here)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tafel.cli.describe import placement_text
from tafel.coloursquare.v1 import coloursquare_pb2 as cs
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.i18n import _, ngettext
from tafel.plus4.v1 import plus4_pb2

SEAT_STYLES = ("bold yellow", "bold red", "bold green", "bold blue", "bold magenta", "bold cyan")
# A symbol per seat, so the discs differ by more than colour (a monochrome terminal, colour blindness).
CONNECT4_SYMBOLS = ("●", "○")
PLUS4_STYLES = ("bold red", "bold blue")
PLUS4_SYMBOLS = ("●", "○")
PLUS4_BONUS_SYMBOLS = ("◆", "◇")


@dataclass
class Cursor:
    """What the player is pointing at: a column (Connect Four, Plus 4) or a cell (Colour Square)."""

    column: int = 0
    row: int = 0
    colour: int = 0  # Colour Square: the colour of the cell the white die goes into (R, Y, G, B)
    bonus: bool = False  # Plus 4: push the bonus disc
    die: int = 0  # Colour Square: the die chosen for the next placement (index into DICE)
    placements: list[cs.Placement] = field(default_factory=list)


@dataclass
class Seating:
    """Who sits where and whose clock runs: names by seat ("you" for the viewer)."""

    names: list[str] = field(default_factory=list)
    to_act: set[int] = field(default_factory=set)
    clock: str = ""  # time left for the seats to act, e.g. "0:42"
    per_move: str = ""  # each move's allowance, shown for the seats not on the clock
    last_column: int | None = None  # Plus 4: the last push (the view does not carry it)
    width: int = 100  # the screen's columns: how many Colour Square sheets fit side by side

    def name(self, seat: int) -> str:
        return self.names[seat] if seat < len(self.names) else _("seat {number}").format(number=seat + 1)

    def clock_of(self, seat: int) -> str:
        if seat in self.to_act:
            return ("◀ " + _("to move") + f" {self.clock}").rstrip()
        return f"  {self.per_move}" if self.per_move else ""


def render(view: games_pb2.GameView, cursor: Cursor, seat: int | None, table: Seating | None = None) -> RenderableType:
    table = table or Seating()
    which = view.WhichOneof("game")
    if which == "connect4":
        return render_connect4(view.connect4, cursor, table, seat is not None)
    if which == "plus4":
        return render_plus4(view.plus4, cursor, seat, table)
    if which == "coloursquare":
        return render_coloursquare(view.coloursquare, cursor, seat, table)
    return Text(_("(no view)"))


def _column_header(columns: int, cursor: Cursor, show_cursor: bool) -> str:
    return "  " + "".join(f"[{c + 1}]" if show_cursor and c == cursor.column else f" {c + 1} " for c in range(columns))


def render_connect4(view: connect4_pb2.View, cursor: Cursor, table: Seating, playing: bool = True) -> Text:
    text = Text()
    text.append(_column_header(view.columns, cursor, playing) + "\n")
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
                symbol = CONNECT4_SYMBOLS[seats[row] % 2]
                cell = f"({symbol})" if (row, column) == last else f" {symbol} "
                text.append(cell, style=style)
            else:
                text.append(" · ", style="dim")
        text.append("\n")
    if last is not None:
        text.append("  " + "   " * last[1] + " ^  " + _("last move") + "\n", style="dim")
    for seat in range(2):
        text.append(f"  {CONNECT4_SYMBOLS[seat]} {table.name(seat)}", style=SEAT_STYLES[seat])
        text.append(f"  {table.clock_of(seat)}\n")
    return text


def plus4_goal(options: plus4_pb2.Options) -> str:
    target = options.target or 11
    if options.mode == plus4_pb2.MODE_FIRST_LINE:
        return _("the first line wins")
    if options.mode == plus4_pb2.MODE_ROUNDS:
        return ngettext("first to win {n} round", "first to win {n} rounds", target).format(n=target)
    return ngettext("first to {n} point", "first to {n} points", target).format(n=target)


def render_plus4(view: plus4_pb2.View, cursor: Cursor, seat: int | None, table: Seating) -> Text:
    text = Text()
    text.append(_column_header(4, cursor, seat is not None) + "\n")
    for row in view.frame:
        text.append("  ")
        for square in row.squares:
            if square.HasField("disc"):
                colour = square.disc.colour % 2
                symbol = (PLUS4_BONUS_SYMBOLS if square.disc.bonus else PLUS4_SYMBOLS)[colour]
                text.append(f" {symbol} ", style=PLUS4_STYLES[colour])
            else:
                text.append(" · ", style="dim")
        text.append("\n")
    if table.last_column is not None:
        text.append("  " + "   " * table.last_column + " ^  " + _("last push") + "\n", style="dim")
    rounds = view.options.mode == plus4_pb2.MODE_ROUNDS
    # Per seat; a replay's earlier steps have no supplies (the events do not report them).
    for s in range(max(2, len(view.supplies))):
        text.append(f"  {PLUS4_SYMBOLS[s % 2]} {table.name(s)}", style=PLUS4_STYLES[s % 2])
        score = _("rounds won {n}").format(n=view.round_wins[s]) if rounds and s < len(view.round_wins) else ""
        if not rounds and s < len(view.scores):
            score = ngettext("{n} point", "{n} points", view.scores[s]).format(n=view.scores[s])
        supply = ""
        if s < len(view.supplies):
            held = view.supplies[s]
            symbol = PLUS4_BONUS_SYMBOLS[s % 2]
            bonus = " + " + _("bonus {symbol}").format(symbol=symbol) if held.bonus else " " + _("(bonus used)")
            supply = ", " + ngettext("{n} disc", "{n} discs", held.ordinary).format(n=held.ordinary) + bonus
        text.append(f": {score}{supply}  {table.clock_of(s)}\n")
    round_note = ", " + _("round {n}").format(n=view.round) if rounds else ""
    limit = view.options.move_limit or 400
    goal = _("goal: {goal}").format(goal=plus4_goal(view.options)) + round_note
    text.append(f"  {goal}   " + _("move {n} of at most {limit}").format(n=view.moves_made, limit=limit) + "\n")
    if seat is not None and seat < len(view.supplies):
        if view.supplies[seat].bonus:
            disc = _("BONUS disc") if cursor.bonus else _("ordinary disc")
            text.append("  " + _("next push: {disc} (b toggles)").format(disc=disc) + "\n")
        else:
            text.append("  " + _("next push: ordinary disc (your bonus disc is used)") + "\n")
    return text


DICE = ("R", "Y", "G", "B", "W")
DIE_ENUM = (cs.DIE_RED, cs.DIE_YELLOW, cs.DIE_GREEN, cs.DIE_BLUE, cs.DIE_WHITE)
COLOUR_STYLES = ("red", "yellow", "green", "blue")
KIND_STYLES = {cs.SQUARE_KIND_PURPLE: "bold magenta", cs.SQUARE_KIND_ORANGE: "bold dark_orange"}
KIND_MARKS = {cs.SQUARE_KIND_PURPLE: "p", cs.SQUARE_KIND_ORANGE: "o"}
SHEET_WIDTH = 48  # one drawn sheet and the gap after it
DEFAULT_CORNERS = (cs.COLOUR_RED, cs.COLOUR_YELLOW, cs.COLOUR_GREEN, cs.COLOUR_BLUE)


def die_value(roll: cs.Roll, die: int) -> int:
    values = (roll.red, roll.yellow, roll.green, roll.blue, roll.white)
    return values[die - 1] if 1 <= die <= len(values) else 0


def place_hint(view: cs.View, seat: int | None) -> str:
    """What the viewer is asked to do now, from the view's must/may place."""
    if seat is None:
        return ""
    if view.phase == cs.PHASE_OVER:
        return _("the game is over")
    if view.max_dice == 0:
        waiting = view.own_pending.placements or seat not in view.to_place
        return _("nothing to place now: waiting for the others") if waiting else ""
    if view.phase == cs.PHASE_FINAL:
        return _("final turn: you may place up to {n} of the five dice (optional), then p").format(n=view.max_dice)
    passive = view.active_seat != seat and len(view.players) > 1
    count = view.must_place
    if count == 0:
        if passive:
            return _("no white die fits anywhere: pass with p")
        return _("no coloured die fits anywhere: pass with p")
    if passive:
        return _("place the white die (W) in an empty cell of any colour, then p")
    return ngettext(
        "place {n} coloured die, then p", "place {n} coloured dice (R Y G B, different colours), then p", count
    ).format(n=count)


def sheet_label(label: str) -> str:
    """The sheet's name in the player's language: the server names its own sheets in English
    ("tafel sheet A"); any other name is shown as it is."""
    found = re.fullmatch(r"tafel sheet ([A-Z])", label)
    return _("tafel sheet {side}").format(side=found.group(1)) if found else label


def render_coloursquare(view: cs.View, cursor: Cursor, seat: int | None, table: Seating) -> RenderableType:
    head = Text()
    head.append(f"  {sheet_label(view.sheet.label or view.sheet.name)}", style="bold")
    if view.max_rounds:
        head.append("   " + _("round {n} of at most {limit}").format(n=view.round, limit=view.max_rounds))
    else:
        head.append("   " + _("round {n}").format(n=view.round))
    if view.target:
        head.append("   " + _("solo target: {target}").format(target=view.target))
    if view.phase == cs.PHASE_OVER or not view.HasField("roll"):
        head.append("   " + _("the game is over") if view.phase == cs.PHASE_OVER else "")
    else:
        roller = view.final_turn_seat if view.HasField("final_turn_seat") else view.active_seat
        # The viewer's own roll is its own message: "du hast gewürfelt", not "du hat gewürfelt".
        rolled = _("you rolled:") if roller == seat else _("{name} rolled:").format(name=table.name(roller))
        head.append(f"   {rolled} ")
        for name, value, style in zip(
            DICE,
            (view.roll.red, view.roll.yellow, view.roll.green, view.roll.blue, view.roll.white),
            (*COLOUR_STYLES, "white"),
            strict=True,
        ):
            chosen = " reverse" if seat is not None and DICE[cursor.die] == name else ""
            head.append(f" {name}{value} ", style=f"bold {style}{chosen}")
        if view.phase == cs.PHASE_FINAL:
            head.append("  " + _("(final turn)"))
    if view.HasField("caller"):
        called = (
            _("you called colour square")
            if view.caller == seat
            else _("{name} called colour square").format(name=table.name(view.caller))
        )
        head.append(f"\n  {called}")
    parts: list[RenderableType] = [head]
    hint = place_hint(view, seat)
    if hint:
        parts.append(Text(f"  {hint}", style="bold"))
    grid = Table.grid(padding=(0, 2))
    sheets = sorted(view.players, key=lambda p: (p.seat != seat, p.seat))
    per_row = max(1, (table.width - 2) // SHEET_WIDTH)
    for start in range(0, len(sheets), per_row):
        row = sheets[start : start + per_row]
        grid.add_row(*(_sheet(view, p, cursor if p.seat == seat else None, table) for p in row))
    parts.append(grid)
    parts.append(
        Text("  " + _("goal p: purple (+5 with a bridge)  o: orange (never bridged)  ═ ║ bridges (+5)"), style="dim")
    )
    if seat is not None and view.phase != cs.PHASE_OVER:
        pending = ", ".join(placement_text(p) for p in cursor.placements)
        sent = ", ".join(placement_text(p) for p in view.own_pending.placements)
        if sent:
            parts.append(Text("  " + _("sent (shows when the round resolves): {sent}").format(sent=sent)))
        parts.append(Text("  " + _("to send: {pending}").format(pending=pending or "-")))
        parts.append(
            Text(
                "  "
                + _(
                    "←↑↓→ square · r/y/g/b/w die · t white die's cell colour · enter place · j joker · p send/pass"
                    " · c clear"
                ),
                style="dim",
            )
        )
    return Group(*parts)


def _corners(spec: cs.SquareLayout) -> list[int]:
    order = list(spec.corner_order) or list(DEFAULT_CORNERS)
    return [order[0], order[1], order[3], order[2]]  # clockwise TL TR BR BL, drawn as TL TR / BL BR


def _sheet(view: cs.View, sheet: cs.PlayerSheet, cursor: Cursor | None, table: Seating) -> Text:
    columns = view.sheet.columns or 4
    layout = {(sq.row, sq.column): sq for sq in view.sheet.squares}
    bridges = {frozenset({(b.first.row, b.first.column), (b.second.row, b.second.column)}) for b in sheet.bridges}
    pending: dict[tuple[int, int, int], int] = {}
    # Only the viewer's own sheet shows where its sent and not-yet-sent placements go.
    for p in [*view.own_pending.placements, *cursor.placements] if cursor else []:
        if p.WhichOneof("target") == "cell":
            pending[(p.cell.row, p.cell.column, p.cell.colour)] = die_value(view.roll, p.die)
    text = Text()
    state = ""
    if sheet.removal != cs.REMOVAL_UNSPECIFIED:
        state = " " + _("(left the table)")
    elif sheet.seat in view.to_place:
        state = " " + _("(to place)")
    elif view.phase != cs.PHASE_OVER:
        state = " " + _("(placed)")
    total = sheet.breakdown.total
    points = ngettext("{n} point", "{n} points", total).format(n=total)
    text.append(f"{table.name(sheet.seat)}: {points}{state}\n", style=SEAT_STYLES[sheet.seat % 6])
    target_colour = None
    if cursor is not None:  # a coloured die goes into its own colour's cell; the white die where `t` says
        target_colour = cursor.die + 1 if cursor.die < 4 else cursor.colour + 1
    for row in range(view.sheet.rows or 4):
        for line in range(2):
            for column in range(columns):
                index = row * columns + column
                square = sheet.squares[index] if index < len(sheet.squares) else cs.Square()
                spec = layout.get((row, column), cs.SquareLayout())
                printed = {int(pv.colour): pv.value for pv in spec.printed}
                corners = _corners(spec)
                for colour in corners[line * 2 : line * 2 + 2]:
                    value = square.cells[colour - 1] if colour - 1 < len(square.cells) else 0
                    style = COLOUR_STYLES[colour - 1]
                    shown = str(value) if value else "·"
                    if not value and colour in printed:
                        shown, style = str(printed[colour]), f"{style} dim underline"
                    if (row, column, colour) in pending:
                        shown, style = str(pending[(row, column, colour)]), f"{style} bold underline"
                    here = cursor is not None and (cursor.row, cursor.column, target_colour) == (row, column, colour)
                    text.append(f"{shown:>2}", style=style + (" reverse" if here else ""))
                if line == 0:
                    goal = str(spec.goal_low)
                    if spec.goal_low != spec.goal_high:
                        goal = f"{spec.goal_low}-{spec.goal_high}"
                    text.append(f" {goal:>4}{KIND_MARKS.get(spec.kind, ' ')}", style=KIND_STYLES.get(spec.kind, ""))
                else:
                    text.append(f" {_status(square.status):>5}")
                if column < columns - 1:
                    bridged = frozenset({(row, column), (row, column + 1)}) in bridges
                    text.append("═" if bridged and line == 0 else "│", style="bold" if bridged else "dim")
            text.append("\n")
        if row < (view.sheet.rows or 4) - 1:
            for column in range(columns):
                bridged = frozenset({(row, column), (row + 1, column)}) in bridges
                text.append(("    ║     " if bridged else "          ") + " ")
            text.append("\n")
    jokers = " ".join(str(j) if j else "·" for j in sheet.jokers)
    b = sheet.breakdown
    text.append(_("jokers: {jokers}   bridges: {bridges}").format(jokers=jokers, bridges=len(sheet.bridges)) + "\n")
    text.append(
        _("+{circled} circled +{bridges} bridges +{purple} purple").format(
            circled=b.circled, bridges=b.bridges, purple=b.purple
        )
        + "\n",
        style="dim",
    )
    text.append(
        _("-{wrong} wrong -{open} open -{jokers} jokers = {total}").format(
            wrong=abs(b.wrong_penalty), open=abs(b.open_penalty), jokers=abs(b.jokers), total=b.total
        ),
        style="dim",
    )
    return text


def _status(status: int) -> str:
    if status == cs.SQUARE_STATUS_CORRECT:
        return _("ok")
    if status == cs.SQUARE_STATUS_WRONG:
        return _("wrong")
    if status == cs.SQUARE_STATUS_CROSSED:
        return "--"
    return ""


def connect4_move(cursor: Cursor) -> connect4_pb2.Move:
    return connect4_pb2.Move(column=cursor.column)


def plus4_move(cursor: Cursor) -> plus4_pb2.Move:
    return plus4_pb2.Move(column=cursor.column, bonus=cursor.bonus)


def columns_of(view: games_pb2.GameView) -> int:
    which = view.WhichOneof("game")
    if which == "connect4":
        return view.connect4.columns or 7
    return 4
