"""The terminal replay across take-backs: the board at every step, rebuilt from the
events alone, is the rules' own board at that version, also after moves were taken back (twice,
the second over the first); an aborted game and a take-back read as sentences."""

from __future__ import annotations

from itertools import groupby

from tafel.by_game.connect4 import view_at as connect4_at
from tafel.cli.describe import describe, outcome_text
from tafel.cli.replay import played
from tafel.games.v1 import games_pb2

from services.connect4.codec import CODEC
from tafel_rules.connect4 import RULES, Move, Options
from services.kit.codec import GameEnvelope, outcome_to_proto
from tafel_rules.game import Outcome, TakenBack

ENVELOPE = GameEnvelope(CODEC)


def test_each_step_is_the_position_of_its_version_across_take_backs() -> None:
    state = RULES.new_game(Options(), 2, 0)
    states = [state]
    events = [games_pb2.GameEvent(event_id="0-1", version=0, created=games_pb2.GameCreated(game="connect4", seats=2))]
    # Columns to drop in, or a version to take back to.
    script: list[int | tuple[int]] = [3, 4, 3, 2, (2,), 6, 5, (5,), 0]
    for step in script:
        version = len(states)
        if isinstance(step, tuple):
            state, raw = states[step[0]], [TakenBack(step[0])]
        else:
            state, raw = RULES.apply_move(state, state.to_move, Move(step))
        states.append(state)
        events.extend(ENVELOPE.events_to_union(list(raw), version))
    steps = [list(group) for _, group in groupby(events, key=lambda e: e.version)]
    positions = played(steps)
    final = CODEC.view_to_proto(RULES.view(state, None))
    for version, at in enumerate(positions):
        expected = CODEC.view_to_proto(RULES.view(states[version], None))
        assert connect4_at(final, at).board == expected.board, f"version {version}"
    assert CODEC.view_to_proto(RULES.view(states[-1], None)).moves == "451"  # 3, 4, then 0 after the take-backs


def test_a_take_back_and_an_abort_in_words() -> None:
    event = games_pb2.GameEvent(version=5, taken_back=games_pb2.MovesTakenBack(to_version=2))
    assert describe(event, ["ann", "bob"]) == "Moves were taken back to the position after move 2."
    aborted = outcome_to_proto(Outcome(ranks=(1, 1), reason="ABORTED"))
    assert outcome_text(aborted, ["you", "bob"]) == "aborted, no result"
