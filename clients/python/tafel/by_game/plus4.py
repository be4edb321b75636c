"""Plus 4 in the Python client: the frame, the sentences of its events, its options in words
and from the command line, its keys (b: the bonus disc)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.text import Text

from tafel.by_game.base import Cursor, GameClient, Namer, Say, Seating
from tafel.by_game.connect4 import column_header
from tafel.i18n import N_, _, ngettext
from tafel.plus4.v1 import plus4_pb2

STYLES = ("bold red", "bold blue")
SYMBOLS = ("●", "○")
BONUS_SYMBOLS = ("◆", "◇")


def goal(options: plus4_pb2.Options) -> str:
    target = options.target or 11
    if options.mode == plus4_pb2.MODE_FIRST_LINE:
        return _("the first line wins")
    if options.mode == plus4_pb2.MODE_ROUNDS:
        return ngettext("first to win {n} round", "first to win {n} rounds", target).format(n=target)
    return ngettext("first to {n} point", "first to {n} points", target).format(n=target)


def render(view: plus4_pb2.View, cursor: Cursor, seat: int | None, table: Seating) -> Text:
    text = Text()
    text.append(column_header(4, cursor, seat is not None) + "\n")
    for row in view.frame:
        text.append("  ")
        for square in row.squares:
            if square.HasField("disc"):
                colour = square.disc.colour % 2
                symbol = (BONUS_SYMBOLS if square.disc.bonus else SYMBOLS)[colour]
                text.append(f" {symbol} ", style=STYLES[colour])
            else:
                text.append(" · ", style="dim")
        text.append("\n")
    if table.last_column is not None:
        text.append("  " + "   " * table.last_column + " ^  " + _("last push") + "\n", style="dim")
    rounds = view.options.mode == plus4_pb2.MODE_ROUNDS
    # Per seat, with the discs each has left where the view carries them.
    for s in range(max(2, len(view.supplies))):
        text.append(f"  {SYMBOLS[s % 2]} {table.name(s)}", style=STYLES[s % 2])
        score = _("rounds won {n}").format(n=view.round_wins[s]) if rounds and s < len(view.round_wins) else ""
        if not rounds and s < len(view.scores):
            score = ngettext("{n} point", "{n} points", view.scores[s]).format(n=view.scores[s])
        supply = ""
        if s < len(view.supplies):
            held = view.supplies[s]
            symbol = BONUS_SYMBOLS[s % 2]
            bonus = " + " + _("bonus {symbol}").format(symbol=symbol) if held.bonus else " " + _("(bonus used)")
            supply = ", " + ngettext("{n} disc", "{n} discs", held.ordinary).format(n=held.ordinary) + bonus
        text.append(f": {score}{supply}  {table.clock_of(s)}\n")
    round_note = ", " + _("round {n}").format(n=view.round) if rounds else ""
    limit = view.options.move_limit or 400
    goal_line = _("goal: {goal}").format(goal=goal(view.options)) + round_note
    text.append(f"  {goal_line}   " + _("move {n} of at most {limit}").format(n=view.moves_made, limit=limit) + "\n")
    if seat is not None and seat < len(view.supplies):
        if view.supplies[seat].bonus:
            disc = _("BONUS disc") if cursor.bonus else _("ordinary disc")
            text.append("  " + _("next push: {disc} (b toggles)").format(disc=disc) + "\n")
        else:
            text.append("  " + _("next push: ordinary disc (your bonus disc is used)") + "\n")
    return text


def describe(event: plus4_pb2.Event, name: Namer) -> str:
    which = event.WhichOneof("kind")
    if which == "disc_pushed":
        pushed = event.disc_pushed
        column = pushed.column + 1
        if pushed.bonus:
            return name.say(
                pushed.seat,
                _("You pushed the bonus disc into column {column}."),
                _("{name} pushed the bonus disc into column {column}."),
                column=column,
            )
        return name.say(
            pushed.seat,
            _("You pushed a disc into column {column}."),
            _("{name} pushed a disc into column {column}."),
            column=column,
        )
    if which == "disc_fell_out":
        fell = event.disc_fell_out
        back = fell.returned_to
        colour = fell.disc.colour
        if colour < 2:
            disc = {
                (0, False): _("A red disc"),
                (1, False): _("A blue disc"),
                (0, True): _("A red bonus disc"),
                (1, True): _("A blue bonus disc"),
            }[(colour, fell.disc.bonus)]
        else:
            disc = _("A bonus disc") if fell.disc.bonus else _("A disc")
        return name.say(
            back,
            _("{disc} fell out and went back to you."),
            _("{disc} fell out and went back to {name}."),
            disc=disc,
        )
    if which == "line_scored":
        line = event.line_scored
        points = ngettext("{n} point", "{n} points", line.points).format(n=line.points)
        return name.say(
            line.colour, _("You completed a line: {points}."), _("{name} completed a line: {points}."), points=points
        )
    if which == "turn_skipped":
        return name.say(
            event.turn_skipped.seat,
            _("You had no disc to push: your turn was skipped."),
            _("{name} had no disc to push: their turn was skipped."),
        )
    if which == "round_won":
        won = event.round_won
        tally = " - ".join(str(n) for n in won.round_wins)
        return _("Round {round} went to {winners} (rounds won {tally}).").format(
            round=won.round, winners=name.join(won.winners), tally=tally
        )
    return _("(Plus 4 event)")


def _seen(event: plus4_pb2.Event, table: Seating) -> None:
    if event.WhichOneof("kind") == "disc_pushed":  # the view does not say where the last push went
        table.last_column = event.disc_pushed.column


def _options(args: argparse.Namespace) -> plus4_pb2.Options | None:
    if not (args.target or args.mode):
        return None
    mode = {
        "points": plus4_pb2.MODE_POINTS,
        "first_line": plus4_pb2.MODE_FIRST_LINE,
        "rounds": plus4_pb2.MODE_ROUNDS,
    }
    return plus4_pb2.Options(target=args.target, mode=mode[args.mode or "points"])


def _submit(_view: plus4_pb2.View, cursor: Cursor, _seat: int, _say: Say) -> plus4_pb2.Move:
    return plus4_pb2.Move(column=cursor.column, bonus=cursor.bonus)


def _moved(cursor: Cursor) -> None:
    cursor.bonus = False  # the bonus disc is spent: the next push is an ordinary one


def _press_b(cursor: Cursor) -> None:
    cursor.bonus = not cursor.bonus


def _follow_view(view: plus4_pb2.View, cursor: Cursor, seat: int) -> None:
    if seat < len(view.supplies) and not view.supplies[seat].bonus:
        cursor.bonus = False


def _bot(level: int, *, seed: int | None = None, **options: Any) -> Any:
    from tafel.bots.plus4 import Plus4Bot

    return Plus4Bot(level, seed=seed, **options)


GAME = GameClient(
    name="plus4",
    title=N_("Plus 4"),
    render=render,
    describe=describe,
    bot=_bot,
    endings={
        "TARGET_REACHED": N_("the target score was reached"),
        "LINE_COMPLETED": N_("a line was completed"),
        "ROUNDS_TARGET_REACHED": N_("the target number of rounds was reached"),
        "MOVE_LIMIT": N_("the push limit was reached"),
    },
    option_words={
        "mode": (N_("how to win"), N_("points, the first line, or rounds")),
        "target": (N_("target"), N_("the points (or rounds won) needed to win")),
        "move_limit": (N_("push limit"), N_("pushes in the whole game, after which the score decides")),
    },
    choice_words={
        "MODE_POINTS": N_("points: first to the target in points"),
        "MODE_FIRST_LINE": N_("first line: the first completed line wins"),
        "MODE_ROUNDS": N_("rounds: each completed line wins a round, first to the target in rounds"),
    },
    options_from_args=_options,
    # First line wins: a game of tens of pushes, not hundreds.
    short_options=plus4_pb2.Options(mode=plus4_pb2.MODE_FIRST_LINE),
    actions=frozenset({"bonus"}),
    submit=_submit,
    moved=_moved,
    press_b=_press_b,
    follow_view=_follow_view,
    seen=_seen,
)
