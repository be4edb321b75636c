"""Plus 4 property tests (hypothesis): random legal playouts checked against invariants and against
a deliberately naive model of the rules page written independently of the bitmask implementation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tafel_rules.game import GameEnded, IllegalMove, Outcome
from tafel_rules.plus4 import (
    RULES,
    DiscFellOut,
    DiscPushed,
    LineScored,
    Mode,
    Move,
    Plus4Event,
    Plus4Options,
    Plus4State,
    RoundWon,
    TurnSkipped,
)

# ---------------------------------------------------------------- a naive model of the rules page

Disc = tuple[int, bool]  # (colour, bonus)

NAIVE_LINES: list[list[tuple[int, int]]] = (
    [[(r, c) for c in range(4)] for r in range(4)]
    + [[(r, c) for r in range(4)] for c in range(4)]
    + [[(i, i) for i in range(4)], [(i, 3 - i) for i in range(4)]]
)


@dataclass
class Naive:
    mode: str
    target: int
    limit: int
    columns: list[list[Disc]] = field(default_factory=lambda: [[] for _ in range(4)])  # top first
    ordinary: list[int] = field(default_factory=lambda: [9, 9])
    bonus: list[bool] = field(default_factory=lambda: [True, True])
    scores: list[int] = field(default_factory=lambda: [0, 0])
    round_wins: list[int] = field(default_factory=lambda: [0, 0])
    to_move: int | None = 0
    moves: int = 0
    round_no: int = 1
    result: tuple[tuple[int, ...], str, tuple[int, ...]] | None = None

    def cell(self, r: int, c: int) -> Disc | None:
        col = self.columns[c]
        return col[r] if r < len(col) else None

    def complete(self) -> set[tuple[int, int]]:
        """(line index, colour) of every complete line."""
        out = set()
        for i, cells in enumerate(NAIVE_LINES):
            discs = [self.cell(r, c) for r, c in cells]
            if all(d is not None for d in discs):
                colours = {d[0] for d in discs if d is not None}
                if len(colours) == 1:
                    out.add((i, colours.pop()))
        return out

    def play(self, seat: int, column: int, bonus: bool) -> dict[str, Any]:
        assert self.to_move == seat
        before = self.complete()
        if bonus:
            assert self.bonus[seat]
            self.bonus[seat] = False
        else:
            assert self.ordinary[seat] > 0
            self.ordinary[seat] -= 1
        col = [(seat, bonus), *self.columns[column]]
        fell = None
        if len(col) > 4:
            fell = col.pop()
            if fell[1]:
                self.bonus[fell[0]] = True
            else:
                self.ordinary[fell[0]] += 1
        self.columns[column] = col
        self.moves += 1
        new = self.complete() - before
        lines = []
        for i, colour in sorted(new):
            cells = NAIVE_LINES[i]
            has_bonus = any(self.cell(r, c) == (colour, True) for r, c in cells)
            points = 2 if has_bonus and self.mode != "first_line" else 1
            lines.append((tuple(cells), colour, points))
        colours = {colour for _, colour in new}
        skipped = None
        round_winners: list[int] = []
        if self.mode == "points":
            for _, colour, points in lines:
                self.scores[colour] += points
            if max(self.scores) >= self.target:
                self.result = (self._ranks(self.scores), "TARGET_REACHED", tuple(self.scores))
        elif self.mode == "first_line":
            if colours:
                ranks = (1, 1) if len(colours) == 2 else ((1, 2) if 0 in colours else (2, 1))
                self.result = (ranks, "LINE_COMPLETED", ())
        elif colours:
            round_winners = sorted(colours)
            for colour in colours:
                self.round_wins[colour] += 1
            if max(self.round_wins) >= self.target:
                self.result = (self._ranks(self.round_wins), "ROUNDS_TARGET_REACHED", tuple(self.round_wins))
        if self.result is None and self.moves >= self.limit:
            if self.mode == "points":
                self.result = (self._ranks(self.scores), "MOVE_LIMIT", tuple(self.scores))
            elif self.mode == "rounds":
                self.result = (self._ranks(self.round_wins), "MOVE_LIMIT", tuple(self.round_wins))
            else:
                self.result = ((1, 1), "MOVE_LIMIT", ())
        if self.result is not None:
            self.to_move = None
        elif round_winners:
            self.columns = [[] for _ in range(4)]
            self.ordinary = [9, 9]
            self.bonus = [True, True]
            self.round_no += 1
            self.to_move = 0 if self.round_no % 2 == 1 else 1
        else:
            other = 1 - seat
            if self.ordinary[other] == 0 and not self.bonus[other]:
                skipped = other
                self.to_move = seat
            else:
                self.to_move = other
        return {"lines": set(lines), "fell": fell, "skipped": skipped, "round_winners": round_winners}

    @staticmethod
    def _ranks(counts: list[int]) -> tuple[int, int]:
        a, b = counts
        return (1, 2) if a > b else (2, 1) if b > a else (1, 1)


# ---------------------------------------------------------------- helpers


def snapshot(state: Plus4State) -> dict[str, Any]:
    return {name: getattr(state, name) for name in state.__slots__}


def frame_cells(state: Plus4State) -> list[list[Disc | None]]:
    return [[None if d is None else (d.colour, d.bonus) for d in row] for row in state.frame()]


def check_invariants(state: Plus4State) -> None:
    assert state.red & state.blue == 0
    assert state.bonus & ~(state.red | state.blue) == 0
    on_board = [state.red.bit_count(), state.blue.bit_count()]
    for seat in (0, 1):
        discs = state.red if seat == 0 else state.blue
        bonus_on_board = (discs & state.bonus).bit_count()
        assert bonus_on_board + state.bonus_in_hand[seat] == 1
        assert on_board[seat] + state.ordinary[seat] + state.bonus_in_hand[seat] == 10
        assert state.ordinary[seat] >= 0
    assert sum(on_board) + sum(state.ordinary) + sum(state.bonus_in_hand) == 20
    cells = frame_cells(state)
    for c in range(4):
        column = [cells[r][c] for r in range(4)]
        k = sum(d is not None for d in column)
        assert all(d is not None for d in column[:k]), "a column fills its top cells"
    over = state.result is not None
    assert (state.to_move is None) == over
    assert RULES.to_act(state) == (frozenset() if over else frozenset({state.to_move}))
    for seat in (0, 1):
        legal = RULES.legal_moves(state, seat)
        assert bool(legal) == (not over and seat == state.to_move)
    assert state.moves_made <= state.options.move_limit


OPTIONS = st.builds(
    Plus4Options,
    mode=st.sampled_from(list(Mode)),
    target=st.one_of(st.integers(1, 4), st.integers(5, 99)),
    move_limit=st.one_of(st.integers(1, 60), st.integers(61, 400)),
)
CHOICES = st.lists(st.integers(0, 7), min_size=0, max_size=400)


def playout(options: Plus4Options, choices: list[int]) -> tuple[Plus4State, list[tuple[int, Move]]]:
    state = RULES.new_game(options, 2, 0)
    played = []
    for choice in choices:
        if state.result is not None:
            break
        seat = state.to_move
        assert seat is not None
        legal = RULES.legal_moves(state, seat)
        move = legal[choice % len(legal)]
        played.append((seat, move))
        state, _ = RULES.apply_move(state, seat, move)
    return state, played


# ---------------------------------------------------------------- properties


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=OPTIONS, choices=CHOICES)
def test_random_playouts_keep_every_invariant_and_match_the_naive_model(
    options: Plus4Options, choices: list[int]
) -> None:
    state = RULES.new_game(options, 2, 0)
    naive = Naive(options.mode.value, options.target, options.move_limit)
    check_invariants(state)
    for choice in choices:
        if state.result is not None:
            break
        seat = state.to_move
        assert seat is not None
        legal = RULES.legal_moves(state, seat)
        assert len(set(legal)) == len(legal)
        move = legal[choice % len(legal)]
        before = snapshot(state)
        before_cells = frame_cells(state)
        new, events_seq = RULES.apply_move(state, seat, move)
        events: list[Plus4Event] = list(events_seq)
        assert snapshot(state) == before, "the input state was changed"
        expected = naive.play(seat, move.column, move.bonus)

        # the naive model agrees on everything
        assert frame_cells(new) == [[naive.cell(r, c) for c in range(4)] for r in range(4)]
        assert list(new.ordinary) == naive.ordinary and list(new.bonus_in_hand) == naive.bonus
        assert list(new.scores) == naive.scores and list(new.round_wins) == naive.round_wins
        assert new.to_move == naive.to_move and new.moves_made == naive.moves
        assert new.round_no == naive.round_no
        result = None if new.result is None else (new.result.ranks, new.result.reason, new.result.scores)
        assert result == naive.result
        assert {(e.cells, e.colour, e.points) for e in events if isinstance(e, LineScored)} == expected["lines"]
        fell = [(e.colour, e.bonus) for e in events if isinstance(e, DiscFellOut)]
        assert fell == ([] if expected["fell"] is None else [expected["fell"]])
        skipped = [e.seat for e in events if isinstance(e, TurnSkipped)]
        assert skipped == ([] if expected["skipped"] is None else [expected["skipped"]])
        rounds = [e for e in events if isinstance(e, RoundWon)]
        assert [list(r.winners) for r in rounds] == ([expected["round_winners"]] if rounds else [])

        # the events tell the story in order
        pushed = events[0]
        assert isinstance(pushed, DiscPushed)
        assert (pushed.column, pushed.colour, pushed.bonus) == (move.column, seat, move.bonus)
        # the push carries the frame it left: the new state's, or the won round's before it was emptied
        emptied = [r for r in rounds if r.frame_emptied]
        assert pushed.frame == (emptied[0].frame if emptied else new.frame())
        if emptied:
            assert new.frame() == ((None,) * 4,) * 4
        ended = [e for e in events if isinstance(e, GameEnded)]
        if new.result is not None:
            assert ended == [GameEnded(new.result)] and events[-1] == ended[0]
        else:
            assert not ended

        # scores and round wins never decrease
        assert all(a >= b for a, b in zip(new.scores, state.scores, strict=True))
        assert all(a >= b for a, b in zip(new.round_wins, state.round_wins, strict=True))

        # a push changes only its column (unless it ended a round and emptied the frame)
        after_cells = frame_cells(new)
        emptied = any(r.frame_emptied for r in rounds)
        if emptied:
            assert after_cells == [[None] * 4 for _ in range(4)]
            pushed_cells = [[(d.colour, d.bonus) if d else None for d in row] for row in rounds[0].frame]
        else:
            pushed_cells = after_cells
        for r in range(4):
            for c in range(4):
                if c != move.column:
                    assert pushed_cells[r][c] == before_cells[r][c]
        assert pushed_cells[0][move.column] == (seat, move.bonus)
        for r in range(1, 4):
            assert pushed_cells[r][move.column] == before_cells[r - 1][move.column]

        check_invariants(new)
        state = new


@settings(max_examples=60, deadline=None)
@given(options=OPTIONS, choices=CHOICES)
def test_replays_are_deterministic(options: Plus4Options, choices: list[int]) -> None:
    final, played = playout(options, choices)
    again = RULES.new_game(options, 2, 12345)
    for seat, move in played:
        again, _ = RULES.apply_move(again, seat, move)
    assert again == final


@settings(max_examples=60, deadline=None)
@given(options=OPTIONS, choices=CHOICES, seat=st.integers(-2, 3), column=st.integers(-3, 6), bonus=st.booleans())
def test_a_refused_move_changes_nothing(
    options: Plus4Options, choices: list[int], seat: int, column: int, bonus: bool
) -> None:
    state, _ = playout(options, choices)
    before = snapshot(state)
    move = Move(column, bonus)
    legal = seat in (0, 1) and move in RULES.legal_moves(state, seat)
    try:
        RULES.apply_move(state, seat, move)
    except IllegalMove as err:
        assert not legal
        assert err.reason in {
            "BAD_SEAT",
            "GAME_OVER",
            "NOT_YOUR_TURN",
            "COLUMN_OUT_OF_RANGE",
            "NO_BONUS_DISC",
            "NO_ORDINARY_DISC",
        }
    else:
        assert legal
    assert snapshot(state) == before


@settings(max_examples=40, deadline=None)
@given(options=OPTIONS, choices=CHOICES, seat=st.integers(0, 1))
def test_resign_at_any_point_ends_the_game_for_the_other_seat(
    options: Plus4Options, choices: list[int], seat: int
) -> None:
    state, _ = playout(options, choices)
    if state.result is not None:
        return
    after, events = RULES.resign(state, seat)
    assert isinstance(after.result, Outcome) and after.result.winners == (1 - seat,)
    assert list(events)[-1] == GameEnded(after.result)
    check_invariants(after)
