"""Every part of the score, separately and together (rules page: Bridges and bonuses; End of the game)."""

from __future__ import annotations

from tafel_rules.coloursquare.model import Breakdown
from tafel_rules.coloursquare.scoring import breakdown, coloured_bridges, competition_ranks, ranking
from tafel_rules.coloursquare.sheets import SHEETS

from tests.services.coloursquare.helpers import player

A = SHEETS["A"]
B = SHEETS["B"]


def test_empty_sheet_scores_nothing_until_the_end() -> None:
    assert breakdown(A, player(), over=False) == Breakdown()
    # Once over, all 16 open squares cost -10 each.
    assert breakdown(A, player(), over=True) == Breakdown(open_penalty=-160, total=-160)


def test_circled_is_the_sum_of_correct_squares() -> None:
    p = player(cells={(0, 0): (5, 1, 5, 1), (1, 1): (1, 2, 1, 2)}, status={(0, 0): "correct", (1, 1): "correct"})
    b = breakdown(A, p, over=False)
    assert b.circled == 12 + 6
    assert b.bridges == 0  # (0,0) and (1,1) are diagonal, not adjacent
    assert b.total == 18


def test_wrong_penalty() -> None:
    p = player(cells={(0, 0): (6, 6, 6, 6), (3, 3): (1, 1, 1, 1)}, status={(0, 0): "wrong", (3, 3): "wrong"})
    b = breakdown(A, p, over=False)
    assert (b.circled, b.wrong_penalty, b.total) == (0, -20, -20)


def test_crossed_squares_score_and_cost_nothing() -> None:
    p = player(cells={(0, 0): (6, 6, None, None)}, status={(0, 0): "crossed"})
    assert breakdown(A, p, over=False) == Breakdown()
    assert breakdown(A, p, over=True).open_penalty == -150  # 15 open, the crossed one costs nothing


def test_jokers_cost_their_values() -> None:
    p = player(jokers=(4, 6))
    assert breakdown(A, p, over=False) == Breakdown(jokers=-10, total=-10)
    assert breakdown(A, player(jokers=(3, None)), over=False).jokers == -3


def test_bridges_purple_and_orange_worked_example() -> None:
    # (1,1)=6 and (1,2)=19 correct: one bridge. (0,1) purple 17 correct next to (1,1): bridge + purple.
    # (0,3) orange 21 correct next to correct (1,3): no bridge there; (1,2)-(1,3) is a bridge.
    p = player(
        cells={
            (1, 1): (1, 2, 1, 2),
            (1, 2): (6, 6, 6, 1),
            (0, 1): (5, 5, 5, 2),
            (0, 3): (6, 6, 6, 3),
            (1, 3): (2, 3, 3, 3),
        },
        status={
            (1, 1): "correct",
            (1, 2): "correct",
            (0, 1): "correct",
            (0, 3): "correct",
            (1, 3): "correct",
        },
    )
    assert set(coloured_bridges(A, p)) == {(1, 5), (5, 6), (6, 7)}
    b = breakdown(A, p, over=False)
    assert b == Breakdown(circled=6 + 19 + 17 + 21 + 11, bridges=15, purple=5, total=74 + 15 + 5)


def test_one_bridge_only() -> None:
    p = player(cells={(1, 1): (1, 2, 1, 2), (1, 2): (6, 6, 6, 1)}, status={(1, 1): "correct", (1, 2): "correct"})
    assert breakdown(A, p, over=False).bridges == 5


def test_purple_needs_a_coloured_bridge_and_counts_once() -> None:
    alone = player(cells={(2, 0): (3, 2, 2, 2)}, status={(2, 0): "correct"})
    assert breakdown(A, alone, over=False).purple == 0
    # (2,3) purple 16 with correct (1,3)=11, (3,3)=7, (2,2)=13: three bridges, purple +5 once.
    p = player(
        cells={(2, 3): (4, 4, 4, 4), (1, 3): (2, 3, 3, 3), (3, 3): (1, 2, 2, 2), (2, 2): (4, 3, 3, 3)},
        status={(2, 3): "correct", (1, 3): "correct", (3, 3): "correct", (2, 2): "correct"},
    )
    b = breakdown(A, p, over=False)
    # Bridges (1,3)-(2,3), (2,2)-(2,3), (2,3)-(3,3); (2,2), (1,3), (3,3) are not adjacent to each other.
    assert set(coloured_bridges(A, p)) == {(7, 11), (10, 11), (11, 15)}
    assert (b.bridges, b.purple) == (15, 5)


def test_purple_next_to_a_wrong_square_gets_no_bonus() -> None:
    p = player(cells={(0, 1): (5, 5, 5, 2), (1, 1): (6, 6, 6, 6)}, status={(0, 1): "correct", (1, 1): "wrong"})
    b = breakdown(A, p, over=False)
    assert (b.bridges, b.purple, b.wrong_penalty, b.total) == (0, 0, -10, 7)


def test_orange_squares_never_bridge() -> None:
    # (3,0) orange 23 next to (2,0) purple 9 and (3,1) 10, all correct.
    p = player(
        cells={(3, 0): (6, 6, 6, 5), (2, 0): (3, 2, 2, 2), (3, 1): (4, 2, 2, 2)},
        status={(3, 0): "correct", (2, 0): "correct", (3, 1): "correct"},
    )
    b = breakdown(A, p, over=False)
    assert (b.bridges, b.purple) == (0, 0)


def test_range_square_scores_its_sum() -> None:
    # Side B (0,1) goal 15..18 holding 17; (0,0)=14 next to it: one bridge.
    p = player("B", cells={(0, 1): (6, 6, 4, 1), (0, 0): (5, 5, 2, 2)}, status={(0, 1): "correct", (0, 0): "correct"})
    assert breakdown(B, p, over=False) == Breakdown(circled=17 + 14, bridges=5, total=36)


def test_all_parts_together() -> None:
    p = player(
        cells={
            (1, 1): (1, 2, 1, 2),  # 6 correct
            (0, 1): (5, 5, 5, 2),  # 17 purple correct, bridged to (1,1)
            (2, 2): (6, 6, 6, 6),  # wrong
            (3, 3): (1, 1, None, None),  # open
        },
        status={(1, 1): "correct", (0, 1): "correct", (2, 2): "wrong"},
        jokers=(2, 5),
    )
    live = breakdown(A, p, over=False)
    assert live == Breakdown(circled=23, bridges=5, purple=5, wrong_penalty=-10, open_penalty=0, jokers=-7, total=16)
    end = breakdown(A, p, over=True)
    assert end.open_penalty == -10 * 13
    assert end.total == 16 - 130
    parts = end.circled + end.bridges + end.purple + end.wrong_penalty + end.open_penalty + end.jokers
    assert end.total == parts


def test_competition_ranks_decision_d13() -> None:
    assert competition_ranks([10, 20, 20, 5], [False] * 4) == (3, 1, 1, 4)
    # A removed seat ranks below everyone not removed, whatever its score.
    assert competition_ranks([10, 99, 20], [False, True, False]) == (2, 3, 1)
    assert competition_ranks([10, 99, 20, 50], [False, True, False, True]) == (2, 3, 1, 4)
    # Everyone removed: the highest-scoring removed seats share first place.
    assert competition_ranks([5, 7, 7], [True, True, True]) == (3, 1, 1)
    assert ranking((3, 1, 1, 4)) == (1, 2, 0, 3)
