"""Plus 4 codec (rules values <-> tafel.plus4.v1) and the generic conformance suite."""

from __future__ import annotations

import random

import pytest
from tafel.games.v1 import games_pb2
from tafel.plus4.v1 import plus4_pb2 as pb
from tafel_rules.game import GameEnded, InvalidOptions, Outcome
from tafel_rules.plus4 import (
    RULES,
    DiscFellOut,
    DiscPushed,
    LineScored,
    Mode,
    Move,
    Plus4Options,
    Plus4State,
    RoundWon,
    TurnSkipped,
    position,
)

from services.host import conformance
from services.host.codec import GameEnvelope
from services.plus4.codec import CODEC

ENVELOPE = GameEnvelope(CODEC)


@pytest.mark.parametrize(
    "options",
    [
        Plus4Options(),
        Plus4Options(Mode.POINTS, 1, 1),
        Plus4Options(Mode.FIRST_LINE, 11, 18),
        Plus4Options(Mode.ROUNDS),
    ],
)
def test_conformance_suite(options: Plus4Options) -> None:
    conformance.run_suite(RULES, CODEC, options, 2, seeds=range(12))


def test_conformance_suite_long_rounds_game() -> None:
    # a long game: many rounds and a long history of scored lines (the suite checks each step)
    conformance.run_suite(RULES, CODEC, Plus4Options(Mode.ROUNDS, 99, 1200), 2, seeds=range(2))


def test_options_defaults_from_unset_fields() -> None:
    assert CODEC.options_from_proto(pb.Options()) == Plus4Options(Mode.POINTS, 11, 400)
    assert CODEC.options_from_proto(pb.Options(mode=pb.MODE_ROUNDS, target=3)) == Plus4Options(Mode.ROUNDS, 3, 400)
    assert ENVELOPE.options_from_union(games_pb2.GameOptions(), RULES.default_options()) == Plus4Options()
    for options in (Plus4Options(Mode.FIRST_LINE, 5, 77), Plus4Options()):
        assert CODEC.options_from_proto(CODEC.options_to_proto(options)) == options
        assert ENVELOPE.options_from_union(ENVELOPE.options_to_union(options), Plus4Options()) == options


def test_unknown_mode_is_invalid_options() -> None:
    with pytest.raises(InvalidOptions) as err:
        CODEC.options_from_proto(pb.Options(mode=9))  # type: ignore[arg-type]
    assert err.value.field == "mode"


def test_moves_round_trip() -> None:
    for move in (Move(0), Move(3, True), Move(7)):
        assert ENVELOPE.move_from_union(ENVELOPE.move_to_union(move)) == move


def test_events_map_to_typed_messages() -> None:
    state = position(["bRrr", "b...", "b...", "b..."], options=Plus4Options(Mode.ROUNDS, 1))
    state, events = RULES.apply_move(state, 0, Move(0))
    messages = ENVELOPE.events_to_union(events, 9)
    kinds = [m.WhichOneof("kind") for m in messages]
    assert kinds == ["plus4"] * 4 + ["ended"]
    assert [m.event_id for m in messages] == [f"9-{i}" for i in range(1, 6)]
    plus4 = [m.plus4 for m in messages[:4]]
    assert [e.WhichOneof("kind") for e in plus4] == [
        "disc_pushed",
        "disc_fell_out",
        "line_scored",
        "round_won",
    ]
    pushed = plus4[0].disc_pushed
    assert (pushed.seat, pushed.column, pushed.bonus) == (0, 0, False)
    # the frame after the push (before the round's end), the same rows RoundWon reports
    assert list(pushed.frame) == list(plus4[3].round_won.frame)
    assert [[s.disc.colour if s.HasField("disc") else None for s in row.squares] for row in pushed.frame] == [
        [0, 0, 0, 0],
        [1, None, None, None],
        [1, None, None, None],
        [1, None, None, None],
    ]
    assert plus4[1].disc_fell_out == pb.DiscFellOut(disc=pb.Disc(colour=1), returned_to=1)
    line = plus4[2].line_scored
    assert [(c.row, c.column) for c in line.cells] == [(0, 0), (0, 1), (0, 2), (0, 3)]
    assert (line.colour, line.points, line.move_number, line.round) == (0, 2, 1, 1)
    won = plus4[3].round_won
    assert (won.round, list(won.winners), list(won.round_wins), won.frame_emptied) == (1, [0], [1, 0], False)
    assert won.frame[0].squares[1].disc == pb.Disc(colour=0, bonus=True)
    assert not won.frame[3].squares[1].HasField("disc")
    assert messages[-1].ended.outcome.reason == "ROUNDS_TARGET_REACHED"
    skipped = CODEC.event_to_proto(TurnSkipped(1))
    assert skipped.turn_skipped.seat == 1
    with pytest.raises(TypeError):
        CODEC.event_to_proto(GameEnded(Outcome((1, 1), "X")))  # type: ignore[arg-type]
    assert isinstance(events[0], DiscPushed) and isinstance(events[1], DiscFellOut)
    assert isinstance(events[2], LineScored) and isinstance(events[3], RoundWon)


def test_view_message() -> None:
    state = position(["brrr", "b...", "....", "...."], scores=(1, 2), moves_made=4)
    state, _ = RULES.apply_move(state, 0, Move(0, True))
    message = CODEC.view_to_proto(RULES.view(state, 1))
    assert message.options == pb.Options(mode=pb.MODE_POINTS, target=11, move_limit=400)
    assert len(message.frame) == 4 and all(len(row.squares) == 4 for row in message.frame)
    assert [sq.disc for sq in message.frame[0].squares] == [pb.Disc(colour=0, bonus=True)] + [pb.Disc(colour=0)] * 3
    assert message.frame[1].squares[0].disc == pb.Disc(colour=1)
    assert not message.frame[3].squares[0].HasField("disc")
    assert [(s.ordinary, s.bonus) for s in message.supplies] == [(6, False), (7, True)]
    assert list(message.scores) == [3, 2] and list(message.round_wins) == [0, 0]
    assert message.HasField("to_move") and message.to_move == 1
    assert len(message.scored_lines) == 1 and message.scored_lines[0].points == 2
    assert (message.moves_made, message.round) == (5, 1)
    assert len(message.legal_moves) == 8
    done, _ = RULES.resign(state, 0)
    assert not CODEC.view_to_proto(RULES.view(done, None)).HasField("to_move")


def _random_states(count: int) -> list[Plus4State]:
    rng = random.Random(4)
    states = []
    for mode in Mode:
        for _ in range(count):
            state = RULES.new_game(Plus4Options(mode, rng.choice([1, 2, 11, 99]), rng.choice([30, 400])), 2, 0)
            while state.result is None:
                states.append(state)
                legal = RULES.legal_moves(state, state.to_move)  # type: ignore[arg-type]
                state, _ = RULES.apply_move(state, state.to_move, rng.choice(list(legal)))  # type: ignore[arg-type]
            states.append(state)
            states.append(RULES.resign(states[-2], 1)[0])
    return states


def test_states_round_trip_exactly() -> None:
    states = _random_states(15)
    assert any(s.scored for s in states) and any(s.result for s in states)
    for state in states:
        assert CODEC.state_from_bytes(CODEC.state_to_bytes(state)) == state


def test_a_long_history_round_trips() -> None:
    line = LineScored(((0, 3), (1, 2), (2, 1), (3, 0)), 1, 2, 10000, 9999)
    state = RULES.new_game(Plus4Options(Mode.ROUNDS, 99, 10000), 2, 0)
    from dataclasses import replace

    state = replace(state, scored=(line,) * 300, moves_made=10000, round_no=9999)
    assert CODEC.state_from_bytes(CODEC.state_to_bytes(state)) == state


def test_corrupt_stored_state_is_refused() -> None:
    with pytest.raises(ValueError):
        CODEC.state_from_bytes(pb.State().SerializeToString())
    good = pb.State.FromString(CODEC.state_to_bytes(RULES.new_game(Plus4Options(), 2, 0)))
    bad = pb.State()
    bad.CopyFrom(good)
    bad.red = 1 << 16
    with pytest.raises(ValueError):
        CODEC.state_from_bytes(bad.SerializeToString())
    bad.CopyFrom(good)
    del bad.ordinary[:]
    with pytest.raises(ValueError):
        CODEC.state_from_bytes(bad.SerializeToString())
    bad.CopyFrom(good)
    bad.scored_lines.append(15)
    with pytest.raises(ValueError):
        CODEC.state_from_bytes(bad.SerializeToString())
