"""Colour Square in the Python client: the score sheets, the sentences of its events, its options
in words and from the command line, and its keys (a cell, a die, jokers, the placements of a turn
gathered and sent together with p)."""

from __future__ import annotations

import argparse
import re
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tafel.by_game.base import SEAT_STYLES, Cursor, GameClient, Namer, Say, Seating
from tafel.coloursquare.v1 import coloursquare_pb2 as cs
from tafel.i18n import N_, _, ngettext

DIE_LETTERS = {cs.DIE_RED: "R", cs.DIE_YELLOW: "Y", cs.DIE_GREEN: "G", cs.DIE_BLUE: "B", cs.DIE_WHITE: "W"}
COLOUR_NAMES = {
    cs.COLOUR_RED: N_("red"),
    cs.COLOUR_YELLOW: N_("yellow"),
    cs.COLOUR_GREEN: N_("green"),
    cs.COLOUR_BLUE: N_("blue"),
}
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


def render(view: cs.View, cursor: Cursor, seat: int | None, table: Seating) -> RenderableType:
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


def cell_text(row: int, column: int) -> str:
    return _("row {row}, column {column}").format(row=row + 1, column=column + 1)


def placement_text(placement: cs.Placement) -> str:
    die = DIE_LETTERS.get(placement.die, "?")
    if placement.WhichOneof("target") == "joker":
        return _("{die} on a joker field").format(die=die)
    cell = placement.cell
    colour = _(COLOUR_NAMES[cell.colour]) if cell.colour in COLOUR_NAMES else "?"
    return _("{die} in the {colour} cell of {cell}").format(
        die=die, colour=colour, cell=cell_text(cell.row, cell.column)
    )


def roll_text(roll: cs.Roll) -> str:
    return f"R{roll.red} Y{roll.yellow} G{roll.green} B{roll.blue} W{roll.white}"


def describe(event: cs.Event, name: Namer) -> str:
    which = event.WhichOneof("kind")
    if which == "dice_rolled":
        rolled = event.dice_rolled
        values = {"round": rolled.round, "roll": roll_text(rolled.roll)}
        if rolled.final_turn:
            return name.say(
                rolled.seat,
                _("Round {round}: you rolled {roll} for the final turn."),
                _("Round {round}: {name} rolled {roll} for the final turn."),
                **values,
            )
        return name.say(
            rolled.seat, _("Round {round}: you rolled {roll}."), _("Round {round}: {name} rolled {roll}."), **values
        )
    if which == "placement_submitted":
        return name.say(event.placement_submitted.seat, _("You have placed."), _("{name} has placed."))
    if which == "placements_made":
        made = event.placements_made
        if not made.placements:
            return name.say(made.seat, _("You passed."), _("{name} passed."))
        what = _(" and ").join(placement_text(p) for p in made.placements)
        return name.say(made.seat, _("You placed {what}."), _("{name} placed {what}."), what=what)
    if which == "square_closed":
        closed = event.square_closed
        values = {"cell": cell_text(closed.row, closed.column), "sum": closed.sum}
        if closed.correct:
            return name.say(
                closed.seat,
                _("You closed {cell} correctly (sum {sum})."),
                _("{name} closed {cell} correctly (sum {sum})."),
                **values,
            )
        return name.say(
            closed.seat,
            _("You closed {cell} wrongly (sum {sum})."),
            _("{name} closed {cell} wrongly (sum {sum})."),
            **values,
        )
    if which == "square_crossed":
        crossed = event.square_crossed
        return name.say(
            crossed.seat,
            _("Your {cell} was crossed out."),
            _("{name}'s {cell} was crossed out."),
            cell=cell_text(crossed.row, crossed.column),
        )
    if which == "round_resolved":
        return _("Round {round} is over.").format(round=event.round_resolved.round)
    if which == "colour_square_called":
        called = event.colour_square_called
        return name.say(
            called.seat,
            _("You called colour square in round {round}: the others take a final turn."),
            _("{name} called colour square in round {round}: the others take a final turn."),
            round=called.round,
        )
    if which == "final_turn_resolved":
        return name.say(
            event.final_turn_resolved.seat, _("Your final turn is done."), _("{name}'s final turn is done.")
        )
    if which == "player_removed":
        removed = event.player_removed
        if removed.removal == cs.REMOVAL_TIMEOUTS:
            return name.say(
                removed.seat,
                _("You left the table for running out of time."),
                _("{name} left the table for running out of time."),
            )
        return name.say(
            removed.seat, _("You left the table after resigning."), _("{name} left the table after resigning.")
        )
    return _("(Colour Square event)")


def _options(args: argparse.Namespace) -> cs.Options | None:
    if not (args.target or args.side):
        return None
    return cs.Options(target=args.target, side=args.side or "")


def _die_queued(cursor: Cursor, say: Say) -> bool:
    """A die goes on the sheet once a turn: queued twice, the server would refuse the whole move
    (SAME_DIE_TWICE) only when it is sent, so say it now, in words."""
    die = DIE_ENUM[cursor.die]
    if all(p.die != die for p in cursor.placements):
        return False
    say(
        (
            _("The red die is already placed: pick another die, or c to start again."),
            _("The yellow die is already placed: pick another die, or c to start again."),
            _("The green die is already placed: pick another die, or c to start again."),
            _("The blue die is already placed: pick another die, or c to start again."),
            _("The white die is already placed: pick another die, or c to start again."),
        )[cursor.die]
    )
    return True


def _submit(_view: cs.View, cursor: Cursor, _seat: int, say: Say) -> None:
    """Enter gathers a placement; p sends the turn's placements together."""
    if _die_queued(cursor, say):
        return
    # A coloured die can only go into a cell of its colour; the white die goes where `t` points.
    colour = cursor.die if cursor.die < 4 else cursor.colour
    cell = cs.Cell(row=cursor.row, column=cursor.column, colour=cs.Colour.ValueType(colour + 1))
    cursor.placements.append(cs.Placement(die=DIE_ENUM[cursor.die], cell=cell))


def _joker(view: cs.View, cursor: Cursor, seat: int, say: Say) -> None:
    sheet = next((p for p in view.players if p.seat == seat), None)
    used = {p.joker for p in (*cursor.placements, *view.own_pending.placements)}
    used |= {i for i, value in enumerate(sheet.jokers if sheet else []) if value}
    free = [i for i in range(2) if i not in used]
    if not free:
        say(_("Both joker fields are used."))
        return
    if _die_queued(cursor, say):
        return
    cursor.placements.append(cs.Placement(die=DIE_ENUM[cursor.die], joker=free[0]))


def _send_parts(cursor: Cursor) -> cs.Move:
    placements = list(cursor.placements)
    cursor.placements.clear()
    return cs.Move(placements=placements)


def _press_b(cursor: Cursor) -> None:
    cursor.die = 3  # "b" picks the blue die (the board says so)


def _follow_view(view: cs.View, cursor: Cursor, seat: int) -> None:
    if view.round != cursor.round:  # a new round: pick the die the role allows
        cursor.round = view.round
        cursor.placements.clear()
        active = view.active_seat == seat or view.phase == cs.PHASE_FINAL
        cursor.die = 0 if active else 4


def _bot(level: int, *, seed: int | None = None, **options: Any) -> Any:
    from tafel.bots.coloursquare import ColourSquareBot

    return ColourSquareBot(level, seed=seed, **options)


GAME = GameClient(
    name="coloursquare",
    title=N_("Colour Square"),
    render=render,
    describe=describe,
    bot=_bot,
    endings={
        "COLOUR_SQUARE": N_("colour square was called"),
        "SOLO_FINISHED": N_("no open square was left"),
        "ALL_REMOVED": N_("every player left"),
        "ROUND_LIMIT": N_("the round limit was reached"),
    },
    option_words={
        "side": (N_("sheet"), N_("the side of the score sheet to play on")),
        "target": (N_("solo target"), N_("alone: the score to reach (0: none)")),
        "timeouts_to_remove": (
            N_("timeouts before removal"),
            N_("turns in a row a player may let run out before leaving the table"),
        ),
        "max_rounds": (N_("round limit"), N_("the game ends after this many rounds at most")),
    },
    choice_words={
        "A": N_("A: targets, purple and orange squares"),
        "B": N_("B: pre-printed cells and ranges"),
    },
    options_from_args=_options,
    short_options=cs.Options(max_rounds=6),
    actions=frozenset({"row", "colour", "die", "joker", "send_placements", "clear", "bonus"}),
    submit=_submit,
    press_b=_press_b,
    joker=_joker,
    send_parts=_send_parts,
    follow_view=_follow_view,
)
