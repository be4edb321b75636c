"""Every event of every game reads as a sentence with names ("you" for the viewer), rows and columns
from 1 as the boards draw them, and no protobuf text (which also dropped default values: seat 0,
column 0)."""

from __future__ import annotations

import pytest
from tafel.cli.describe import describe, outcome_text
from tafel.coloursquare.v1 import coloursquare_pb2 as cs
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.plus4.v1 import plus4_pb2

NAMES = ["you", "bob"]

CASES = [
    (
        games_pb2.GameEvent(created=games_pb2.GameCreated(game="plus4", seats=2)),
        "The game of Plus 4 began with 2 seats.",
    ),
    (games_pb2.GameEvent(resigned=games_pb2.PlayerResigned(seat=1)), "bob resigned."),
    (
        games_pb2.GameEvent(timed_out=games_pb2.TurnTimedOut(seat=0, removed=True)),
        "You ran out of time and left the game.",
    ),
    (
        games_pb2.GameEvent(connect4=connect4_pb2.Event(disc_dropped=connect4_pb2.DiscDropped(seat=0, column=0))),
        "You dropped a disc in column 1.",
    ),
    (
        games_pb2.GameEvent(plus4=plus4_pb2.Event(disc_pushed=plus4_pb2.DiscPushed(seat=1, column=0, bonus=True))),
        "bob pushed the bonus disc into column 1.",
    ),
    (
        games_pb2.GameEvent(
            plus4=plus4_pb2.Event(disc_fell_out=plus4_pb2.DiscFellOut(disc=plus4_pb2.Disc(colour=0), returned_to=0))
        ),
        "A red disc fell out and went back to you.",
    ),
    (
        games_pb2.GameEvent(plus4=plus4_pb2.Event(line_scored=plus4_pb2.LineScored(colour=1, points=2))),
        "bob completed a line: 2 points.",
    ),
    (
        games_pb2.GameEvent(plus4=plus4_pb2.Event(turn_skipped=plus4_pb2.TurnSkipped(seat=0))),
        "You had no disc to push: your turn was skipped.",
    ),
    (
        games_pb2.GameEvent(
            plus4=plus4_pb2.Event(round_won=plus4_pb2.RoundWon(round=2, winners=[1], round_wins=[0, 2]))
        ),
        "Round 2 went to bob (rounds won 0 - 2).",
    ),
    (
        games_pb2.GameEvent(
            coloursquare=cs.Event(
                dice_rolled=cs.DiceRolled(round=1, seat=0, roll=cs.Roll(red=5, yellow=2, green=6, blue=1, white=4))
            )
        ),
        "Round 1: you rolled R5 Y2 G6 B1 W4.",
    ),
    (
        games_pb2.GameEvent(coloursquare=cs.Event(placement_submitted=cs.PlacementSubmitted(round=1, seat=1))),
        "bob has placed.",
    ),
    (
        games_pb2.GameEvent(
            coloursquare=cs.Event(
                placements_made=cs.PlacementsMade(
                    seat=1,
                    placements=[
                        cs.Placement(die=cs.DIE_WHITE, cell=cs.Cell(row=0, column=0, colour=cs.COLOUR_BLUE)),
                        cs.Placement(die=cs.DIE_RED, joker=0),
                    ],
                )
            )
        ),
        "bob placed W in the blue cell of row 1, column 1 and R on a joker field.",
    ),
    (games_pb2.GameEvent(coloursquare=cs.Event(placements_made=cs.PlacementsMade(seat=0))), "You passed."),
    (
        games_pb2.GameEvent(
            coloursquare=cs.Event(square_closed=cs.SquareClosed(seat=0, row=3, column=2, correct=True, sum=14))
        ),
        "You closed row 4, column 3 correctly (sum 14).",
    ),
    (
        games_pb2.GameEvent(coloursquare=cs.Event(square_crossed=cs.SquareCrossed(seat=1, row=0, column=0))),
        "bob's row 1, column 1 was crossed out.",
    ),
    (
        games_pb2.GameEvent(coloursquare=cs.Event(colour_square_called=cs.ColourSquareCalled(seat=1, round=7))),
        "bob called colour square in round 7: the others take a final turn.",
    ),
    (
        games_pb2.GameEvent(coloursquare=cs.Event(final_turn_resolved=cs.FinalTurnResolved(seat=0))),
        "Your final turn is done.",
    ),
    (
        games_pb2.GameEvent(
            coloursquare=cs.Event(player_removed=cs.PlayerRemoved(seat=1, removal=cs.REMOVAL_TIMEOUTS))
        ),
        "bob left the table for running out of time.",
    ),
]


@pytest.mark.parametrize(("event", "sentence"), CASES)
def test_each_event_is_a_sentence_with_names(event: games_pb2.GameEvent, sentence: str) -> None:
    assert describe(event, NAMES) == sentence


def test_outcomes_name_the_winner() -> None:
    won = games_pb2.Outcome(winners=[0], reason="FOUR_IN_A_ROW")
    assert outcome_text(won, NAMES) == "you won (four in a row)"
    assert outcome_text(won, ["alice", "bob"]) == "alice won (four in a row)"
    lost = games_pb2.Outcome(winners=[1], reason="RESIGNED")
    assert outcome_text(lost, NAMES) == "you lost, bob won (by resignation)"
    assert outcome_text(games_pb2.Outcome(draw=True, reason="BOARD_FULL"), NAMES) == "draw (the board is full)"
