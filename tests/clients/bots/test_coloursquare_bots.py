"""Colour Square bots: legal placements worked out from the view agree with the rules module, the
scores they expect are the rules' scores, and the levels' solo averages (figures printed)."""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import replace

import pytest
from tafel.bots.coloursquare import (
    ROLE_ACTIVE,
    ROLE_FINAL,
    ROLE_PASSIVE,
    ColourSquareBot,
    best_final,
    immediate_gain,
    legal_moves,
    situation_from_view,
)
from tafel.coloursquare.v1 import coloursquare_pb2 as pb
from tafel_rules.coloursquare import rules as cs
from tafel_rules.coloursquare.model import Options, Phase, Placement, SquareClosed, State
from tafel_rules.coloursquare.moves import legal_round_moves
from tafel_rules.coloursquare.scoring import breakdown

from services.coloursquare.codec import CODEC
from tests.clients.bots.referee import coloursquare_game

RULES = cs.RULES


def view_of(state: State, seat: int) -> pb.View:
    return CODEC.view_to_proto(RULES.view(state, seat))


def as_rules_move(move: pb.Move) -> frozenset[Placement]:
    return frozenset(CODEC.move_from_proto(move).placements)


def to_proto(placements: tuple[object, ...], columns: int) -> pb.Move:
    return pb.Move(placements=[p.to_proto(columns) for p in placements])  # type: ignore[attr-defined]


def random_states(seats: int, side: str, seed: int, rounds: int) -> list[State]:
    """States met along a game of random legal play (every seat to place, each round)."""
    rng = random.Random(seed)
    state = RULES.new_game(Options(side=side), seats, seed)
    seen = []
    for _ in range(rounds):
        if state.phase is Phase.OVER:
            break
        seen.append(state)
        for seat in sorted(RULES.to_act(state)):
            if state.phase is Phase.OVER or seat not in RULES.to_act(state):
                continue
            moves = RULES.legal_moves(state, seat)
            state, _ = RULES.apply_move(state, seat, moves[rng.randrange(len(moves))])
    return seen


@pytest.mark.parametrize("side", ["A", "B"])
def test_legal_placements_match_the_rules(side: str) -> None:
    checked = {ROLE_ACTIVE: 0, ROLE_PASSIVE: 0}
    for seed in range(6):
        for state in random_states(3, side, seed, 40):
            if state.phase is not Phase.ROUND:
                continue
            for seat in state.waiting:
                s = situation_from_view(view_of(state, seat))
                assert state.roll is not None
                expected = {
                    frozenset(m.placements)
                    for m in legal_round_moves(
                        cs.sheet_of(state), state.players[seat], state.roll, cs.role_of(state, seat)
                    )
                }
                got = {as_rules_move(to_proto(m, s.layout.columns)) for m in legal_moves(s)}
                assert got == expected
                checked[s.role] += 1
    assert checked[ROLE_ACTIVE] > 20 and checked[ROLE_PASSIVE] > 40


@pytest.mark.parametrize("side", ["A", "B"])
def test_immediate_gain_is_the_rules_score_change(side: str) -> None:
    rng = random.Random(side)
    sheet = cs.SHEETS[side]
    for seed in range(4):
        for state in random_states(1, side, 100 + seed, 40):
            s = situation_from_view(view_of(state, 0))
            before = breakdown(sheet, state.players[0], False).total
            for move in rng.sample(legal_moves(s), min(20, len(legal_moves(s)))):
                after_state, _ = RULES.apply_move(state, 0, CODEC.move_from_proto(to_proto(move, s.layout.columns)))
                after = breakdown(sheet, after_state.players[0], False).total
                assert immediate_gain(s, move) == after - before


def test_final_turn_completes_what_it_can() -> None:
    """A final turn that can close two squares correctly with the five dice does so."""
    state = RULES.new_game(Options(side="A"), 2, 7)
    sheet = cs.SHEETS["A"]
    players = list(state.players)
    cells = [None] * (sheet.size * 4)
    # square (0,0), goal 12: R Y G written 3 3 3, blue missing (needs 3)
    cells[0:3] = [3, 3, 3]
    # square (1,1), goal 6: R Y B written 1 1 1, green missing (needs 3)
    i = sheet.index(1, 1) * 4
    cells[i], cells[i + 1], cells[i + 3] = 1, 1, 1
    players[1] = replace(players[1], cells=tuple(cells))
    state = replace(state, players=tuple(players), phase=Phase.FINAL, waiting=(1,), caller=0, final_queue=())
    state = cs.with_roll(state, (6, 6, 5, 3, 3))  # blue 3 for (0,0); white 3 for the green cell of (1,1)
    s = situation_from_view(view_of(state, 1))
    assert s.role == ROLE_FINAL
    move = best_final(s)
    after, events = RULES.apply_move(state, 1, CODEC.move_from_proto(to_proto(move, sheet.cols)))
    closed = [e for e in events if isinstance(e, SquareClosed)]
    # the best set: (0,0) with the blue 3 (12) and (2,1), goal 20, with red 6, yellow 6, green 5 and
    # the white 3 -- worth more than (1,1) (6) with the white 3
    assert {(e.row, e.col, e.correct, e.total) for e in closed} == {(0, 0, True, 12), (2, 1, True, 20)}
    # bot-chosen final turns are accepted, at every level
    for level in (1, 2, 3):
        RULES.apply_move(state, 1, CODEC.move_from_proto(ColourSquareBot(level, seed=1).choose(view_of(state, 1))))


@pytest.mark.parametrize("side", ["A", "B"])
def test_multiplayer_games_run_to_the_end(side: str) -> None:
    """Three seats (levels 1, 2, 3) and two seats (3 vs 1): every list each bot sends is accepted by
    the rules, final turns included."""
    level3_ahead = 0
    for seed in range(4):
        outcome, state = coloursquare_game(
            [ColourSquareBot(level, seed=seed) for level in (1, 2, 3)], seed, Options(side=side)
        )
        assert state.phase is Phase.OVER and outcome.reason in ("COLOUR_SQUARE", "ROUND_LIMIT")
        outcome, _ = coloursquare_game(
            [ColourSquareBot(3, seed=seed), ColourSquareBot(1, seed=seed)], seed, Options(side=side)
        )
        level3_ahead += outcome.scores[0] > outcome.scores[1]
    assert level3_ahead >= 3


def solo_scores(level: int, side: str, games: int) -> list[int]:
    scores = []
    for game in range(games):
        outcome, _ = coloursquare_game([ColourSquareBot(level, seed=game)], 50_000 + game, Options(side=side))
        assert outcome.reason == "SOLO_FINISHED"
        scores.append(outcome.scores[0])
    return scores


@pytest.mark.parametrize("side", ["A", "B"])
def test_level3_outscores_level1_solo(side: str) -> None:
    figures = {}
    started = time.perf_counter()
    for level in (1, 2, 3):
        scores = solo_scores(level, side, 50 if level != 2 else 20)
        figures[level] = statistics.mean(scores)
        print(
            f"\nColour Square solo, sheet {side}, level {level}, {len(scores)} games: mean {figures[level]:.1f}, "
            f"min {min(scores)}, max {max(scores)}",
            end="",
        )
    print(f"\n({time.perf_counter() - started:.1f} s)")
    assert figures[3] > figures[2] > figures[1]
    assert figures[3] > figures[1] + 100
