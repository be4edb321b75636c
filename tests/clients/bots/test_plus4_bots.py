"""Plus 4 bots: the view reads back as the rules' state (the bots search with the rules module
itself), what each level does, and level 3 against level 1 in refereed games of each mode."""

from __future__ import annotations

import random
import time
from dataclasses import replace

import pytest
from tafel.bots.plus4 import Plus4Bot, state_from_view
from tafel.plus4.v1 import plus4_pb2 as pb
from tafel_rules import plus4 as p4
from tafel_rules.game import IllegalMove

from services.plus4.codec import CODEC
from tests.clients.bots.referee import plus4_match

MODES = {"points": p4.Mode.POINTS, "first_line": p4.Mode.FIRST_LINE, "rounds": p4.Mode.ROUNDS}


def view_of(state: p4.Plus4State) -> pb.View:
    return CODEC.view_to_proto(p4.RULES.view(state, state.to_move))


@pytest.mark.parametrize("mode", list(MODES))
def test_the_view_reads_back_as_the_rules_state(mode: str) -> None:
    """The bots search with the rules module itself (tafel_rules.plus4.next_state), so only
    reading the view can go wrong: in random games (small targets and move limits, so rounds and
    every ending occur) the state read from each view is the rules' state, less the history of
    scored lines no rule reads."""
    rng = random.Random(f"plus4-sim-{mode}")
    endings: set[str] = set()
    for _ in range(60):
        options = p4.Plus4Options(MODES[mode], rng.randint(1, 6), rng.randint(3, 150))
        state = p4.RULES.new_game(options, 2, 0)
        while state.result is None:
            seat = state.to_move
            assert seat is not None
            assert state_from_view(view_of(state)) == replace(state, scored=())
            state, _ = p4.RULES.apply_move(state, seat, rng.choice(list(p4.RULES.legal_moves(state, seat))))
        endings.add(state.result.reason)
    assert p4.MOVE_LIMIT in endings


def test_next_state_is_apply_move_without_events() -> None:
    """The search's push is the service's: same state after every push, illegal pushes refused."""
    rng = random.Random("plus4-next-state")
    for mode in MODES.values():
        state = p4.RULES.new_game(p4.Plus4Options(mode, 3, 120), 2, 0)
        while state.result is None:
            seat = state.to_move
            assert seat is not None
            move = rng.choice(list(p4.RULES.legal_moves(state, seat)))
            searched = p4.next_state(state, move)
            state, _ = p4.RULES.apply_move(state, seat, move)
            assert searched == state
    state = p4.RULES.new_game(p4.Plus4Options(), 2, 0)
    with pytest.raises(IllegalMove):
        p4.next_state(state, p4.Move(4))
    after = p4.next_state(p4.next_state(state, p4.Move(0, True)), p4.Move(1))
    with pytest.raises(IllegalMove):
        p4.next_state(after, p4.Move(2, True))  # red's bonus disc is in the frame
    with pytest.raises(IllegalMove):
        p4.next_state(replace(state, to_move=None), p4.Move(0))


@pytest.mark.parametrize("level", [2, 3])
def test_completes_a_line(level: int) -> None:
    # red to move; row 0 reads r r r . with column 3 empty: pushing into column 3 scores
    state = p4.position(["rrr.", "bbb.", "....", "...."], to_move=0)
    move = Plus4Bot(level, seed=1, move_seconds=None, move_nodes=5_000).choose(view_of(state))
    assert move.column == 3
    if level == 3:
        assert move.bonus  # a line with the bonus disc is worth 2


def test_level2_denies_the_opponent() -> None:
    # blue threatens row 0 at column 3 (b b b .); red cannot score now. A red disc pushed into column
    # 3 is pushed down again by blue's, which completes the row; a push into columns 0-2 breaks the row
    # for a move. Level 2 also keeps its bonus disc when nothing scores.
    state = p4.position(["bbb.", "rr..", "....", "...."], to_move=0)
    for seed in range(10):
        move = Plus4Bot(2, seed=seed).choose(view_of(state))
        assert move.column in (0, 1, 2) and not move.bonus


def test_level1_is_legal_and_random() -> None:
    state = p4.RULES.new_game(p4.Plus4Options(), 2, 0)
    bot = Plus4Bot(1, seed=4)
    seen = {(m.column, m.bonus) for m in (bot.choose(view_of(state)) for _ in range(200))}
    assert len(seen) == 8


@pytest.mark.parametrize(
    ("mode", "games", "budget"), [("points", 20, 2_000), ("first_line", 20, 2_000), ("rounds", 6, 800)]
)
def test_level3_beats_level1(mode: str, games: int, budget: int) -> None:
    wins = draws = losses = 0
    started = time.perf_counter()
    for game in range(games):
        strong = Plus4Bot(3, seed=game, move_seconds=None, move_nodes=budget)
        weak = Plus4Bot(1, seed=1_000 + game)
        seat = game % 2
        outcome, _ = plus4_match((strong, weak) if seat == 0 else (weak, strong), p4.Plus4Options(MODES[mode]))
        if outcome.is_draw:
            draws += 1
        elif outcome.ranks[seat] == 1:
            wins += 1
        else:
            losses += 1
    print(
        f"\nPlus 4 ({mode}), level 3 vs level 1, {games} games: {wins} won, {draws} drawn, {losses} lost ({time.perf_counter() - started:.1f} s)"
    )
    assert wins > 0.75 * games


def test_level3_beats_level2_on_points() -> None:
    wins = losses = 0
    for game in range(10):
        strong = Plus4Bot(3, seed=game, move_seconds=None, move_nodes=2_000)
        weaker = Plus4Bot(2, seed=2_000 + game)
        seat = game % 2
        outcome, _ = plus4_match((strong, weaker) if seat == 0 else (weaker, strong))
        if not outcome.is_draw:
            wins += outcome.ranks[seat] == 1
            losses += outcome.ranks[seat] != 1
    print(f"\nPlus 4 (points), level 3 vs level 2, 10 games: {wins} won, {losses} lost")
    assert wins > losses
