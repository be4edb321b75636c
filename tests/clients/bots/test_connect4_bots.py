"""Connect Four bots: what each level does, and level 3 against level 1 over 100 refereed games."""

from __future__ import annotations

import time

import pytest
from tafel.bots import make_bot
from tafel.bots.connect4 import EXACT_REMAINING, Connect4Bot, board_from_view
from tafel.bots.connect4_native import load as load_native
from tafel.connect4.v1 import connect4_pb2 as pb
from tafel_rules import connect4 as c4

from services.connect4.codec import CODEC
from tests.clients.bots.referee import connect4_match


def view_after(moves: str, rows: int = 6, columns: int = 7) -> pb.View:
    """The public view after a 1-based move string (single-digit columns)."""
    state = c4.replay(c4.Options(rows, columns), [int(ch) - 1 for ch in moves])
    return CODEC.view_to_proto(c4.RULES.view(state, state.to_move))


def fast_level3(seed: int = 0) -> Connect4Bot:
    # node budgets rather than a clock: the games are the same on any machine
    return Connect4Bot(
        3, seed=seed, move_seconds=None, move_nodes=1_500, exact_nodes=1_500, perfect_seconds=None, perfect_nodes=20_000
    )


def test_level1_plays_only_legal_columns() -> None:
    bot = Connect4Bot(1, seed=1)
    view = view_after("111111")  # column 0 (1-based 1) is full
    for _ in range(50):
        assert bot.column(view) != 0


@pytest.mark.parametrize("level", [2, 3])
def test_wins_at_once(level: int) -> None:
    # the first player has three in column 3 (1-based 4) and is to move
    view = view_after("414141")
    assert make_bot("connect4", level, seed=3).column(view) == 3


@pytest.mark.parametrize("level", [2, 3])
def test_blocks_an_immediate_loss(level: int) -> None:
    # the first player has three in column 1 (0-based 0): the second player must block on top
    assert make_bot("connect4", level, seed=3).column(view_after("12121")) == 0
    # the second player has three in column 2 (0-based 1): the first player must block on top
    assert make_bot("connect4", level, seed=3).column(view_after("1272723")) == 1


def test_level2_does_not_play_under_a_threat() -> None:
    # 0-based (row, column): the first player holds (0,1) (0,3) (0,6) (1,6), the second (0,2) (1,1)
    # (1,2) (1,3): row 1 of columns 1-3 is the second player's, so (1,0) and (1,4) win for it.
    # Nothing wins or must be blocked now; columns 0 and 4 would give the second player its four.
    view = view_after("23427374")
    assert board_from_view(view).nb == 8
    for seed in range(10):
        assert Connect4Bot(2, seed=seed).column(view) == 3  # safe, and the most central


@pytest.mark.parametrize("native", [True, False])
def test_level3_is_exact_near_the_end(native: bool) -> None:
    """With the compiled solver and with the pure-Python fallback (the library not built)."""
    moves = "2252576253462244111563365343671351441"  # Test_L3_R1 line 1, score -1
    bot = Connect4Bot(3, native=native)
    assert (bot.native is not None) == (native and load_native() is not None)
    bot.column(view_after(moves))
    assert bot.last is not None and bot.last.exact and bot.last.score == -1 and bot.last.outcome == -1
    assert 42 - len(moves) <= EXACT_REMAINING


def test_level3_exact_scores_are_in_pons_scale() -> None:
    """exact=True means the published scale (22 minus the winner's discs), in every path: the
    compiled solver, the Python solver, and the depth-limited search's immediate results."""
    # the side to move wins at once with its 4th disc: 22 - 4
    for bot in (Connect4Bot(3), Connect4Bot(3, native=False, book=False)):
        bot.column(view_after("414141"))
        assert bot.last is not None and bot.last.exact and bot.last.score == 18
    # 8 x 5 (depth-limited search only; 40 cells: a win with the 4th disc scores 21 - 4): a win
    # now, and a loss to two open threats on the bottom row
    bot = Connect4Bot(3, move_seconds=None, move_nodes=2_000)
    bot.column(view_after("121212", rows=5, columns=8))
    assert bot.last is not None and bot.last.exact and bot.last.score == 17
    bot.column(view_after("33445", rows=5, columns=8))
    assert bot.last is not None and bot.last.exact and bot.last.score == -17


def test_level3_opens_in_the_centre() -> None:
    bot = fast_level3()
    assert bot.column(view_after("")) == 3


def test_other_board_sizes_use_the_depth_limited_search() -> None:
    bot = Connect4Bot(3, move_seconds=None, move_nodes=2_000)
    view = view_after("1212", rows=5, columns=8)
    column = bot.column(view)
    assert 0 <= column < 8
    assert bot.last is not None and not (bot.last.exact and bot.last.depth > 2)
    # and it still takes an immediate win on a 10 x 10 board
    assert bot.column(view_after("121212", rows=10, columns=10)) == 0


def test_finished_game_is_refused() -> None:
    with pytest.raises(ValueError):
        Connect4Bot(2).column(view_after("1212121"))


def test_level3_beats_level1_in_95_of_100_games() -> None:
    wins = draws = losses = 0
    started = time.perf_counter()
    for game in range(100):
        strong, weak = fast_level3(seed=game), Connect4Bot(1, seed=10_000 + game)
        seat = game % 2  # alternate who starts
        players = (strong, weak) if seat == 0 else (weak, strong)
        outcome, _ = connect4_match(players)
        if outcome.is_draw:
            draws += 1
        elif outcome.ranks[seat] == 1:
            wins += 1
        else:
            losses += 1
    print(
        f"\nConnect Four, level 3 vs level 1, 100 games: {wins} won, {draws} drawn, {losses} lost ({time.perf_counter() - started:.1f} s)"
    )
    assert wins >= 95


def test_level3_beats_level2() -> None:
    wins = 0
    for game in range(10):
        strong, weaker = fast_level3(seed=game), Connect4Bot(2, seed=20_000 + game)
        seat = game % 2
        outcome, _ = connect4_match((strong, weaker) if seat == 0 else (weaker, strong))
        wins += outcome.ranks[seat] == 1 and not outcome.is_draw
    print(f"\nConnect Four, level 3 vs level 2, 10 games: {wins} won")
    assert wins >= 8


def test_level3_proves_past_its_first_share_rather_than_guess() -> None:
    """A random 8-disc position off the bot's own lines (not in the book) whose result-keeping proof
    takes ~0.5 M nodes (tens of ms): with a 1 ms first share the proof goes on (PROOF_SECONDS) and
    the move is a proven winning one; without the extension the bot falls back to the heuristic's
    unproven guess. The limits leave seconds of margin on a loaded machine."""
    native = load_native()
    if native is None:
        pytest.skip("the compiled solver is not built")
    moves = "57214321"  # a win for the side to move (checked below with an unbounded solve)
    view = view_after(moves)
    board = board_from_view(view)
    native.clear()  # the table is the process's: start both bots cold
    proving = Connect4Bot(3, perfect_seconds=0.001, proof_seconds=20.0)
    assert proving.book is None or proving.book.lookup(board.current, board.mask) is None
    column = proving.column(view)
    assert proving.last is not None and proving.last.outcome == 1
    e = board.engine
    after, after_mask = e.play(board.current, board.mask, column)
    assert native.solve(after, after_mask, board.nb + 1, weak=True) == -1  # the opponent is lost
    native.clear()
    guessing = Connect4Bot(3, perfect_seconds=0.001, proof_seconds=None, move_seconds=0.001)
    guessing.column(view)
    assert guessing.last is not None and guessing.last.outcome is None
