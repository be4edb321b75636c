"""One sentence per game event, with player names ("you" for the viewer), for the terminal client's
log. Rows and columns count from 1, as the boards draw them."""

from __future__ import annotations

from collections.abc import Sequence

from tafel.coloursquare.v1 import coloursquare_pb2 as cs
from tafel.games.v1 import games_pb2
from tafel.names import player_name
from tafel.play.v1 import play_pb2
from tafel.plus4.v1 import plus4_pb2

DIE_LETTERS = {cs.DIE_RED: "R", cs.DIE_YELLOW: "Y", cs.DIE_GREEN: "G", cs.DIE_BLUE: "B", cs.DIE_WHITE: "W"}
COLOUR_NAMES = {cs.COLOUR_RED: "red", cs.COLOUR_YELLOW: "yellow", cs.COLOUR_GREEN: "green", cs.COLOUR_BLUE: "blue"}
PLUS4_COLOURS = ("red", "blue")
GAME_TITLES = {"connect4": "Connect Four", "plus4": "Plus 4", "coloursquare": "Colour Square"}


def seat_names(players: Sequence[play_pb2.SeatedPlayer], seat: int | None) -> list[str]:
    """Names by seat; the viewer's own seat reads "you"."""
    count = max((p.seat for p in players), default=-1) + 1
    names = [f"seat {n + 1}" for n in range(count)]
    for p in players:
        names[p.seat] = player_name(p.player, f"seat {p.seat + 1}")
    if seat is not None and seat < len(names):
        names[seat] = "you"
    return names


class Namer:
    """Seat number to a name, falling back to "seat N" (counted from 1) for seats it does not know."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)

    def __call__(self, seat: int) -> str:
        return self.names[seat] if seat < len(self.names) else f"seat {seat + 1}"

    def possessive(self, seat: int) -> str:
        name = self(seat)
        return "your" if name == "you" else f"{name}'s"

    def verb(self, seat: int, singular: str, plural: str) -> str:
        """ "alice has" / "you have"."""
        return f"{self(seat)} {plural if self(seat) == 'you' else singular}"


def describe(event: games_pb2.GameEvent, names: Sequence[str] = ()) -> str:
    sentence = _describe(event, Namer(names))
    return sentence[:1].upper() + sentence[1:] if sentence.startswith(("you ", "your ")) else sentence


def _describe(event: games_pb2.GameEvent, name: Namer) -> str:
    names = name.names
    kind = event.WhichOneof("kind")
    if kind == "created":
        title = GAME_TITLES.get(event.created.game, event.created.game)
        return f"The game of {title} began with {event.created.seats} seat{'s' if event.created.seats != 1 else ''}."
    if kind == "resigned":
        return f"{name(event.resigned.seat)} resigned."
    if kind == "timed_out":
        removed = " and left the game" if event.timed_out.removed else ""
        return f"{name(event.timed_out.seat)} ran out of time{removed}."
    if kind == "ended":
        return f"Game over: {outcome_text(event.ended.outcome, names)}."
    if kind == "taken_back":
        return f"Moves were taken back to the position after move {event.taken_back.to_version}."
    if kind == "connect4":
        dropped = event.connect4.disc_dropped
        won = " and made four in a row" if len(dropped.winning_cells) else ""
        return f"{name(dropped.seat)} dropped a disc in column {dropped.column + 1}{won}."
    if kind == "plus4":
        return _plus4(event.plus4, name)
    if kind == "coloursquare":
        return _coloursquare(event.coloursquare, name)
    return f"({kind or 'unknown'} event)"


def _plus4(event: plus4_pb2.Event, name: Namer) -> str:
    which = event.WhichOneof("kind")
    if which == "disc_pushed":
        pushed = event.disc_pushed
        disc = "the bonus disc" if pushed.bonus else "a disc"
        return f"{name(pushed.seat)} pushed {disc} into column {pushed.column + 1}."
    if which == "disc_fell_out":
        fell = event.disc_fell_out
        colour = PLUS4_COLOURS[fell.disc.colour] if fell.disc.colour < 2 else "a"
        disc = f"{colour} bonus disc" if fell.disc.bonus else f"{colour} disc"
        return f"A {disc} fell out and went back to {name(fell.returned_to)}."
    if which == "line_scored":
        line = event.line_scored
        points = f"{line.points} point{'s' if line.points != 1 else ''}"
        return f"{name(line.colour)} completed a line: {points}."
    if which == "turn_skipped":
        seat = event.turn_skipped.seat
        return f"{name(seat)} had no disc to push: {name.possessive(seat)} turn was skipped."
    if which == "round_won":
        won = event.round_won
        winners = " and ".join(name(s) for s in won.winners) or "nobody"
        tally = " - ".join(str(n) for n in won.round_wins)
        return f"Round {won.round} went to {winners} (rounds won {tally})."
    return "(Plus 4 event)"


def cell_text(row: int, column: int) -> str:
    return f"row {row + 1}, column {column + 1}"


def placement_text(placement: cs.Placement) -> str:
    die = DIE_LETTERS.get(placement.die, "?")
    if placement.WhichOneof("target") == "joker":
        return f"{die} on a joker field"
    cell = placement.cell
    return f"{die} in the {COLOUR_NAMES.get(cell.colour, '?')} cell of {cell_text(cell.row, cell.column)}"


def roll_text(roll: cs.Roll) -> str:
    return f"R{roll.red} Y{roll.yellow} G{roll.green} B{roll.blue} W{roll.white}"


def _coloursquare(event: cs.Event, name: Namer) -> str:
    which = event.WhichOneof("kind")
    if which == "dice_rolled":
        rolled = event.dice_rolled
        final = " for the final turn" if rolled.final_turn else ""
        return f"Round {rolled.round}: {name(rolled.seat)} rolled {roll_text(rolled.roll)}{final}."
    if which == "placement_submitted":
        return f"{name.verb(event.placement_submitted.seat, 'has', 'have')} placed."
    if which == "placements_made":
        made = event.placements_made
        if not made.placements:
            return f"{name(made.seat)} passed."
        return f"{name(made.seat)} placed " + " and ".join(placement_text(p) for p in made.placements) + "."
    if which == "square_closed":
        closed = event.square_closed
        how = "correctly" if closed.correct else "wrongly"
        return f"{name(closed.seat)} closed {cell_text(closed.row, closed.column)} {how} (sum {closed.sum})."
    if which == "square_crossed":
        crossed = event.square_crossed
        return f"{name.possessive(crossed.seat)} {cell_text(crossed.row, crossed.column)} was crossed out."
    if which == "round_resolved":
        return f"Round {event.round_resolved.round} is over."
    if which == "colour_square_called":
        called = event.colour_square_called
        return f"{name(called.seat)} called colour square in round {called.round}: the others take a final turn."
    if which == "final_turn_resolved":
        return f"{name.possessive(event.final_turn_resolved.seat)} final turn is done."
    if which == "player_removed":
        removed = event.player_removed
        why = "for running out of time" if removed.removal == cs.REMOVAL_TIMEOUTS else "after resigning"
        return f"{name(removed.seat)} left the table {why}."
    return "(Colour Square event)"


# How a game ended, as a player says it (Outcome.reason; tafel/games/v1/reasons.proto). A reason
# a newer server sends and this list lacks still reads as words.
ENDINGS = {
    "FOUR_IN_A_ROW": "four in a row",
    "BOARD_FULL": "the board is full",
    "RESIGNED": "by resignation",
    "TIMEOUT": "on time",
    "TARGET_REACHED": "the target score was reached",
    "LINE_COMPLETED": "a line was completed",
    "ROUNDS_TARGET_REACHED": "the target number of rounds was reached",
    "MOVE_LIMIT": "the push limit was reached",
    "COLOUR_SQUARE": "colour square was called",
    "SOLO_FINISHED": "no open square was left",
    "ALL_REMOVED": "every player left",
    "ROUND_LIMIT": "the round limit was reached",
    "DRAW_AGREED": "a draw was agreed",
}


def plural(count: int, word: str, words: str | None = None) -> str:
    """ "1 round", "2 rounds"."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def outcome_text(outcome: games_pb2.Outcome, names: Sequence[str] = ()) -> str:
    """ "you won (four in a row)", "alice won (...)", "draw (...)"; with no names, seats from 1."""
    reason = ENDINGS.get(outcome.reason, outcome.reason.replace("_", " ").lower())
    scores = f", scores {' - '.join(str(s) for s in outcome.scores)}" if len(outcome.scores) else ""
    if outcome.reason == "ABORTED":  # ended before everyone moved: no winner, no draw
        return "aborted, no result"
    if outcome.draw:
        return f"draw ({reason}{scores})"
    name = Namer(names)
    winners = list(outcome.winners)
    if "you" in names:
        verdict = "you won" if name.names.index("you") in winners else f"you lost, {_and(name, winners)} won"
        return f"{verdict} ({reason}{scores})"
    return f"{_and(name, winners)} won ({reason}{scores})"


def _and(name: Namer, seats: Sequence[int]) -> str:
    return " and ".join(name(s) for s in seats) or "nobody"
