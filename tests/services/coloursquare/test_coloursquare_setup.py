"""Sheets as data, options, the dice generator, and the view."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from tafel_rules.coloursquare import dice
from tafel_rules.coloursquare.model import Die, Move, Options, Phase, Status
from tafel_rules.coloursquare.rules import RULES, with_roll
from tafel_rules.coloursquare.sheets import SHEETS, Kind, SheetError, load_sheets, parse_sheet
from tafel_rules.game import InvalidOptions

from tests.services.coloursquare.helpers import full, mv, play_round, player, table

# -- sheets -------------------------------------------------------------------------------------------


def test_sheets_a_and_b_as_on_the_rules_page() -> None:
    a, b = SHEETS["A"], SHEETS["B"]
    assert (a.rows, a.cols, len(a.bridges)) == (4, 4, 24)
    assert a.label == "tafel sheet A" and b.label == "tafel sheet B"
    assert [sq.low for sq in a.squares] == [12, 17, 8, 21, 15, 6, 19, 11, 9, 20, 13, 16, 23, 10, 14, 7]
    assert [i for i, sq in enumerate(a.squares) if sq.kind is Kind.PURPLE] == [1, 8, 11]
    assert [i for i, sq in enumerate(a.squares) if sq.kind is Kind.ORANGE] == [3, 12]
    assert all(sq.exact and sq.fixed == (None,) * 4 for sq in a.squares)
    assert not any(sq.kind is Kind.ORANGE for sq in b.squares)
    assert [(sq.row, sq.col, sq.low, sq.high) for sq in b.squares if not sq.exact] == [
        (0, 1, 15, 18),
        (1, 2, 4, 8),
        (2, 0, 19, 24),
        (3, 3, 10, 12),
    ]
    fixed = {(sq.row, sq.col): sq.fixed for sq in b.squares if any(v is not None for v in sq.fixed)}
    assert fixed == {
        (0, 2): (None, 1, None, None),
        (1, 0): (None, None, None, 2),
        (1, 3): (6, None, None, None),
        (2, 2): (None, None, 5, None),
        (3, 1): (3, None, None, None),
    }


def test_corner_order_rotates_left_by_row_plus_column() -> None:
    squares = SHEETS["A"].squares
    assert squares[0].corner_order() == (Die.R, Die.Y, Die.G, Die.B)
    assert squares[1].corner_order() == (Die.Y, Die.G, Die.B, Die.R)
    assert squares[SHEETS["A"].index(3, 3)].corner_order() == (Die.G, Die.B, Die.R, Die.Y)


def test_a_new_sheet_is_a_data_file(tmp_path: Path) -> None:
    data = {
        "format": "coloursquare-sheet/1",
        "name": "mini",
        "squares": [[{"goal": 10, "kind": "purple"}, {"goal": [8, 9]}, {"goal": 6, "fixed": {"G": 2}}]],
    }
    (tmp_path / "mini.json").write_text(json.dumps(data))
    sheets = load_sheets(tmp_path)
    mini = sheets["mini"]
    assert (mini.rows, mini.cols, mini.bridges) == (1, 3, ((0, 1), (1, 2)))
    assert mini.label == "tafel sheet mini"
    assert mini.squares[2].fixed == (None, None, 2, None)


@pytest.mark.parametrize(
    "bad",
    [
        {"format": "other", "name": "x", "squares": [[{"goal": 10}]]},
        {"format": "coloursquare-sheet/1", "name": "x", "squares": []},
        {"format": "coloursquare-sheet/1", "name": "x", "squares": [[{"goal": 10}], [{"goal": 1}]]},
        {"format": "coloursquare-sheet/1", "name": "x", "squares": [[{"goal": 10}, {"goal": 9}], [{"goal": 8}]]},
        {"format": "coloursquare-sheet/1", "name": "x", "squares": [[{"goal": [9, 8]}]]},
        {"format": "coloursquare-sheet/1", "name": "x", "squares": [[{"goal": 10, "kind": "gold"}]]},
        {"format": "coloursquare-sheet/1", "name": "x", "squares": [[{"goal": 10, "fixed": {"W": 1}}]]},
        {"format": "coloursquare-sheet/1", "name": "x", "squares": [[{"goal": 10, "fixed": {"R": 7}}]]},
        {"format": "coloursquare-sheet/1", "name": "x", "squares": [[{"goal": "10"}]]},
    ],
)
def test_bad_sheet_data_is_refused(bad: object) -> None:
    with pytest.raises(SheetError):
        parse_sheet(bad)


# -- options -------------------------------------------------------------------------------------------


def test_option_specs_and_defaults() -> None:
    specs = {s.name: s for s in RULES.option_specs()}
    assert specs["side"].default == "A" and specs["side"].choices == ("A", "B")
    assert specs["target"].default == 0
    assert specs["timeouts_to_remove"].default == 3
    assert specs["max_rounds"].default == 200
    assert RULES.default_options() == Options()
    assert (RULES.name, RULES.title, RULES.min_seats, RULES.max_seats) == ("coloursquare", "Colour Square", 1, 6)


@pytest.mark.parametrize(
    ("options", "seats", "field"),
    [
        (Options(), 0, "seats"),
        (Options(), 7, "seats"),
        (Options(side="C"), 2, "side"),
        (Options(target=50), 2, "target"),
        (Options(target=-1), 1, "target"),
        (Options(timeouts_to_remove=0), 2, "timeouts_to_remove"),
        (Options(max_rounds=0), 2, "max_rounds"),
        (Options(max_rounds=5000), 2, "max_rounds"),
    ],
)
def test_invalid_options(options: Options, seats: int, field: str) -> None:
    with pytest.raises(InvalidOptions) as err:
        RULES.check_options(options, seats)
    assert err.value.field == field
    with pytest.raises(InvalidOptions):
        RULES.new_game(options, seats, 1)


def test_solo_target_is_accepted() -> None:
    RULES.check_options(Options(target=60), 1)


# -- dice ----------------------------------------------------------------------------------------------


def test_dice_are_deterministic_and_fair_enough() -> None:
    assert dice.next64(0) == (0x9E3779B97F4A7C15, 0xE220A8397B1DCDAF)  # splitmix64 reference value
    state = dice.seed_state(42)
    counts: Counter[int] = Counter()
    for _ in range(6000):
        state, roll = dice.roll_five(state)
        counts.update(roll)
    assert set(counts) == {1, 2, 3, 4, 5, 6}
    assert all(4000 < n < 6000 for n in counts.values())
    assert RULES.new_game(Options(), 2, 9) == RULES.new_game(Options(), 2, 9)
    assert len({RULES.new_game(Options(), 2, s).roll for s in range(50)}) > 40


def test_each_round_and_final_turn_rolls_from_the_generator() -> None:
    state = RULES.new_game(Options(), 1, 77)
    expected_state = dice.seed_state(77)
    expected_state, first = dice.roll_five(expected_state)
    assert state.roll == first and state.rng == expected_state
    state, _ = RULES.apply_move(state, 0, RULES.legal_moves(state, 0)[0])
    _, second = dice.roll_five(expected_state)
    assert state.roll == second


def test_with_roll_replaces_only_the_dice() -> None:
    state = RULES.new_game(Options(), 2, 5)
    injected = with_roll(state, [6, 5, 4, 3, 2])
    assert injected.roll == (6, 5, 4, 3, 2) and injected.rng == state.rng
    for bad in ([1, 2, 3, 4], [0, 1, 2, 3, 4], [1, 2, 3, 4, 7]):
        with pytest.raises(ValueError):
            with_roll(state, bad)
    over, _ = RULES.resign(RULES.new_game(Options(), 1, 5), 0)
    with pytest.raises(ValueError):
        with_roll(over, [1, 1, 1, 1, 1])


# -- the view --------------------------------------------------------------------------------------------


def test_view_shows_the_table() -> None:
    state = table(3, {1: player(jokers=(2, None))}, roll=(1, 2, 3, 4, 5))
    state, _ = RULES.apply_move(state, 1, mv("W@0,0,R"))
    view = RULES.view(state, 0)
    assert view.phase is Phase.ROUND and view.round == 1 and view.active == 0
    assert view.roll == (1, 2, 3, 4, 5)
    assert view.to_place == (0, 2)
    assert view.side == "A" and view.max_rounds == 200
    assert (view.max_dice, view.must_place) == (2, 2)
    assert [p.placed for p in view.players] == [False, True, False]
    assert view.players[1].jokers == (2, None) and view.players[1].breakdown.jokers == -2
    assert view.players[1].cells[0] is None  # not revealed before the round resolves
    assert view.own_pending is None and RULES.view(state, 1).own_pending == mv("W@0,0,R").placements
    assert RULES.view(state, 1).max_dice == 0
    spectator = RULES.view(state, None)
    assert spectator.own_pending is None and spectator.max_dice == 0 and spectator.result is None
    assert all(p.status == (Status.OPEN,) * 16 for p in view.players)


def test_view_in_the_final_phase_and_when_over() -> None:
    almost = player(cells={(0, 0): (None, 1, 6, 4)}, status=full("A", {(0, 0)}), jokers=(3, 3))
    state = table(2, {0: almost}, roll=(1, 2, 3, 4, 5))
    state, _ = play_round(state, {0: mv("R@0,0"), 1: mv("W@1,1,G")})
    view = RULES.view(state, 1)
    assert view.phase is Phase.FINAL and view.final_turn == 1 and view.caller == 0 and view.max_dice == 5
    assert view.roll == state.roll and view.must_place == 0
    state, _ = RULES.apply_move(state, 1, Move())
    view = RULES.view(state, None)
    assert view.phase is Phase.OVER and view.roll is None and view.to_place == ()
    assert view.result is not None and view.result.reason == "COLOUR_SQUARE"
    assert view.result.scores == tuple(p.breakdown.total for p in view.players)
    assert view.players[1].breakdown.open_penalty == -150  # 15 open, (0,0) crossed


def test_view_never_holds_the_generator_state() -> None:
    state = RULES.new_game(Options(), 2, 123456789)
    view = RULES.view(state, 0)
    assert "rng" not in {f for f in view.__dataclass_fields__}
    assert str(state.rng) not in repr(view) and "123456789" not in repr(view)
