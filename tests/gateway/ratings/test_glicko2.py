"""Glicko-2 against the worked example in Glickman's "Example of the Glicko-2 system"."""

from __future__ import annotations

import math

import pytest

from gateway.ratings.glicko2 import (
    PROVISIONAL_RD,
    Rating,
    age,
    expected,
    g,
    pair_score,
    rate_table,
    update,
)

PLAYER = Rating(1500, 200, 0.06)
OPPONENTS = [Rating(1400, 30), Rating(1550, 100), Rating(1700, 300)]


def test_paper_intermediate_values() -> None:
    # Step 2: mu = 0, phi = 1.1513; the opponents on the Glicko-2 scale.
    assert PLAYER.mu == 0
    assert PLAYER.phi == pytest.approx(1.1513, abs=1e-4)
    assert [round(o.mu, 4) for o in OPPONENTS] == [-0.5756, 0.2878, 1.1513]
    assert [round(o.phi, 4) for o in OPPONENTS] == [0.1727, 0.5756, 1.7269]
    # Step 3: g and E.
    assert [round(g(o.phi), 4) for o in OPPONENTS] == [0.9955, 0.9531, 0.7242]
    assert [round(expected(0, o.mu, o.phi), 3) for o in OPPONENTS] == [0.639, 0.432, 0.303]


def test_paper_example() -> None:
    new = update(PLAYER, list(zip(OPPONENTS, [1.0, 0.0, 0.0], strict=True)), tau=0.5)
    assert new.rating == pytest.approx(1464.06, abs=0.01)
    assert new.rd == pytest.approx(151.52, abs=0.01)
    assert new.volatility == pytest.approx(0.05999, abs=0.00001)
    # The paper's Glicko-2 scale values: mu' = -0.2069, phi' = 0.8722.
    assert new.mu == pytest.approx(-0.2069, abs=1e-4)
    assert new.phi == pytest.approx(0.8722, abs=1e-4)


def test_no_games_only_rd_grows() -> None:
    new = update(PLAYER, [])
    assert new.rating == PLAYER.rating and new.volatility == PLAYER.volatility
    assert new.phi == pytest.approx(math.sqrt(PLAYER.phi**2 + 0.06**2))


def test_age_grows_rd_and_caps() -> None:
    settled = Rating(1600, 50, 0.06)
    assert age(settled, 0) == settled
    one = age(settled, 1)
    assert one.rd == pytest.approx(update(settled, []).rd)
    assert age(settled, 10_000).rd == 350


def test_pairwise_scores() -> None:
    assert pair_score(1, 2) == 1.0 and pair_score(2, 1) == 0.0 and pair_score(1, 1) == 0.5


def test_two_seat_table_is_an_ordinary_game() -> None:
    a, b = Rating(1500, 200), Rating(1600, 80)
    new_a, new_b = rate_table([a, b], [1, 2])
    assert new_a == update(a, [(b, 1.0)])
    assert new_b == update(b, [(a, 0.0)])


def test_multi_seat_by_finishing_order() -> None:
    seats = [Rating(1500, 120), Rating(1500, 120), Rating(1500, 120), Rating(1500, 120)]
    new = rate_table(seats, [1, 2, 2, 4])
    assert new[0].rating > new[1].rating > new[3].rating
    assert new[1].rating == pytest.approx(new[2].rating)
    # Symmetric: the shared second place is exactly one win, one draw, one loss -> no change.
    assert new[1].rating == pytest.approx(1500)
    # The winner gains what the last loses (equal ratings and RDs).
    assert new[0].rating - 1500 == pytest.approx(1500 - new[3].rating)
    assert all(r.rd < 120 for r in new)


def test_provisional() -> None:
    assert Rating().provisional()
    assert not Rating(1500, PROVISIONAL_RD).provisional()
    assert Rating(1500, PROVISIONAL_RD + 0.1).provisional()


def test_rank_count_must_match() -> None:
    with pytest.raises(ValueError):
        rate_table([Rating()], [1, 2])
