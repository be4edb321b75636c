"""Colour Square: the three bot levels, on the platform's own rules.

What a seat may do comes from `tafel.coloursquare.v1.View`: the bot's own sheet (cells, statuses,
jokers), the roll, the phase and whose round it is (active seat: two different coloured dice;
passive seats: the white die; a final turn: any of the five, placing optional), how many dice it
must place (`must_place`), and where each die may go (`legal_placements`, which the service lists
with its own rules). The printed sheet is the rules module's (`tafel_rules.coloursquare.sheets`, by the
view's sheet name), and every score the bots count is `tafel_rules.coloursquare.scoring.score`, the
rules' own scoring (with its constants): a bot and the game cannot disagree about a rule.

level 1: a random legal placement list.
level 2: greedy: the placement list with the best immediate score change (closing squares, bridges,
  purple bonuses, the -10 of a wrong close, the cost of a joker); ties at random.
level 3: an expected-value policy. Each open square is valued by the odds that its empty cells can
  still reach its goal when the bot keeps choosing which rolled values to accept (an optimal-stopping
  model over fair dice, see `hit_probability`), times what a correct close is worth (the goal, plus
  the expected bridges to neighbours and the purple bonus), against -10 for a wrong close or a square
  left open. Jokers cost their value plus a reserve for being forced later. The bot places the dice
  that maximise this value; in a final turn it completes the best set of squares it can.

Pure decision code: no I/O, no network.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Final

from tafel_rules.coloursquare.scoring import BRIDGE_POINTS, PURPLE_POINTS, WRONG_POINTS, is_correct, score
from tafel_rules.coloursquare.sheets import SHEETS, Kind, Sheet

from tafel.coloursquare.v1 import coloursquare_pb2 as pb

__all__ = [
    "ColourSquareBot",
    "Placement",
    "SheetLayout",
    "Situation",
    "hit_probability",
    "layout_of",
    "legal_moves",
    "situation_from_view",
]

RED, YELLOW, GREEN, BLUE, WHITE = range(5)  # die indexes; the first four are also cell colours
_DIE_TO_PB: Final = (pb.DIE_RED, pb.DIE_YELLOW, pb.DIE_GREEN, pb.DIE_BLUE, pb.DIE_WHITE)
_COLOUR_TO_PB: Final = (pb.COLOUR_RED, pb.COLOUR_YELLOW, pb.COLOUR_GREEN, pb.COLOUR_BLUE)
_DIE_FROM_PB: Final = {value: index for index, value in enumerate(_DIE_TO_PB)}
_COLOUR_FROM_PB: Final = {value: index for index, value in enumerate(_COLOUR_TO_PB)}

OPEN = pb.SQUARE_STATUS_OPEN
CORRECT = pb.SQUARE_STATUS_CORRECT
WRONG = pb.SQUARE_STATUS_WRONG
CROSSED = pb.SQUARE_STATUS_CROSSED

ROLE_NONE, ROLE_ACTIVE, ROLE_PASSIVE, ROLE_FINAL = range(4)


@dataclass(frozen=True)
class Placement:
    """One die written somewhere: a cell (`square` index row-major, `colour` 0..3) or a joker field
    (`square` = -1, `colour` = the joker index)."""

    die: int
    square: int
    colour: int

    @property
    def joker(self) -> bool:
        return self.square < 0

    def to_proto(self, columns: int) -> pb.Placement:
        if self.joker:
            return pb.Placement(die=_DIE_TO_PB[self.die], joker=self.colour)
        return pb.Placement(
            die=_DIE_TO_PB[self.die],
            cell=pb.Cell(row=self.square // columns, column=self.square % columns, colour=_COLOUR_TO_PB[self.colour]),
        )


Move = tuple[Placement, ...]


@dataclass(frozen=True)
class SquareInfo:
    low: int
    high: int
    purple: bool
    orange: bool
    fixed: tuple[int, int, int, int]  # pre-printed value per colour, 0 = none


@dataclass(frozen=True)
class SheetLayout:
    """The rules' sheet, and its squares in the form the odds model reads fast."""

    sheet: Sheet
    rows: int
    columns: int
    squares: tuple[SquareInfo, ...]
    neighbours: tuple[tuple[int, ...], ...]
    bridges: tuple[tuple[int, int], ...]  # pairs of adjacent squares that can be bridged (neither orange)


@dataclass(frozen=True)
class Situation:
    """What a bot needs from a view: the layout, its own sheet, the dice and its role."""

    layout: SheetLayout
    cells: tuple[int, ...]  # 4 per square, R Y G B; 0 = empty
    status: tuple[int, ...]  # a SquareStatus per square
    jokers: tuple[int, int]  # 0 = free
    roll: tuple[int, int, int, int, int]  # R Y G B W
    role: int
    must_place: int
    max_dice: int
    # per die (R Y G B W) where it may go now: the view's legal placements, cells then joker fields
    targets: tuple[tuple[Placement, ...], ...] = ((), (), (), (), ())
    others: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()  # other live seats: (cells, status)


@cache
def layout_of(name: str) -> SheetLayout:
    """The layout of the rules' sheet `name` (ValueError for a sheet the rules do not have)."""
    sheet = SHEETS.get(name)
    if sheet is None:
        raise ValueError(f"unknown sheet {name!r}")
    squares = tuple(
        SquareInfo(
            low=sq.low,
            high=sq.high,
            purple=sq.kind is Kind.PURPLE,
            orange=sq.kind is Kind.ORANGE,
            fixed=(sq.fixed[0] or 0, sq.fixed[1] or 0, sq.fixed[2] or 0, sq.fixed[3] or 0),
        )
        for sq in sheet.squares
    )
    return SheetLayout(sheet, sheet.rows, sheet.cols, squares, sheet.neighbours, sheet.colourable)


def _placement(placement: pb.Placement, columns: int) -> Placement:
    die = _DIE_FROM_PB[placement.die]
    if placement.WhichOneof("target") == "joker":
        return Placement(die, -1, placement.joker)
    cell = placement.cell
    return Placement(die, cell.row * columns + cell.column, _COLOUR_FROM_PB[cell.colour])


def situation_from_view(view: pb.View) -> Situation:
    """The bot's situation; raises ValueError for a spectator's view."""
    if not view.HasField("seat"):
        raise ValueError("a spectator's view: no seat to play for")
    seat = view.seat
    layout = layout_of(view.sheet.name)
    mine = None
    my_cells: tuple[int, ...] = ()
    my_status: tuple[int, ...] = ()
    others = []
    for player in view.players:
        cells = tuple(v for sq in player.squares for v in [*sq.cells, 0, 0, 0, 0][:4])
        status = tuple(sq.status for sq in player.squares)
        if player.seat == seat:
            mine = player
            my_cells, my_status = cells, status
        elif player.removal == pb.REMOVAL_UNSPECIFIED:
            others.append((cells, status))
    if mine is None:
        raise ValueError(f"the view has no sheet for seat {seat}")
    if len(my_status) != len(layout.squares):
        raise ValueError("the sheet and the player's squares differ in size")
    jokers = [*mine.jokers, 0, 0][:2]
    roll = view.roll
    role = ROLE_NONE
    if view.max_dice and seat in view.to_place:
        if view.phase == pb.PHASE_FINAL:
            role = ROLE_FINAL
        elif view.phase == pb.PHASE_ROUND:
            role = ROLE_ACTIVE if seat == view.active_seat else ROLE_PASSIVE
    targets: list[list[Placement]] = [[], [], [], [], []]
    for placement in view.legal_placements:
        found = _placement(placement, layout.columns)
        targets[found.die].append(found)
    return Situation(
        layout=layout,
        cells=my_cells,
        status=my_status,
        jokers=(jokers[0], jokers[1]),
        roll=(roll.red, roll.yellow, roll.green, roll.blue, roll.white),
        role=role,
        must_place=view.must_place,
        max_dice=view.max_dice,
        targets=tuple(tuple(t) for t in targets),
        others=tuple(others),
    )


# -- where dice can go ---------------------------------------------------------------------------------


def legal_moves(s: Situation) -> list[Move]:
    """Every legal placement list of an active or passive seat (as the rules list them). A final turn
    has far too many to list: use `final_choices`."""
    if s.role == ROLE_PASSIVE:
        return [(p,) for p in s.targets[WHITE]] if s.must_place else [()]
    if s.role != ROLE_ACTIVE:
        return [()]
    per_die = s.targets[:4]
    need = s.must_place
    if need <= 0:
        return [()]
    if need == 1:
        return [(p,) for k in range(4) for p in per_die[k]]
    moves: list[Move] = []
    for a, b in itertools.combinations(range(4), 2):
        for pa in per_die[a]:
            for pb_ in per_die[b]:
                if not (pa.joker and pb_.joker and pa.colour == pb_.colour):
                    moves.append((pa, pb_))
    return moves


def final_choices(s: Situation) -> list[list[Placement | None]]:
    """Per die (R Y G B W) the places it may go in a final turn, None = not placed. Placements must
    not share a cell or a joker field."""
    return [[None, *s.targets[k]] for k in range(5)]


# -- scores --------------------------------------------------------------------------------------------


def _written(s: Situation, move: Move) -> tuple[list[int], list[int]]:
    cells = list(s.cells)
    jokers = list(s.jokers)
    for p in move:
        value = s.roll[p.die]
        if p.joker:
            jokers[p.colour] = value
        else:
            cells[p.square * 4 + p.colour] = value
    return cells, jokers


def _closed_status(layout: SheetLayout, cells: list[int], status: tuple[int, ...], squares: set[int]) -> list[int]:
    new = list(status)
    for i in squares:
        if new[i] != OPEN:
            continue
        four = cells[i * 4 : i * 4 + 4]
        if all(four):
            total = sum(four)
            new[i] = CORRECT if is_correct(layout.sheet.squares[i], total) else WRONG
    return new


def sheet_score(
    layout: SheetLayout,
    cells: list[int] | tuple[int, ...],
    status: list[int] | tuple[int, ...],
    jokers: list[int] | tuple[int, ...],
) -> int:
    """The score as it stands (open squares not yet counted), by the rules' scoring."""
    circled = [sum(cells[i * 4 : i * 4 + 4]) if st == CORRECT else None for i, st in enumerate(status)]
    return score(layout.sheet, circled, sum(1 for st in status if st == WRONG), 0, sum(jokers)).total


def immediate_gain(s: Situation, move: Move) -> int:
    """The change of score when `move` is written (and its squares close)."""
    cells, jokers = _written(s, move)
    touched = {p.square for p in move if not p.joker and all(cells[p.square * 4 : p.square * 4 + 4])}
    if not touched:  # nothing closes: only jokers cost
        return sum(s.jokers) - sum(jokers)
    status = _closed_status(s.layout, cells, s.status, touched)
    return sheet_score(s.layout, cells, status, jokers) - sheet_score(s.layout, s.cells, s.status, s.jokers)


# -- the dice odds -------------------------------------------------------------------------------------


@lru_cache(maxsize=200_000)
def hit_probability(tries: int, cells: int, low: int, high: int) -> float:
    """The chance that `cells` more fair-die values can be chosen to sum into [low, high] when the
    player sees `tries` values one at a time and may keep a value (it fills one cell) or let it pass;
    once the tries are used up the remaining cells take whatever comes."""
    if cells == 0:
        return 1.0 if low <= 0 <= high else 0.0
    low = max(low, cells)
    high = min(high, 6 * cells)
    if low > high:
        return 0.0
    if tries <= cells:
        return _blind_probability(cells, low, high)
    total = 0.0
    for v in range(1, 7):
        keep = hit_probability(tries - 1, cells - 1, low - v, high - v)
        wait = hit_probability(tries - 1, cells, low, high)
        total += keep if keep > wait else wait
    return total / 6


@lru_cache(maxsize=4096)
def _blind_probability(cells: int, low: int, high: int) -> float:
    """The chance that `cells` fair-die values sum into [low, high]."""
    counts = {0: 1}
    for _ in range(cells):
        nxt: dict[int, int] = {}
        for total, n in counts.items():
            for v in range(1, 7):
                nxt[total + v] = nxt.get(total + v, 0) + n
        counts = nxt
    hits = sum(n for total, n in counts.items() if low <= total <= high)
    return hits / float(6**cells)


@dataclass(frozen=True)
class Tuning:
    """Level 3's knobs (fitted by solo self-play on sheets A and B)."""

    tries_per_cell: float = 1.5  # how many rolled values an empty cell gets to choose from
    min_tries_per_cell: float = 1.5  # late in the game, when few cells are left
    joker_reserve: float = 4.0  # the worth of keeping a joker field free
    cross_risk: float = 0.6  # weight of another seat closing a square first (multi-player)


class Valuer:
    """Expected final worth of a sheet under the dice-odds model."""

    def __init__(self, s: Situation, tuning: Tuning, final: bool = False) -> None:
        self.s = s
        self.t = tuning
        self.final = final
        self._odds: dict[tuple[int, ...], tuple[float, float]] = {}
        layout = s.layout
        empty_total = sum(1 for i, st in enumerate(s.status) if st == OPEN for k in range(4) if not s.cells[i * 4 + k])
        # choice per cell shrinks as the sheet fills: fewer other places to put unwanted dice
        fill = min(1.0, empty_total / 32)
        self.tries_per_cell = tuning.min_tries_per_cell + (tuning.tries_per_cell - tuning.min_tries_per_cell) * fill
        self.cross = [0.0] * len(layout.squares)
        if s.others and tuning.cross_risk:
            for i in range(len(layout.squares)):
                worst = 0.0
                for cells, status in s.others:
                    if status[i] != OPEN:
                        continue
                    four = cells[i * 4 : i * 4 + 4]
                    filled = sum(1 for v in four if v)
                    if filled:
                        p, _ = self.square_odds(i, list(four))
                        worst = max(worst, p * filled / 4)
                self.cross[i] = tuning.cross_risk * worst

    def square_odds(self, i: int, four: list[int]) -> tuple[float, float]:
        """(chance of closing correctly, expected circled value when it does) for an open square."""
        key = (i, *four)
        known = self._odds.get(key)
        if known is None:
            known = self._odds[key] = self._square_odds(i, four)
        return known

    def _square_odds(self, i: int, four: list[int]) -> tuple[float, float]:
        sq = self.s.layout.squares[i]
        fixed_missing = 0
        total = 0
        free = 0
        for k in range(4):
            v = four[k]
            if v:
                total += v
            elif sq.fixed[k]:
                total += sq.fixed[k]
                fixed_missing += 1
            else:
                free += 1
        low, high = sq.low - total, sq.high - total
        if self.final:
            return (1.0 if free == 0 and fixed_missing == 0 and low <= 0 <= high else 0.0), float(total)
        tries = max(free, round((free + fixed_missing) * self.tries_per_cell))
        p = hit_probability(tries, free, low, high)
        if fixed_missing:  # a pre-printed cell waits for its exact value
            p *= 1 - (5 / 6) ** max(1, round(2 * self.tries_per_cell))
        lo, hi = max(low, free), min(high, 6 * free)
        expected = total + (lo + hi) / 2 if lo <= hi else float(total)
        return p, expected

    def value(
        self,
        cells: list[int] | tuple[int, ...],
        status: list[int] | tuple[int, ...],
        jokers: list[int] | tuple[int, ...],
    ) -> float:
        layout = self.s.layout
        n = len(layout.squares)
        p = [0.0] * n
        worth = 0.0
        for i in range(n):
            st = status[i]
            if st == CORRECT:
                p[i] = 1.0
                worth += sum(cells[i * 4 : i * 4 + 4])
            elif st == WRONG:
                worth += WRONG_POINTS
            elif st == OPEN:
                q, expected = self.square_odds(i, list(cells[i * 4 : i * 4 + 4]))
                keep = 1.0 - self.cross[i]
                q *= keep
                p[i] = q
                # a crossed-out square costs nothing; otherwise a miss is a wrong close or an open square
                worth += q * expected + (keep - q) * WRONG_POINTS
        for a, b in layout.bridges:
            worth += BRIDGE_POINTS * p[a] * p[b]
        for i, sq in enumerate(layout.squares):
            if sq.purple and p[i]:
                miss = 1.0
                for j in layout.neighbours[i]:
                    if not layout.squares[j].orange:
                        miss *= 1.0 - p[j]
                worth += PURPLE_POINTS * p[i] * (1.0 - miss)
        worth -= sum(jokers)
        if not self.final:
            worth += self.t.joker_reserve * sum(1 for j in jokers if not j)
        return worth

    def after(self, move: Move) -> float:
        s = self.s
        cells, jokers = _written(s, move)
        touched = {p.square for p in move if not p.joker}
        status = _closed_status(s.layout, cells, s.status, touched)
        return self.value(cells, status, jokers)


# -- the bot -------------------------------------------------------------------------------------------


class ColourSquareBot:
    """Chooses a placement list from a `tafel.coloursquare.v1.View`."""

    def __init__(self, level: int = 3, *, seed: int | None = None, tuning: Tuning | None = None) -> None:
        if level not in (1, 2, 3):
            raise ValueError(f"level must be 1, 2 or 3, not {level}")
        self.level = level
        self.rng = random.Random(seed)
        self.tuning = tuning or Tuning()

    def choose(self, view: pb.View) -> pb.Move:
        s = situation_from_view(view)
        move = self.choose_placements(s)
        columns = s.layout.columns
        return pb.Move(placements=[p.to_proto(columns) for p in sorted(move, key=lambda p: p.die)])

    def choose_placements(self, s: Situation) -> Move:
        if s.role == ROLE_NONE:
            raise ValueError("the seat is not asked to place now")
        if s.role == ROLE_FINAL:
            return self._final(s)
        if self.level == 1:
            return self.rng.choice(legal_moves(s) or [()])
        if self.level == 2:
            return self._greedy(s)
        return self._expected(s)

    # level 2
    def _greedy(self, s: Situation) -> Move:
        best: list[Move] = []
        best_gain = -(10**9)
        for move in legal_moves(s) or [()]:
            gain = immediate_gain(s, move)
            if gain > best_gain:
                best, best_gain = [move], gain
            elif gain == best_gain:
                best.append(move)
        return self.rng.choice(best)

    # level 3
    def _expected(self, s: Situation) -> Move:
        valuer = Valuer(s, self.tuning)
        if s.role == ROLE_PASSIVE or s.must_place <= 1:
            moves = legal_moves(s) or [()]
            return max(moves, key=lambda m: (valuer.after(m), -_joker_count(m)))
        # two dice: rank each die's single placements, then pair the best of them, plus every pair
        # that writes both dice into one square (their interplay is what the singles miss)
        per_die: list[list[Placement]] = []
        for k in range(4):
            options = list(s.targets[k])
            options.sort(key=lambda p: valuer.after((p,)), reverse=True)
            per_die.append(options)
        candidates: set[Move] = set()
        for a, b in itertools.combinations(range(4), 2):
            for pa in per_die[a][:6]:
                for pb_ in per_die[b][:6]:
                    if not (pa.joker and pb_.joker and pa.colour == pb_.colour):
                        candidates.add((pa, pb_))
            squares_b = {p.square: p for p in per_die[b] if not p.joker}
            for pa in per_die[a]:
                if not pa.joker and pa.square in squares_b:
                    candidates.add((pa, squares_b[pa.square]))
        if not candidates:  # fewer than two dice fit after all: fall back to the full list
            return max(legal_moves(s) or [()], key=valuer.after)
        return max(sorted(candidates, key=_move_key), key=lambda m: (valuer.after(m), -_joker_count(m)))

    # final turn (any level above 1 completes squares; level 1 places at random)
    def _final(self, s: Situation) -> Move:
        if self.level == 1:
            chosen: list[Placement] = []
            used_cells: set[tuple[int, int]] = set()
            used_jokers: set[int] = set()
            for options in final_choices(s):
                ok = [
                    p
                    for p in options
                    if p is None
                    or (p.joker and p.colour not in used_jokers)
                    or (not p.joker and (p.square, p.colour) not in used_cells)
                ]
                p = self.rng.choice(ok)
                if p is not None:
                    chosen.append(p)
                    if p.joker:
                        used_jokers.add(p.colour)
                    else:
                        used_cells.add((p.square, p.colour))
            return tuple(chosen)
        return best_final(s)


def _joker_count(move: Move) -> int:
    return sum(1 for p in move if p.joker)


def _move_key(move: Move) -> tuple[tuple[int, int, int], ...]:
    return tuple((p.die, p.square, p.colour) for p in move)


def best_final(s: Situation) -> Move:
    """The final-turn placements that complete the most valuable set of squares correctly (a square
    left open costs as much as a wrong close, so nothing else is worth placing)."""
    layout = s.layout
    roll = s.roll
    allowed = {p for options in s.targets for p in options if not p.joker}  # the view's legal cells
    # every way to complete one open square correctly: (dice mask, placements)
    ways: list[tuple[int, int, Move]] = []  # (square, dice mask, placements)
    for i, square in enumerate(layout.sheet.squares):
        if s.status[i] != OPEN:
            continue
        four = s.cells[i * 4 : i * 4 + 4]
        empty = [k for k in range(4) if not four[k]]
        if not empty or len(empty) > 5:
            continue
        base = sum(four)
        # each empty cell takes its own die, or the white die (at most one cell)
        for white_at in [None, *empty]:
            placements: list[Placement] = []
            total = base
            ok = True
            for k in empty:
                die = WHITE if k == white_at else k
                placement = Placement(die, i, k)
                if placement not in allowed:
                    ok = False
                    break
                placements.append(placement)
                total += roll[die]
            if ok and is_correct(square, total):
                mask = sum(1 << p.die for p in placements)
                ways.append((i, mask, tuple(placements)))
    best: Move = ()
    best_score = sheet_score(layout, s.cells, s.status, s.jokers)

    def walk(start: int, used: int, squares: frozenset[int], chosen: Move) -> None:
        nonlocal best, best_score
        if chosen:
            cells, jokers = _written(s, chosen)
            status = _closed_status(layout, cells, s.status, set(squares))
            score = sheet_score(layout, cells, status, jokers)
            if score > best_score:
                best, best_score = chosen, score
        for n in range(start, len(ways)):
            i, mask, placements = ways[n]
            if mask & used or i in squares:
                continue
            walk(n + 1, used | mask, squares | {i}, chosen + placements)

    walk(0, 0, frozenset(), ())
    return best
