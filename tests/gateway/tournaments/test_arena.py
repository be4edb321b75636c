"""The arena, pure: points and streaks, waves (never the same opponent twice in a row, one game at
a time, by points), the end, pauses, corrections, standings, JSON; a property test over random
arenas; and the cost of a wave at 2,000 players."""

from __future__ import annotations

import itertools
import random
import time
from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.tournaments import arena, engine
from gateway.tournaments.model import Config, Format, Result, State, from_json, to_json
from tests.gateway.tournaments.sim import entrants

WIN, LOSS, DRAW = Result((1, 2)), Result((2, 1)), Result((1, 1))
END = 10**12


def started(count: int, rng: random.Random | None = None) -> State:
    return engine.start(Config(Format.ARENA), entrants(count, rng))


def play(state: State, outcome: dict[int, Result], *, now: int = 0, ends: int = END, hold: bool = False) -> arena.Wave:
    return arena.wave(state, outcome, now_ms=now, ends_ms=ends, hold=hold)


def test_points_double_on_a_streak() -> None:
    assert [arena.game_points(o, s) for o, s in [(1, 0), (1, 1), (1, 2), (0, 3), (-1, 5), (0, 1)]] == [2, 2, 4, 2, 0, 1]
    # p00's results in turn (four players, so that it always has someone new to meet).
    state = started(4)
    tallies = arena.arena_of(state).tallies
    assert set(tallies) == {"p00", "p01", "p02", "p03"}
    got = []
    results = [WIN, WIN, WIN, DRAW, WIN, LOSS]
    for outcome in results:
        state = play(state, {}).state
        (g,) = [g for g in arena.playing(state) if "p00" in g.seats]
        seat = g.seat_of("p00")
        mine = outcome if seat == 0 else Result(tuple(reversed(outcome.ranks)))
        state = play(state, {g.board: mine}, hold=True).state
        got.append(arena.points_of(state, g.board)[seat])
        for other in arena.playing(state):  # finish the other board as a draw, to free everyone
            state = play(state, {other.board: DRAW}, hold=True).state
    assert got == [2, 2, 4, 2, 2, 0]
    t = arena.arena_of(state).tallies["p00"]
    assert (t.points, t.streak, t.games, t.wins, t.draws, t.losses) == (12, 0, 6, 4, 1, 1)


def test_never_the_same_opponent_twice_in_a_row_and_the_odd_one_waits() -> None:
    state = started(2)
    state = play(state, {}).state
    (g,) = arena.playing(state)
    state = play(state, {g.board: WIN}).state
    assert arena.playing(state) == [], "the two who just met wait"
    # A third player comes back from a pause: paired with one of them, the other waits.
    state = started(3)
    state = arena.set_paused(state, "p02", True)
    state = play(state, {}).state
    (g,) = arena.playing(state)
    state = arena.set_paused(state, "p02", False)
    step = play(state, {g.board: DRAW})
    assert len(step.paired) == 1 and "p02" in step.paired[0].seats and len(step.finished) == 1


def test_pairing_by_points_then_rating() -> None:
    state = started(8)
    state = play(state, {}).state
    # Seeds 1-2, 3-4, ... in the first wave (no points yet: by rating).
    assert [tuple(sorted(state.seed(p) for p in g.seats)) for g in arena.playing(state)] == [
        (0, 1),
        (2, 3),
        (4, 5),
        (6, 7),
    ]
    # The winners (seat 1 of each: the lower seeds) meet each other next.
    step = play(state, {g.board: LOSS for g in arena.playing(state)})
    winners = {g.seats[1] for g in step.finished}
    for g in step.paired:
        assert (g.seats[0] in winners) == (g.seats[1] in winners)


def test_the_end_no_new_games_and_games_in_progress_count() -> None:
    state = started(4)
    state = play(state, {}, now=0, ends=1000).state
    first, second = arena.playing(state)
    step = play(state, {first.board: WIN}, now=1000, ends=1000)
    assert step.paired == () and not step.state.finished, "a game is still being played"
    step = play(step.state, {second.board: DRAW}, now=2000, ends=1000)
    assert step.state.finished and step.paired == ()
    points = {s.player_id: s.tally.points for s in arena.standings(step.state)}
    assert sorted(points.values()) == [0, 1, 1, 2]


def test_hold_pairs_nothing_and_a_missed_game_pauses() -> None:
    state = started(4)
    assert play(state, {}, hold=True).paired == ()
    state = play(state, {}).state
    g = arena.playing(state)[0]
    step = play(state, {g.board: Result((2, 1), missed=(True, False))})
    assert step.paused == (g.seats[0],)
    assert arena.arena_of(step.state).tallies[g.seats[0]].paused
    assert all(g.seats[0] not in p.seats for p in step.paired)


def test_withdrawn_players_are_not_paired() -> None:
    state = started(4)
    state = engine.withdraw(state, "p00")
    state = play(state, {}).state
    assert all("p00" not in g.seats for g in arena.playing(state))
    assert len(arena.playing(state)) == 1


def test_a_correction_recomputes_the_tallies() -> None:
    state = started(4)
    state = play(state, {}).state
    boards = [g.board for g in arena.playing(state)]
    state = play(state, dict.fromkeys(boards, WIN), hold=True).state
    before = arena.arena_of(state).tallies
    fixed = engine.correct(state, 0, boards[0], 0, (2, 1), "dispute")
    g = arena.game(fixed, boards[0])
    assert g is not None and g.note == "dispute" and g.result == LOSS
    after = arena.arena_of(fixed).tallies
    assert after[g.seats[0]].points == before[g.seats[0]].points - 2
    assert after[g.seats[1]].points == before[g.seats[1]].points + 2
    assert engine.correct(fixed, 0, boards[0], 0, (2, 1), "dispute") is fixed, "the same correction again"
    try:
        engine.correct(fixed, 1, boards[0], 0, (2, 1), "x")
    except engine.TournamentError as error:
        assert error.reason == "NO_SUCH_GAME"
    else:
        raise AssertionError("round 1 of an arena")


def test_json_round_trip_and_standings_order() -> None:
    state = started(6)
    state = play(state, {}).state
    state = play(state, {g.board: WIN for g in arena.playing(state)}).state
    state = arena.set_paused(state, "p03", True)
    again = from_json(to_json(state))
    assert again == state
    rows = arena.standings(state)
    assert [r.tally.points for r in rows] == sorted((r.tally.points for r in rows), reverse=True)
    assert [r.rank for r in rows][:1] == [1]
    assert next(r for r in rows if r.player_id == "p03").tally.paused


@settings(max_examples=60, deadline=None)
@given(
    count=st.integers(2, 24),
    seed=st.integers(0, 10**6),
    waves=st.integers(1, 40),
)
def test_random_arenas(count: int, seed: int, waves: int) -> None:
    rng = random.Random(seed)
    state = started(count, rng)
    ends = waves * 10
    now = 0
    while not state.finished and now < ends + 500:
        playing = arena.playing(state)
        results = {g.board: rng.choice([WIN, LOSS, DRAW]) for g in playing if rng.random() < 0.6}
        if rng.random() < 0.1:
            pid = rng.choice([e.player_id for e in state.entrants])
            state = arena.set_paused(state, pid, not arena.arena_of(state).tallies[pid].paused)
        step = play(state, results, now=now, ends=ends)
        state = step.state
        if now >= ends:
            assert step.paired == ()
        now += 10
    assert state.finished
    by_player: dict[str, list[str]] = defaultdict(list)
    points: dict[str, int] = defaultdict(int)
    for g in arena.games(state):
        assert g.result is not None, "every game finished and counted"
        assert len(set(g.seats)) == 2
        for seat, pid in enumerate(g.seats):
            by_player[pid].append(g.seats[1 - seat])
            points[pid] += arena.points_of(state, g.board)[seat]
    for opponents in by_player.values():
        assert all(a != b for a, b in itertools.pairwise(opponents)), "twice in a row"
    tallies = arena.arena_of(state).tallies
    assert {p: t.points for p, t in tallies.items() if t.points} == {p: v for p, v in points.items() if v}
    assert arena.recompute(state) == state
    assert from_json(to_json(state)) == state


def test_a_wave_at_2000_players_costs_its_work_not_the_games_so_far() -> None:
    """2,000 players, ~10,000 games played: a wave collecting 50 results and pairing those players
    stays in milliseconds; the whole state's JSON is what a save costs."""
    rng = random.Random(7)
    state = started(2000, rng)
    state = play(state, {}).state
    while len(arena.games(state)) < 10_000:
        state = play(state, {g.board: rng.choice([WIN, LOSS, DRAW]) for g in arena.playing(state)}).state
    playing = arena.playing(state)
    results = {g.board: WIN for g in playing[:50]}
    started_at = time.perf_counter()
    step = play(state, results)
    wave_ms = (time.perf_counter() - started_at) * 1000
    assert len(step.finished) == 50 and len(step.paired) >= 20
    to_json(state)  # the state before was saved: its games were encoded then
    started_at = time.perf_counter()
    text = to_json(step.state)
    save_ms = (time.perf_counter() - started_at) * 1000
    started_at = time.perf_counter()
    assert from_json(text) == step.state
    json_ms = (time.perf_counter() - started_at) * 1000
    started_at = time.perf_counter()
    arena.standings(step.state)
    standings_ms = (time.perf_counter() - started_at) * 1000
    print(
        f"\nwave {wave_ms:.1f} ms, state JSON {len(text) / 1e6:.2f} MB written {save_ms:.0f} ms (100 games new), "
        f"parsed {json_ms:.0f} ms, standings {standings_ms:.1f} ms"
    )
    assert wave_ms < 250 and standings_ms < 250
