"""Pairing rules, pure: Swiss, round robin (circle method), knockout brackets, multi-seat tables.

**Swiss** (two seats; seat 0 moves first, "white"). Players are ordered by points, then seed. A
round is a perfect matching found by depth-first search with backtracking, always pairing the
highest-placed unpaired player next and trying partners in Dutch-like order: same points first
(top half of a score group against the bottom half), then the nearest score below; among equals,
partners whose colour preferences do not clash come first. A pair that has met before is never
used while a matching without repeats exists (the search is complete up to a large step budget,
then falls back to the fewest repeats it can find). With an odd number, the bye goes to the
lowest-placed player who has not had one and for whom the rest can still be paired without
repeats; nobody gets a second bye while someone has none.
Seats: the player who has had seat 0 less often (then: who had seat 1 last) gets seat 0; ties go
to the higher-placed player's due colour, alternating by round.

**Round robin**: the circle method (Berger tables). Seed 1 is fixed, the others rotate; an odd field
gets a dummy whose opponent has the bye, so each round has exactly one bye and everyone meets
everyone once. Nobody moves first more than one game off half their games.

**Knockout**: a bracket of the next power of two, standard seeding (1 v 16, 8 v 9, ...): the
missing low seeds make byes for the top seeds. Winners of neighbouring boards meet next round.

**Tables** (games of three or more seats): players in standings order are split into tables of
`lo`..`hi` seats (3 to the game's most) as close to the preferred size as the field allows
(sizes differing by at most one); each table is filled from the top remaining player with the
players just below who have met its members least, then players at different tables swap while
that lowers the repeat meetings (first) or the spread of standings at the tables (second).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

SEARCH_BUDGET = 200_000


class _OutOfBudget(Exception):
    pass


@dataclass(frozen=True)
class SwissPlayer:
    player_id: str
    points: float
    seed: int  # 0-based; lower is stronger
    opponents: frozenset[str] = frozenset()
    byes: int = 0
    # Seat history in two-seat games played: 0 or 1 each, in order.
    seats: tuple[int, ...] = ()

    @property
    def colour_diff(self) -> int:
        """Games in seat 0 minus games in seat 1."""
        return sum(1 for s in self.seats if s == 0) - sum(1 for s in self.seats if s == 1)

    def due(self) -> tuple[int, int]:
        """(preferred seat, strength): strength 2 = absolute (colour difference beyond +-1 or the
        same seat twice running), 1 = strong (off by one), 0 = mild (alternate), -1 = none."""
        diff = self.colour_diff
        repeated = len(self.seats) >= 2 and self.seats[-1] == self.seats[-2]
        if diff <= -1 or (repeated and self.seats[-1] == 1):
            return 0, 2 if diff <= -2 or repeated else 1
        if diff >= 1 or (repeated and self.seats[-1] == 0):
            return 1, 2 if diff >= 2 or repeated else 1
        if self.seats:
            return 1 - self.seats[-1], 0
        return 0, -1


@dataclass
class SwissRound:
    pairs: list[tuple[str, str]]  # (seat 0, seat 1)
    bye: str | None
    repeats: int = 0
    steps: int = field(default=0, repr=False)


def _clash(a: SwissPlayer, b: SwissPlayer) -> int:
    pa, sa = a.due()
    pb, sb = b.due()
    if pa == pb and sa >= 1 and sb >= 1:
        return 2 if sa == 2 and sb == 2 else 1
    return 0


def allocate_seats(a: SwissPlayer, b: SwissPlayer, round_number: int) -> tuple[str, str]:
    """Seat 0 first. `a` is the higher-placed player."""
    pa, sa = a.due()
    pb, sb = b.due()
    if pa != pb:
        first = a if pa == 0 else b
    elif sa != sb:
        stronger = a if sa > sb else b
        first = stronger if pa == 0 else (b if stronger is a else a)
    else:
        # Same due colour, same strength: the higher-placed player gets theirs; with no history at
        # all, alternate by round.
        if sa < 0:
            first = a if round_number % 2 == 1 else b
        else:
            first = a if pa == 0 else b
    second = b if first is a else a
    return first.player_id, second.player_id


def pair_swiss(players: Sequence[SwissPlayer], round_number: int, *, budget: int = SEARCH_BUDGET) -> SwissRound:
    """Pair one Swiss round among `players` (the active ones)."""
    order = sorted(players, key=lambda p: (-p.points, p.seed))
    steps = [0]
    if len(order) < 2:
        return SwissRound([], order[0].player_id if order else None)
    bye: SwissPlayer | None = None
    rest = order
    if len(order) % 2 == 1:
        # Lowest-placed first, those without a bye before anyone with one.
        candidates = sorted(reversed(order), key=lambda p: p.byes)
        chosen: tuple[SwissPlayer, list[tuple[SwissPlayer, SwissPlayer]]] | None = None
        for candidate in candidates:
            if candidate.byes > candidates[0].byes:
                break
            remaining = [p for p in order if p is not candidate]
            found = _search(remaining, strict=True, steps=steps, budget=budget)
            if found is not None:
                chosen = (candidate, found)
                break
        if chosen is None:
            bye = candidates[0]
            rest = [p for p in order if p is not bye]
            pairs = _search(rest, strict=False, steps=steps, budget=budget) or []
        else:
            bye, pairs = chosen
    else:
        found = _search(rest, strict=True, steps=steps, budget=budget)
        pairs = found if found is not None else (_search(rest, strict=False, steps=steps, budget=budget) or [])
    seated = [allocate_seats(a, b, round_number) for a, b in pairs]
    repeats = sum(1 for a, b in pairs if b.player_id in a.opponents)
    return SwissRound(seated, bye.player_id if bye else None, repeats, steps[0])


def _search(
    order: list[SwissPlayer], *, strict: bool, steps: list[int], budget: int
) -> list[tuple[SwissPlayer, SwissPlayer]] | None:
    """A perfect matching of `order` (already in standings order), or None. Strict: no repeats.

    Depth-first: the highest-placed unpaired player takes the first partner in preference order
    (not met; nearest points; no colour clash; then, in its own score group, nearest the
    position half a group below, elsewhere the higher-placed), backtracking when the rest cannot
    be paired. An explicit stack, and partners produced lazily in that order rather than sorted
    at every step, so 10,000 players pair in seconds (recursion stopped at ~2,000).
    """
    n = len(order)
    if n == 0:
        return []
    groups: list[list[int]] = []  # indices into order, by score group, best group first
    group_of = [0] * n
    place_in_group = [0] * n
    for i, p in enumerate(order):
        if not groups or order[groups[-1][0]].points != p.points:
            groups.append([])
        group_of[i] = len(groups) - 1
        place_in_group[i] = len(groups[-1])
        groups[-1].append(i)
    dues = [p.due() for p in order]
    most_met = max(len(p.opponents) for p in order)
    taken = bytearray(n)
    left = n
    per_budget = budget if strict else 1 << 60

    def met(i: int, j: int) -> bool:
        return order[j].player_id in order[i].opponents

    def clash(i: int, j: int) -> int:
        (pa, sa), (pb, sb) = dues[i], dues[j]
        if pa == pb and sa >= 1 and sb >= 1:
            return 2 if sa == 2 and sb == 2 else 1
        return 0

    def near(members: list[int], target: int) -> Iterator[int]:
        # Nearest `target` first; of two as near, the higher-placed.
        if 0 <= target < len(members):
            yield members[target]
        for k in range(1, max(target + 1, len(members) - target)):
            if 0 <= target - k < len(members):
                yield members[target - k]
            if 0 <= target + k < len(members):
                yield members[target + k]

    def partners(i: int) -> Iterator[int]:
        # Every group above i's is paired already (i is the highest-placed unpaired player).
        for repeat in (False,) if strict else (False, True):
            for g in range(group_of[i], len(groups)):
                members = groups[g]
                for level in (0, 1, 2):
                    walk = near(members, place_in_group[i] + len(members) // 2) if g == group_of[i] else iter(members)
                    for j in walk:
                        if not taken[j] and met(i, j) == repeat and clash(i, j) == level:
                            yield j

    def dead_end() -> bool:
        # Someone left who has met everyone else left (only possible once few are left).
        if not strict or left - 1 > most_met:
            return False
        rest = [i for i in range(n) if not taken[i]]
        return any(all(j == i or met(i, j) for j in rest) for i in rest)

    frames: list[tuple[int, Iterator[int]]] = []
    chosen: list[int] = []

    def enter(start: int) -> bool:
        nonlocal left
        steps[0] += 1
        if steps[0] > per_budget:
            raise _OutOfBudget
        if dead_end():
            return False
        i = start
        while taken[i]:
            i += 1
        taken[i] = 1
        left -= 1
        frames.append((i, partners(i)))
        return True

    try:
        if not enter(0):
            return None
        while frames:
            i, candidates = frames[-1]
            if len(chosen) == len(frames):
                j = chosen.pop()
                taken[j] = 0
                left += 1
                if not strict:
                    return None  # relaxed search: greedy, never backtracks
            j = next(candidates, -1)
            if j < 0:
                frames.pop()
                taken[i] = 0
                left += 1
                continue
            taken[j] = 1
            left -= 1
            chosen.append(j)
            if left == 0:
                return [(order[a], order[b]) for (a, _), b in zip(frames, chosen, strict=True)]
            enter(i + 1)
        return None
    except _OutOfBudget:
        return None


# -- round robin --------------------------------------------------------------------------------


def round_robin_rounds(count: int) -> int:
    return count - 1 if count % 2 == 0 else count


def round_robin_round(players: Sequence[str], round_number: int) -> tuple[list[tuple[str, str]], str | None]:
    """Round `round_number` (1-based) of the circle method over `players` in seed order:
    ((seat 0, seat 1) pairs, the player with the bye or None)."""
    ring: list[str | None] = list(players)
    if len(ring) % 2 == 1:
        ring.append(None)
    n = len(ring)
    if n < 2:
        return [], None
    r = (round_number - 1) % (n - 1)
    # Fix ring[0]; rotate the rest by r.
    rest = ring[1:]
    rest = rest[-r:] + rest[:-r] if r else rest
    circle = [ring[0], *rest]
    pairs: list[tuple[str, str]] = []
    bye: str | None = None
    for i in range(n // 2):
        a, b = circle[i], circle[n - 1 - i]
        if a is None or b is None:
            bye = b if a is None else a
            continue
        # The fixed player alternates each round; on the other boards the player on the top half
        # of the circle moves first. As the circle turns, everyone stays within one of even.
        if i == 0:
            first, second = (a, b) if r % 2 == 0 else (b, a)
        else:
            first, second = a, b
        pairs.append((first, second))
    return pairs, bye


# -- knockout --------------------------------------------------------------------------------------


def bracket_order(size: int) -> list[int]:
    """Seed numbers (1-based) by bracket position for a bracket of `size` (a power of two):
    1, 16, 8, 9, 4, 13, 5, 12, 2, 15, 7, 10, 3, 14, 6, 11 for 16."""
    order = [1]
    while len(order) < size:
        total = len(order) * 2 + 1
        order = [x for seed in order for x in (seed, total - seed)]
    return order


def knockout_rounds(count: int) -> int:
    return max(1, math.ceil(math.log2(count))) if count > 1 else 0


def knockout_first_round(players: Sequence[str]) -> list[tuple[str, ...]]:
    """Boards of round 1 in bracket order: a (high seed, low seed) pair, or (seed,) for a bye."""
    size = 1 << knockout_rounds(len(players))
    order = bracket_order(size)
    boards: list[tuple[str, ...]] = []
    for i in range(0, size, 2):
        a, b = order[i], order[i + 1]
        present = [players[s - 1] for s in (a, b) if s <= len(players)]
        boards.append(tuple(present))
    return boards


# -- tables ----------------------------------------------------------------------------------------


def table_sizes(count: int, preferred: int, lo: int = 3, *, hi: int) -> list[int]:
    """Table sizes for `count` players, largest first, none above `hi`. Fewer than `lo` players:
    one small table."""
    if count < 2:
        return []
    if count < lo:
        return [count]
    fewest = max(1, math.ceil(count / hi))  # no table may seat more than the game does
    best: tuple[float, int] | None = None
    for tables in range(fewest, count // lo + 1):
        cost = abs(count / tables - preferred)
        if best is None or cost < best[0] - 1e-9:
            best = (cost, tables)
    # No split into lo..hi exists (5 players, tables of 3..4): the game's limit wins, a table
    # gets fewer than lo.
    tables = best[1] if best else fewest
    base, extra = divmod(count, tables)
    return [base + 1] * extra + [base] * (tables - extra)


def pair_tables(
    order: Sequence[str],
    preferred: int,
    met: Callable[[str, str], int],
    *,
    lo: int = 3,
    hi: int,
) -> list[list[str]]:
    """Split `order` (standings order) into tables. `met(a, b)` counts earlier meetings.

    Fewest repeat meetings first, then tables of neighbours in the standings: tables are filled
    from the top remaining player with whoever below has met the table least (nearest first), then
    any two players at different tables swap while that lowers (repeats, standings spread)."""
    sizes = table_sizes(len(order), preferred, lo, hi=hi)
    place = {p: i for i, p in enumerate(order)}
    remaining = list(order)
    tables: list[list[str]] = []
    for size in sizes:
        table = [remaining.pop(0)]
        while len(table) < size:
            best = min(
                range(len(remaining)),
                key=lambda i: (sum(met(remaining[i], member) for member in table), i),
            )
            table.append(remaining.pop(best))
        tables.append(table)
    _improve(tables, met, place)
    return [sorted(table, key=place.__getitem__) for table in tables]


def _cost(table: Sequence[str], met: Callable[[str, str], int], place: Mapping[str, int]) -> tuple[int, int]:
    repeats = sum(met(a, b) for i, a in enumerate(table) for b in table[i + 1 :])
    spread = max(place[p] for p in table) - min(place[p] for p in table)
    return repeats, spread


def _improve(
    tables: list[list[str]], met: Callable[[str, str], int], place: Mapping[str, int], limit: int = 100
) -> None:
    """Swap players between tables while that lowers (repeats, spread) summed over the two tables."""
    for _ in range(limit):
        improved = False
        for t in range(len(tables)):
            for u in range(t + 1, len(tables)):
                left, right = tables[t], tables[u]
                lc, rc = _cost(left, met, place), _cost(right, met, place)
                base = (lc[0] + rc[0], lc[1] + rc[1])
                for i in range(len(left)):
                    for j in range(len(right)):
                        new_left = [*left[:i], right[j], *left[i + 1 :]]
                        new_right = [*right[:j], left[i], *right[j + 1 :]]
                        nl, nr = _cost(new_left, met, place), _cost(new_right, met, place)
                        new = (nl[0] + nr[0], nl[1] + nr[1])
                        if new < base:
                            tables[t], tables[u] = left, right = new_left, new_right
                            base = new
                            improved = True
        if not improved:
            return


def meeting_counts(tables: Iterable[Sequence[str]]) -> Mapping[frozenset[str], int]:
    counts: dict[frozenset[str], int] = {}
    for table in tables:
        for i, a in enumerate(table):
            for b in table[i + 1 :]:
                key = frozenset((a, b))
                counts[key] = counts.get(key, 0) + 1
    return counts
