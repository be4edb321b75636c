"""Swiss: 64 players over 6 rounds, checked against an independent calculation."""

from __future__ import annotations

import itertools
import random
from collections import Counter, defaultdict

from gateway.tournaments import engine
from gateway.tournaments.model import Config, Entrant, Format, Result, from_json, to_json
from gateway.tournaments.pairing import SwissPlayer, pair_swiss

from .sim import entrants, run, two_seat_by_rating


def independent_standings(
    rows: list[tuple[str, str, float]], byes: list[str], players: list[str]
) -> dict[str, tuple[float, float, float]]:
    """points, Buchholz, Sonneborn-Berger from (white, black, white's score) rows and byes."""
    points: dict[str, float] = defaultdict(float)
    for white, black, score in rows:
        points[white] += score
        points[black] += 1 - score
    for p in byes:
        points[p] += 1
    buchholz: dict[str, float] = defaultdict(float)
    sb: dict[str, float] = defaultdict(float)
    for white, black, score in rows:
        buchholz[white] += points[black]
        buchholz[black] += points[white]
        sb[white] += score * points[black]
        sb[black] += (1 - score) * points[white]
    return {p: (points[p], buchholz[p], sb[p]) for p in players}


def check_swiss(count: int, rounds: int, seed: int) -> None:
    rng = random.Random(seed)
    people = entrants(count, rng)
    state = run(Config(Format.SWISS, rounds=rounds), people, two_seat_by_rating(rng))
    assert state.finished and len(state.rounds) == rounds
    seen: set[frozenset[str]] = set()
    byes: list[str] = []
    rows: list[tuple[str, str, float]] = []
    seat0: Counter[str] = Counter()
    seat1: Counter[str] = Counter()
    for rnd in state.rounds:
        in_round: list[str] = [p for g in rnd.games for p in g.seats]
        assert sorted(in_round) == sorted(e.player_id for e in people), "everyone plays (or has the bye) once a round"
        for game in rnd.games:
            if game.bye:
                byes.append(game.seats[0])
                continue
            pair = frozenset(game.seats)
            assert pair not in seen, f"repeat pairing {sorted(pair)} in round {rnd.number}"
            seen.add(pair)
            assert game.result is not None
            white, black = game.seats
            r = game.result.ranks
            rows.append((white, black, 1.0 if r[0] < r[1] else 0.0 if r[0] > r[1] else 0.5))
            seat0[white] += 1
            seat1[black] += 1
    assert len(byes) == len(set(byes)) == (rounds if count % 2 else 0)
    # Seat balance: nobody more than two games off even.
    for e in people:
        assert abs(seat0[e.player_id] - seat1[e.player_id]) <= 2
    expected = independent_standings(rows, byes, [e.player_id for e in people])
    table = engine.standings(state)
    for row in table:
        points, buchholz, sb = expected[row.player_id]
        assert (row.points, row.buchholz, row.sonneborn_berger) == (points, buchholz, sb)
    # Order: points, Buchholz, SB, then seed (rating high to low).
    seed = {e.player_id: i for i, e in enumerate(sorted(people, key=lambda e: -e.rating))}
    order = sorted(expected, key=lambda p: (-expected[p][0], -expected[p][1], -expected[p][2], seed[p]))
    assert [row.player_id for row in table] == order
    # Competition ranks: shared exactly on full ties.
    for before, after in itertools.pairwise(table):
        tied = expected[before.player_id] == expected[after.player_id]
        assert (after.rank == before.rank) == tied
        if not tied:
            assert after.rank == table.index(after) + 1
    assert from_json(to_json(state)) == state


def test_swiss_64_players_6_rounds() -> None:
    check_swiss(64, 6, seed=7)


def test_swiss_odd_field_byes_once_each() -> None:
    check_swiss(15, 7, seed=3)


def _perfect_matching_exists(players: list[str], met: set[frozenset[str]]) -> bool:
    if not players:
        return True
    first, rest = players[0], players[1:]
    return any(
        frozenset((first, q)) not in met and _perfect_matching_exists([x for x in rest if x != q], met) for q in rest
    )


def test_swiss_small_fields_repeat_only_when_unavoidable() -> None:
    """Rounds beyond what greedy rounds can keep repeat-free: a round with a repeat only where no
    repeat-free round existed (any bye among those with the fewest byes)."""
    for count, rounds, seed in ((6, 5, 11), (8, 7, 2), (7, 7, 4), (5, 5, 9)):
        rng = random.Random(seed)
        state = run(Config(Format.SWISS, rounds=rounds), entrants(count, rng), two_seat_by_rating(rng))
        met: set[frozenset[str]] = set()
        byes: Counter[str] = Counter()
        players = [e.player_id for e in state.entrants]
        for rnd in state.rounds:
            pairs = [frozenset(g.seats) for g in rnd.games if not g.bye]
            if any(pair in met for pair in pairs):
                fewest = min(byes[p] for p in players)
                options = (
                    [[x for x in players if x != b] for b in players if byes[b] == fewest] if count % 2 else [players]
                )
                assert not any(_perfect_matching_exists(option, met) for option in options), (count, rnd.number)
            met.update(pairs)
            for g in rnd.games:
                if g.bye:
                    byes[g.seats[0]] += 1
        assert max(byes.values(), default=0) - min(byes[p] for p in players) <= 1


def test_swiss_repeats_only_when_unavoidable() -> None:
    rng = random.Random(5)
    state = run(Config(Format.SWISS, rounds=5), entrants(4, rng), two_seat_by_rating(rng))
    pairs = Counter(frozenset(g.seats) for r in state.rounds for g in r.games)
    # Three rounds exhaust the 3 perfect matchings of 4 players; then repeats are unavoidable.
    first3 = [frozenset(g.seats) for r in state.rounds[:3] for g in r.games]
    assert len(set(first3)) == 6
    assert sum(pairs.values()) == 10


def test_bye_goes_to_lowest_without_one() -> None:
    players = [SwissPlayer(f"p{i}", points=float(5 - i), seed=i) for i in range(5)]
    assert pair_swiss(players, 1).bye == "p4"
    players[4] = SwissPlayer("p4", 0.0, 4, byes=1)
    assert pair_swiss(players, 2).bye == "p3"


def test_bye_skips_a_player_whose_bye_would_force_a_repeat() -> None:
    # p2 is lowest without a bye, but if p2 sits out, p0 and p1 (who met) would have to meet again.
    players = [
        SwissPlayer("p0", 1, 0, frozenset({"p1"})),
        SwissPlayer("p1", 1, 1, frozenset({"p0"})),
        SwissPlayer("p2", 0, 2, frozenset()),
    ]
    result = pair_swiss(players, 2)
    assert result.repeats == 0 and result.bye in {"p0", "p1"}


def test_colour_allocation_follows_due_seat() -> None:
    a = SwissPlayer("a", 1, 0, seats=(0,))
    b = SwissPlayer("b", 1, 1, seats=(1,))
    result = pair_swiss([a, b], 2)
    assert result.pairs == [("b", "a")]


def test_withdrawn_players_are_not_paired() -> None:
    people = entrants(6)
    state = engine.next_round(engine.start(Config(Format.SWISS, rounds=3), people))
    gone = state.entrants[0].player_id
    state = engine.withdraw(state, gone)
    rnd = state.current
    assert rnd is not None
    for game in rnd.games:
        state = engine.record(state, 1, game.board, 0, Result((1, 2)))
    state = engine.next_round(state)
    assert state.current is not None and state.current.number == 2
    assert all(gone not in g.seats for g in state.current.games)
    assert sum(1 for g in state.current.games if g.bye) == 1  # 5 left: one bye


def test_record_is_idempotent() -> None:
    state = engine.next_round(engine.start(Config(Format.SWISS, rounds=2), entrants(4)))
    once = engine.record(state, 1, 1, 0, Result((1, 2)))
    assert engine.record(once, 1, 1, 0, Result((2, 1))) == once


def test_entrants_seeded_by_rating() -> None:
    people = [Entrant("a", rating=1500), Entrant("b", rating=1700), Entrant("c", rating=1500)]
    state = engine.start(Config(Format.SWISS, rounds=1), people)
    assert [e.player_id for e in state.entrants] == ["b", "a", "c"]
