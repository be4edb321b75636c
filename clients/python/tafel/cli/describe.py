"""One sentence per game event, with player names ("you" for the viewer), for the terminal client's
log, in the language in use. Rows and columns count from 1, as the boards draw them.

A sentence about the viewer is its own message ("You dropped a disc ..." / "alice dropped a disc
..."): Dutch and German conjugate the verb for "you" (je hebt / du hast), so "you" is never put into
a sentence made for a name."""

from __future__ import annotations

from collections.abc import Sequence

from tafel.coloursquare.v1 import coloursquare_pb2 as cs
from tafel.games.v1 import games_pb2
from tafel.i18n import N_, _, ngettext
from tafel.names import player_name
from tafel.play.v1 import play_pb2
from tafel.plus4.v1 import plus4_pb2

DIE_LETTERS = {cs.DIE_RED: "R", cs.DIE_YELLOW: "Y", cs.DIE_GREEN: "G", cs.DIE_BLUE: "B", cs.DIE_WHITE: "W"}
COLOUR_NAMES = {
    cs.COLOUR_RED: N_("red"),
    cs.COLOUR_YELLOW: N_("yellow"),
    cs.COLOUR_GREEN: N_("green"),
    cs.COLOUR_BLUE: N_("blue"),
}
PLUS4_COLOURS = (N_("red"), N_("blue"))
# The games' names as their clubs say them ("Vier gewinnt", "Vier op een rij"): translated where shown.
GAME_TITLES = {"connect4": N_("Connect Four"), "plus4": N_("Plus 4"), "coloursquare": N_("Colour Square")}


def game_title(game: str) -> str:
    """ "Connect Four" / "Vier op een rij" / "Vier gewinnt"; a game this client does not know by its
    machine name."""
    return _(GAME_TITLES[game]) if game in GAME_TITLES else game


def you() -> str:
    return _("you")


def seat_label(seat: int) -> str:
    return _("seat {number}").format(number=seat + 1)


def seat_names(players: Sequence[play_pb2.SeatedPlayer], seat: int | None) -> list[str]:
    """Names by seat; the viewer's own seat reads "you"."""
    count = max((p.seat for p in players), default=-1) + 1
    names = [seat_label(n) for n in range(count)]
    for p in players:
        names[p.seat] = player_name(p.player, seat_label(p.seat))
    if seat is not None and seat < len(names):
        names[seat] = you()
    return names


class Namer:
    """Seat number to a name, falling back to "seat N" (counted from 1) for seats it does not know."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)

    def __call__(self, seat: int) -> str:
        return self.names[seat] if seat < len(self.names) else seat_label(seat)

    def is_you(self, seat: int) -> bool:
        return self(seat) == you()

    def say(self, seat: int, mine: str, theirs: str, **values: object) -> str:
        """`mine` when `seat` is the viewer's, else `theirs` with {name}; both already translated."""
        if self.is_you(seat):
            return mine.format(**values)
        return theirs.format(name=self(seat), **values)


def describe(event: games_pb2.GameEvent, names: Sequence[str] = ()) -> str:
    return _describe(event, Namer(names))


def _describe(event: games_pb2.GameEvent, name: Namer) -> str:
    names = name.names
    kind = event.WhichOneof("kind")
    if kind == "created":
        title = game_title(event.created.game)
        seats = event.created.seats
        return ngettext(
            "The game of {title} began with {n} seat.", "The game of {title} began with {n} seats.", seats
        ).format(title=title, n=seats)
    if kind == "resigned":
        return name.say(event.resigned.seat, _("You resigned."), _("{name} resigned."))
    if kind == "timed_out":
        seat = event.timed_out.seat
        if event.timed_out.removed:
            return name.say(
                seat, _("You ran out of time and left the game."), _("{name} ran out of time and left the game.")
            )
        return name.say(seat, _("You ran out of time."), _("{name} ran out of time."))
    if kind == "ended":
        return _("Game over: {outcome}.").format(outcome=outcome_text(event.ended.outcome, names))
    if kind == "taken_back":
        return _("Moves were taken back to the position after move {version}.").format(
            version=event.taken_back.to_version
        )
    if kind == "connect4":
        dropped = event.connect4.disc_dropped
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
    if kind == "plus4":
        return _plus4(event.plus4, name)
    if kind == "coloursquare":
        return _coloursquare(event.coloursquare, name)
    return "({kind})".format(kind=kind or _("unknown event"))


def _plus4(event: plus4_pb2.Event, name: Namer) -> str:
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
        winners = _and(name, won.winners)
        tally = " - ".join(str(n) for n in won.round_wins)
        return _("Round {round} went to {winners} (rounds won {tally}).").format(
            round=won.round, winners=winners, tally=tally
        )
    return _("(Plus 4 event)")


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


def _coloursquare(event: cs.Event, name: Namer) -> str:
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


# How a game ended, as a player says it (Outcome.reason; tafel/games/v1/reasons.proto). A reason
# a newer server sends and this list lacks still reads as words.
ENDINGS = {
    "FOUR_IN_A_ROW": N_("four in a row"),
    "BOARD_FULL": N_("the board is full"),
    "RESIGNED": N_("by resignation"),
    "TIMEOUT": N_("on time"),
    "TARGET_REACHED": N_("the target score was reached"),
    "LINE_COMPLETED": N_("a line was completed"),
    "ROUNDS_TARGET_REACHED": N_("the target number of rounds was reached"),
    "MOVE_LIMIT": N_("the push limit was reached"),
    "COLOUR_SQUARE": N_("colour square was called"),
    "SOLO_FINISHED": N_("no open square was left"),
    "ALL_REMOVED": N_("every player left"),
    "ROUND_LIMIT": N_("the round limit was reached"),
    "DRAW_AGREED": N_("a draw was agreed"),
    "ABORTED": N_("aborted, no result"),
}


def outcome_text(outcome: games_pb2.Outcome, names: Sequence[str] = ()) -> str:
    """ "you won (four in a row)", "alice won (...)", "draw (...)"; with no names, seats from 1."""
    if outcome.reason == "ABORTED":  # ended before everyone moved: no winner, no draw
        return _(ENDINGS["ABORTED"])
    reason = _(ENDINGS[outcome.reason]) if outcome.reason in ENDINGS else outcome.reason.replace("_", " ").lower()
    if len(outcome.scores):
        reason = _("{reason}, scores {scores}").format(reason=reason, scores=" - ".join(str(s) for s in outcome.scores))
    if outcome.draw:
        return _("draw ({reason})").format(reason=reason)
    name = Namer(names)
    winners = list(outcome.winners)
    me = you()
    if me in names:
        if name.names.index(me) in winners:
            return _("you won ({reason})").format(reason=reason)
        return _("you lost, {winners} won ({reason})").format(winners=_and(name, winners), reason=reason)
    return _("{winners} won ({reason})").format(winners=_and(name, winners), reason=reason)


def _and(name: Namer, seats: Sequence[int]) -> str:
    return _(" and ").join(name(s) for s in seats) or _("nobody")
