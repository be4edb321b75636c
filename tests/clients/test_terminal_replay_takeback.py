"""The terminal replay across take-backs: an aborted game and a take-back read as sentences. (The
board at every step, also after moves were taken back, is the server's view of that version: its
test, the rules' own board at every version across two take-backs, is
tests/clients/test_sdk_replay_views.py.)"""

from __future__ import annotations

from tafel.cli.describe import describe, outcome_text
from tafel.games.v1 import games_pb2
from tafel_rules.game import Outcome

from services.host.codec import outcome_to_proto


def test_a_take_back_and_an_abort_in_words() -> None:
    event = games_pb2.GameEvent(version=5, taken_back=games_pb2.MovesTakenBack(to_version=2))
    assert describe(event, ["ann", "bob"]) == "Moves were taken back to the position after move 2."
    aborted = outcome_to_proto(Outcome(ranks=(1, 1), reason="ABORTED"))
    assert outcome_text(aborted, ["you", "bob"]) == "aborted, no result"
