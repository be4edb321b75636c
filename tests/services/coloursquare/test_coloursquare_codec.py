"""Colour Square codec (rules values <-> tafel.coloursquare.v1) and the generic conformance suite."""

from __future__ import annotations

import random
import time

import pytest
from tafel.coloursquare.v1 import coloursquare_pb2 as pb
from tafel_rules.coloursquare.model import Move, Options, Phase
from tafel_rules.coloursquare.rules import RULES

from services.coloursquare.codec import CODEC
from services.host import conformance
from services.host.codec import GameEnvelope, MalformedMessage
from tests.services.coloursquare.helpers import full, mv, play_round, player, table


@pytest.mark.parametrize(("seats", "side", "seeds"), [(1, "A", 6), (2, "B", 6), (6, "A", 3), (6, "B", 2)])
def test_conformance_suite(seats: int, side: str, seeds: int) -> None:
    conformance.run_suite(RULES, CODEC, Options(side=side), seats, seeds=range(seeds))


def test_conformance_suite_solo_with_target_and_short_limit() -> None:
    conformance.run_suite(RULES, CODEC, Options(side="B", target=80), 1, seeds=range(3))
    conformance.run_suite(RULES, CODEC, Options(max_rounds=5, timeouts_to_remove=1), 3, seeds=range(3))


def test_state_round_trips_in_every_phase_with_timeouts_and_removals() -> None:
    rng = random.Random(5)
    for seed in range(6):
        state = RULES.new_game(Options(side="AB"[seed % 2]), 4, seed)
        while True:
            assert CODEC.state_from_bytes(CODEC.state_to_bytes(state)) == state
            if state.phase is Phase.OVER:
                break
            seat = rng.choice(sorted(RULES.to_act(state)))
            if rng.random() < 0.15:
                state, _ = RULES.timeout(state, seat)
            elif rng.random() < 0.003:
                state, _ = RULES.resign(state, seat)
            else:
                moves = RULES.legal_moves(state, seat)
                state, _ = RULES.apply_move(state, seat, moves[rng.randrange(len(moves))])


def test_stored_state_is_compact() -> None:
    state = RULES.new_game(Options(), 6, 1)
    for _ in range(20):
        state, _ = play_round(state, {s: RULES.legal_moves(state, s)[-1] for s in range(6)})
    assert len(CODEC.state_to_bytes(state)) < 1200


def test_moves_round_trip_and_malformed_moves() -> None:
    move = mv("R@1,2", "Y@j1", "W@3,0,B")
    assert CODEC.move_from_proto(CODEC.move_to_proto(move)) == move
    assert CODEC.move_from_proto(pb.Move()) == Move()
    joker0 = pb.Move(placements=[pb.Placement(die=pb.DIE_RED, joker=0)])
    assert CODEC.move_from_proto(joker0) == mv("R@j0")
    cases = [
        (pb.Move(placements=[pb.Placement(joker=0)]), "BAD_DIE"),
        (pb.Move(placements=[pb.Placement(die=17, joker=0)]), "BAD_DIE"),  # type: ignore[arg-type]
        (pb.Move(placements=[pb.Placement(die=pb.DIE_RED)]), "BAD_TARGET"),
        (pb.Move(placements=[pb.Placement(die=pb.DIE_RED, cell=pb.Cell(row=1, column=1))]), "BAD_TARGET"),
        (pb.Move(placements=[pb.Placement(die=pb.DIE_RED, joker=0)] * 17), "BAD_PLACEMENT"),
    ]
    for message, reason in cases:
        with pytest.raises(MalformedMessage) as err:
            CODEC.move_from_proto(message)
        assert err.value.reason == reason


def test_options_defaults_fill_in() -> None:
    assert CODEC.options_from_proto(pb.Options()) == Options()
    options = Options(side="B", target=70, timeouts_to_remove=2, max_rounds=50)
    assert CODEC.options_from_proto(CODEC.options_to_proto(options)) == options


def test_view_to_proto_carries_the_table() -> None:
    almost = player(cells={(0, 0): (None, 1, 6, 4)}, status=full("A", {(0, 0)}), jokers=(3, 3))
    state = table(2, {0: almost}, roll=(1, 2, 3, 4, 5))
    state, _ = RULES.apply_move(state, 1, mv("W@1,1,G"))
    message = CODEC.view_to_proto(RULES.view(state, 1))
    assert message.seat == 1 and message.phase == pb.PHASE_ROUND and message.round == 1
    assert message.sheet.label == "tafel sheet A" and len(message.sheet.squares) == 16
    assert message.sheet.squares[1].kind == pb.SQUARE_KIND_PURPLE
    assert (message.roll.red, message.roll.white) == (1, 5)
    assert list(message.to_place) == [0]
    assert [p.die for p in message.own_pending.placements] == [pb.DIE_WHITE]
    assert list(message.players[0].jokers) == [3, 3] and message.players[0].breakdown.jokers == -6
    assert list(message.players[0].squares[0].cells) == [0, 1, 6, 4]
    assert message.players[0].squares[1].status == pb.SQUARE_STATUS_WRONG
    assert message.players[1].placed and not message.HasField("result")
    spectator = CODEC.view_to_proto(RULES.view(state, None))
    assert not spectator.HasField("seat") and not spectator.HasField("own_pending")
    state, _ = RULES.apply_move(state, 0, mv("R@0,0"))
    state, _ = RULES.apply_move(state, 1, Move())
    over = CODEC.view_to_proto(RULES.view(state, None))
    assert over.phase == pb.PHASE_OVER and not over.HasField("roll")
    assert over.result.reason == "COLOUR_SQUARE" and over.result.caller == 0
    assert not over.result.HasField("reached")
    sheet_b = CODEC.view_to_proto(RULES.view(RULES.new_game(Options(side="B"), 1, 1), 0)).sheet
    printed = {(sq.row, sq.column): [(p.colour, p.value) for p in sq.printed] for sq in sheet_b.squares if sq.printed}
    assert printed[(0, 2)] == [(pb.COLOUR_YELLOW, 1)]
    assert (sheet_b.squares[1].goal_low, sheet_b.squares[1].goal_high) == (15, 18)


def test_every_event_encodes() -> None:
    envelope = GameEnvelope(CODEC)
    almost = player(cells={(0, 0): (None, 1, 6, 4)}, status=full("A", {(0, 0)}), jokers=(3, 3))
    state = table(3, {0: almost}, roll=(1, 2, 3, 4, 5), timeouts_to_remove=1)
    state, events = play_round(state, {0: mv("R@0,0"), 1: mv("W@0,0,R"), 2: None})
    state, more = RULES.resign(state, 1)
    union = envelope.events_to_union([*events, *more], 1)
    kinds = [m.WhichOneof("kind") for m in union]
    inner = [m.coloursquare.WhichOneof("kind") for m in union if m.WhichOneof("kind") == "coloursquare"]
    assert {"timed_out", "resigned", "ended"} <= set(kinds)
    assert kinds[-1] == "ended"
    assert {
        "placement_submitted",
        "placements_made",
        "square_closed",
        "square_crossed",
        "round_resolved",
        "colour_square_called",
        "dice_rolled",
        "player_removed",
    } <= set(inner)


def test_codec_is_fast_enough_for_the_hot_path() -> None:
    state = RULES.new_game(Options(), 6, 3)
    for _ in range(10):
        state, _ = play_round(state, {s: RULES.legal_moves(state, s)[0] for s in range(6)})
    started = time.perf_counter()
    for _ in range(200):
        CODEC.state_from_bytes(CODEC.state_to_bytes(state))
    per_call = (time.perf_counter() - started) / 200
    print(f"state round trip, 6 seats: {per_call * 1e6:.0f} us")
