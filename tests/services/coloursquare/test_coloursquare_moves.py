"""legal_moves lists exactly the legal placement lists (checked against brute force)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import replace

import pytest
from tafel_rules.coloursquare.model import DICE, Cell, Die, Joker, Move, Options, Phase, Placement, State, Target
from tafel_rules.coloursquare.moves import FinalMoves
from tafel_rules.coloursquare.rules import RULES, sheet_of
from tafel_rules.game import IllegalMove


def _legal(state: State, seat: int, move: Move) -> bool:
    try:
        RULES.apply_move(state, seat, move)
    except IllegalMove:
        return False
    return True


def _all_targets(state: State) -> list[Target]:
    sheet = sheet_of(state)
    cells: list[Target] = [
        Cell(r, c, colour) for r in range(sheet.rows) for c in range(sheet.cols) for colour in DICE[:4]
    ]
    return [*cells, Joker(0), Joker(1)]


def brute_force(state: State, seat: int) -> set[Move]:
    """Every legal list, dice in R Y G B W order, found by trying each single placement and then
    every combination of individually placeable dice."""
    final = state.phase is Phase.FINAL
    singles: dict[Die, list[Target]] = {}
    for die in DICE:
        singles[die] = []
        for target in _all_targets(state):
            one = Move((Placement(die, target),))
            try:
                RULES.apply_move(state, seat, one)
                ok = True
            except IllegalMove as err:
                ok = err.reason in ("MUST_PLACE",)  # legal alone but too few dice
            if ok:
                singles[die].append(target)
    found: set[Move] = set()
    options = [[None, *((d, t) for t in singles[d])] for d in DICE]
    for combo in itertools.product(*options):
        chosen = [Placement(d, t) for item in combo if item is not None for d, t in [item]]
        if not final and len(chosen) > 2:
            continue
        move = Move(tuple(chosen))
        if _legal(state, seat, move):
            found.add(move)
    return found


def states(seed: int, seats: int, side: str) -> Iterator[State]:
    """Every state of one random game (random legal moves, a few timeouts)."""
    rng = random.Random(seed)
    state = RULES.new_game(Options(side=side), seats, seed)
    while state.phase is not Phase.OVER:
        yield state
        seat = rng.choice(sorted(RULES.to_act(state)))
        moves = RULES.legal_moves(state, seat)
        if rng.random() < 0.1:
            state, _ = RULES.timeout(state, seat)
        else:
            state, _ = RULES.apply_move(state, seat, moves[rng.randrange(len(moves))])


def _sampled(seed: int, seats: int, side: str, every: int) -> list[tuple[State, int]]:
    out = []
    for i, state in enumerate(states(seed, seats, side)):
        if state.phase is Phase.FINAL or i % every == 0:
            out.extend((state, seat) for seat in sorted(RULES.to_act(state)))
    return out


@pytest.mark.parametrize(("seed", "seats", "side"), [(1, 3, "A"), (2, 2, "B"), (3, 4, "B"), (4, 1, "A")])
def test_legal_moves_match_brute_force(seed: int, seats: int, side: str) -> None:
    checked = finals = 0
    for state, seat in _sampled(seed, seats, side, every=11):
        if state.phase is Phase.FINAL:
            moves = RULES.legal_moves(state, seat)
            if len(moves) > 20_000:
                continue  # too many for the brute force; covered by the size test below
        listed = list(RULES.legal_moves(state, seat))
        assert len(listed) == len(set(listed)), "no duplicates"
        assert set(listed) == brute_force(state, seat)
        checked += 1
        finals += state.phase is Phase.FINAL
    assert checked > 3
    assert finals or seats == 1


def test_final_moves_index_and_contains() -> None:
    for seed in range(6):
        for state, seat in _sampled(seed, 3, "AB"[seed % 2], every=10**9):
            if state.phase is not Phase.FINAL:
                continue
            moves = RULES.legal_moves(state, seat)
            assert isinstance(moves, FinalMoves)
            n = len(moves)
            assert n >= 1 and Move() in moves
            assert moves[-1] == moves[n - 1] and moves[0:3] == [moves[i] for i in range(min(3, n))]
            with pytest.raises(IndexError):
                moves[n]
            rng = random.Random(seed)
            for i in (rng.randrange(n) for _ in range(30)):
                move = moves[i]
                assert move in moves
                RULES.apply_move(state, seat, move)
                reordered = Move(tuple(reversed(move.placements)))
                if len(move.placements) > 1:
                    assert reordered not in moves  # listed in die order only
                    RULES.apply_move(state, seat, reordered)  # but any order applies


def test_final_moves_on_an_empty_sheet_are_counted_without_listing() -> None:
    # A final turn on an untouched sheet: every die anywhere it fits, or left out.
    state = RULES.new_game(Options(), 2, 1)
    state = replace(state, phase=Phase.FINAL, waiting=(1,), caller=0, roll=(1, 2, 3, 4, 5))
    moves = RULES.legal_moves(state, 1)
    # Without jokers: R Y G B each skip or 16 cells; W skip or 64 cells minus the one its colour
    # die took. Count: sum over W choices.
    no_joker = 17**4 + 4 * 16 * (16 * 17**3)  # W skips; W in a colour-k cell, die k elsewhere or out
    assert len(moves) > no_joker
    for i in range(0, len(moves), len(moves) // 50):
        RULES.apply_move(state, 1, moves[i])
