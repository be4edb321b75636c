"""Round robin, knockout, Colour Square tables and forfeits, pure."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator

import pytest

from gateway.tournaments import engine
from gateway.tournaments.model import Config, Entrant, Format, Game, Result, State, from_json, to_json
from gateway.tournaments.pairing import bracket_order, round_robin_round, table_sizes

from .sim import entrants, run, table_by_score, two_seat_by_rating


def test_round_robin_of_7() -> None:
    rng = random.Random(1)
    people = entrants(7, rng)
    state = run(Config(Format.ROUND_ROBIN), people, two_seat_by_rating(rng))
    assert state.finished and len(state.rounds) == 7
    meetings: Counter[frozenset[str]] = Counter()
    byes: Counter[str] = Counter()
    seat0: Counter[str] = Counter()
    for rnd in state.rounds:
        assert sum(1 for g in rnd.games if g.bye) == 1, "one bye each round"
        assert sorted(p for g in rnd.games for p in g.seats) == sorted(e.player_id for e in people)
        for game in rnd.games:
            if game.bye:
                byes[game.seats[0]] += 1
            else:
                meetings[frozenset(game.seats)] += 1
                seat0[game.seats[0]] += 1
    assert len(meetings) == 21 and set(meetings.values()) == {1}, "everyone meets everyone once"
    assert set(byes.values()) == {1} and len(byes) == 7
    assert all(2 <= seat0[e.player_id] <= 4 for e in people)  # 6 games each: 3 +- 1 first moves
    table = engine.standings(state)
    assert sum(row.points for row in table) == 21 + 7  # one point a game, one a bye
    assert [r.points for r in table] == sorted((r.points for r in table), reverse=True)


@pytest.mark.parametrize("count", [2, 3, 4, 5, 6, 8, 9, 10])
def test_round_robin_schedules(count: int) -> None:
    players = [f"p{i}" for i in range(count)]
    rounds = count - 1 if count % 2 == 0 else count
    meetings: Counter[frozenset[str]] = Counter()
    seat0: Counter[str] = Counter()
    for r in range(1, rounds + 1):
        pairs, bye = round_robin_round(players, r)
        assert (bye is not None) == (count % 2 == 1)
        meetings.update(frozenset(p) for p in pairs)
        seat0.update(a for a, _ in pairs)
    assert len(meetings) == count * (count - 1) // 2 and set(meetings.values()) == {1}
    games_each = count - 1
    assert all(abs(2 * seat0[p] - games_each) <= 1 for p in players)


def test_bracket_order() -> None:
    assert bracket_order(16) == [1, 16, 8, 9, 4, 13, 5, 12, 2, 15, 7, 10, 3, 14, 6, 11]
    assert bracket_order(4) == [1, 4, 2, 3]


def test_knockout_of_13() -> None:
    rng = random.Random(13)
    people = entrants(13, rng)
    draws = iter([True, True, False] * 100)

    def play(state: State, round_number: int, game: Game) -> Result:
        # Every first game of the quarter-finals is drawn once: deciders follow.
        if round_number == 2 and game.decider == 0:
            return Result((1, 1))
        if round_number == 3 and next(draws):
            return Result((1, 1))
        return two_seat_by_rating(rng, draw_rate=0)(state, round_number, game)

    state = run(Config(Format.KNOCKOUT, max_deciders=3), people, play)
    assert state.finished and len(state.rounds) == 4
    seeds = [e.player_id for e in state.entrants]
    first = state.rounds[0]
    byes = [g.seats[0] for g in first.games if g.bye]
    assert byes == [seeds[0], seeds[1], seeds[2]], "byes to the top three seeds"
    assert len([g for g in first.games if not g.bye]) == 5
    assert {frozenset(g.seats) for g in first.games if not g.bye} == {
        frozenset((seeds[s - 1], seeds[t - 1])) for s, t in ((8, 9), (4, 13), (5, 12), (7, 10), (6, 11))
    }
    # Each round: half the boards; every board decided; the winners of neighbouring boards meet.
    alive = set(seeds)
    for rnd in state.rounds:
        boards = sorted({g.board for g in rnd.games})
        winners = [engine.match_winner(state, rnd, b) for b in boards]
        assert all(w is not None for w in winners)
        for b in boards:
            games = sorted((g for g in rnd.games if g.board == b), key=lambda g: g.decider)
            assert all(set(g.seats) <= alive for g in games)
            for earlier, later in itertools.pairwise(games):
                assert earlier.result is not None and earlier.result.ranks == (1, 1), "a decider only after a draw"
                assert later.seats == tuple(reversed(earlier.seats)), "the decider swaps seats"
        losers = {p for g in rnd.games for p in g.seats} - {w for w in winners if w}
        alive -= losers
        if rnd.number < 4:
            nxt = state.rounds[rnd.number]
            expect = [frozenset(winners[i : i + 2]) for i in range(0, len(winners), 2)]
            got = [frozenset(g.seats) for g in sorted(nxt.games, key=lambda g: g.board) if g.decider == 0]
            assert got == expect
    assert sum(1 for g in state.rounds[1].games if g.decider) == 4  # one decider per quarter-final
    assert len(alive) == 1
    table = engine.standings(state)
    assert table[0].player_id == next(iter(alive)) and table[0].rank == 1
    assert table[1].rank == 2 and table[2].rank == table[3].rank == 3
    assert [r.rank for r in table[4:8]] == [5] * 4 and [r.rank for r in table[8:]] == [9] * 5
    assert from_json(to_json(state)) == state


def test_knockout_decider_limit_goes_to_higher_seed() -> None:
    people = [Entrant("a", rating=1600), Entrant("b", rating=1500)]
    state = run(Config(Format.KNOCKOUT, max_deciders=2), people, lambda s, r, g: Result((1, 1)))
    assert len(state.rounds[0].games) == 3
    assert engine.standings(state)[0].player_id == "a"


@pytest.mark.parametrize(
    ("count", "size", "expected"),
    [
        (12, 4, [4, 4, 4]),
        (13, 4, [5, 4, 4]),
        (5, 4, [5]),
        (7, 6, [4, 3]),
        (2, 4, [2]),
        (14, 3, [4, 4, 3, 3]),
        (6, 6, [6]),
    ],
)
def test_table_sizes(count: int, size: int, expected: list[int]) -> None:
    assert table_sizes(count, size, hi=6) == expected


def _splits(players: list[str]) -> Iterator[list[list[str]]]:
    if not players:
        yield []
        return
    first = players[0]
    for combo in itertools.combinations(players[1:], 3):
        rest = [p for p in players[1:] if p not in combo]
        for split in _splits(rest):
            yield [[first, *combo], *split]


def test_coloursquare_swiss_tables_of_4_with_12_players() -> None:
    rng = random.Random(12)
    people = entrants(12, rng)
    state = run(Config(Format.TABLES, rounds=4, table_size=4, largest_table=6), people, table_by_score(rng))
    assert state.finished and len(state.rounds) == 4
    meetings: Counter[frozenset[str]] = Counter()
    for rnd in state.rounds:
        assert [len(g.seats) for g in rnd.games] == [4, 4, 4]
        assert sorted(p for g in rnd.games for p in g.seats) == sorted(e.player_id for e in people)

        def repeats_of(tables: list[list[str]] | list[tuple[str, ...]]) -> int:
            return sum(meetings[frozenset((a, b))] for t in tables for i, a in enumerate(t) for b in t[i + 1 :])

        # As few repeat meetings as any split into 4-seat tables allows (all 5775 checked).
        fewest = min(repeats_of(split) for split in _splits([e.player_id for e in people]))
        assert repeats_of([g.seats for g in rnd.games]) == fewest
        if rnd.number == 2:
            assert fewest == 3  # four players from three earlier tables: one pair per table met
        for g in rnd.games:
            for i, a in enumerate(g.seats):
                for b in g.seats[i + 1 :]:
                    meetings[frozenset((a, b))] += 1
    # Standings: place points (table win 1, last 0, shared places averaged), then total score.
    points: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for rnd in state.rounds:
        for g in rnd.games:
            assert g.result is not None
            for seat, p in enumerate(g.seats):
                mine = g.result.scores[seat]
                beaten = sum(1 for o in g.result.scores if o < mine)
                level = sum(1 for o in g.result.scores if o == mine) - 1
                points[p] += (beaten + 0.5 * level) / 3
                totals[p] += mine
    table = engine.standings(state)
    for row in table:
        assert row.points == pytest.approx(points[row.player_id])
        assert row.score_total == totals[row.player_id]
    keys = [(-round(points[r.player_id], 9), -totals[r.player_id]) for r in table]
    assert keys == sorted(keys)
    assert sum(r.points for r in table) == pytest.approx(4 * 3 * 2)  # each table hands out n/2 points


def test_table_seat_zero_rotates() -> None:
    rng = random.Random(3)
    state = run(Config(Format.TABLES, rounds=3, table_size=4, largest_table=6), entrants(12, rng), table_by_score(rng))
    firsts = Counter(g.seats[0] for r in state.rounds for g in r.games)
    assert max(firsts.values()) == 1


def missed(seat: int, seats: int = 2) -> Result:
    """The seat made no move and lost on time."""
    ranks = tuple(2 if s == seat else 1 for s in range(seats))
    return Result(ranks, missed=tuple(s == seat for s in range(seats)))


def test_two_missed_games_in_a_row_withdraw_a_player() -> None:
    rng = random.Random(2)
    people = entrants(6, rng)
    state = engine.next_round(engine.start(Config(Format.SWISS, rounds=5), people))
    idle = state.entrants[5].player_id
    for _ in range(5):
        rnd = state.current
        assert rnd is not None
        for game in rnd.games:
            if game.bye:
                continue
            if idle in game.seats:
                state = engine.record(state, rnd.number, game.board, 0, missed(game.seat_of(idle)))
            else:
                state = engine.record(state, rnd.number, game.board, 0, Result((1, 2)))
        if rnd.number == 1:
            assert not state.is_withdrawn(idle)
        state = engine.next_round(state)
        if state.finished:
            break
    assert state.finished and len(state.rounds) == 5
    assert state.withdrawn == (idle,)
    assert engine.miss_streak(state, idle) == 2
    # Two games, both lost; never paired after the second.
    assert [rnd.number for rnd in state.rounds if any(idle in g.seats for g in rnd.games)] == [1, 2]
    row = next(r for r in engine.standings(state) if r.player_id == idle)
    assert row.withdrawn and row.points == 0 and row.losses == 2


def test_a_move_breaks_the_run() -> None:
    people = entrants(2)
    state = engine.next_round(engine.start(Config(Format.SWISS, rounds=3), people))
    a = state.entrants[0].player_id
    for number, result_for in ((1, True), (2, False), (3, True)):
        rnd = state.current
        assert rnd is not None and rnd.number == number
        game = rnd.games[0]
        result = missed(game.seat_of(a)) if result_for else Result((1, 1))
        state = engine.next_round(engine.record(state, number, game.board, 0, result))
    assert not state.is_withdrawn(a) and state.finished


def test_withdrawn_round_robin_games_are_forfeited_cleanly() -> None:
    rng = random.Random(4)
    people = entrants(5, rng)
    state = engine.next_round(engine.start(Config(Format.ROUND_ROBIN), people))
    gone = state.entrants[2].player_id
    for game in state.rounds[0].games:
        if not game.bye:
            state = engine.record(state, 1, game.board, 0, Result((1, 2)))
    state = engine.withdraw(state, gone)
    state = engine.next_round(state)
    played_after = 0
    while not state.finished:
        rnd = state.current
        assert rnd is not None
        for game in rnd.games:
            if gone in game.seats and not game.bye:
                assert game.result is not None and game.result.unplayed and not game.needs_game
                assert game.result.ranks[game.seat_of(gone)] == 2
            elif game.result is None and not game.bye:
                played_after += 1
                state = engine.record(state, rnd.number, game.board, 0, Result((1, 2)))
        state = engine.next_round(state)
    assert len(state.rounds) == 5
    table = {r.player_id: r for r in engine.standings(state)}
    assert table[gone].withdrawn
    # Every player still met the withdrawn one once: a forfeit win for them.
    for e in people:
        if e.player_id != gone:
            vs = [g for r in state.rounds for g in r.games if {gone, e.player_id} <= set(g.seats)]
            assert len(vs) == 1


def test_withdrawn_in_knockout_gives_a_walkover() -> None:
    people = entrants(4)
    state = engine.next_round(engine.start(Config(Format.KNOCKOUT), people))
    seeds = [e.player_id for e in state.entrants]
    # Round 1: 1 v 4 and 2 v 3. Seed 2 wins, then withdraws before the final.
    state = engine.record(state, 1, 1, 0, Result((1, 2)))
    state = engine.record(state, 1, 2, 0, Result((1, 2)))
    state = engine.withdraw(state, seeds[1])
    state = engine.next_round(state)
    final = state.rounds[1].games[0]
    assert final.result is not None and final.result.unplayed and not final.needs_game
    state = engine.next_round(state)
    assert state.finished and engine.standings(state)[0].player_id == seeds[0]


def test_withdraw_unknown_player() -> None:
    state = engine.start(Config(Format.SWISS, rounds=1), entrants(3))
    with pytest.raises(engine.TournamentError):
        engine.withdraw(state, "nobody")


def test_too_few_players() -> None:
    with pytest.raises(engine.TournamentError):
        engine.start(Config(Format.TABLES, rounds=1, largest_table=6), entrants(2))
    with pytest.raises(ValueError):
        Config(Format.SWISS, rounds=0)


@pytest.mark.parametrize("largest", [3, 4, 5, 6, 8])
def test_tables_never_seat_more_than_the_game(largest: int) -> None:
    # The largest table is the game's (DescribeGame max_seats), not the format's.
    for count in range(2, 40):
        for preferred in range(3, largest + 1):
            sizes = table_sizes(count, preferred, hi=largest)
            assert sum(sizes) == count and max(sizes) <= largest
            assert max(sizes) - min(sizes) <= 1
