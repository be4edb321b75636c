"""The director's steps in the pure engine: corrections, terminate, bans, late join, holding a round
for a pause, a director or its planned time; and the new fields through JSON."""

from __future__ import annotations

import dataclasses
import random

import pytest

from gateway.tournaments import engine
from gateway.tournaments.model import Config, Entrant, Format, Result, State, from_json, to_json
from gateway.tournaments.notices import SOON_CLOSE_MS, SOON_MS, soon_lead_ms

from .sim import entrants, run, two_seat_by_rating


def play_round(state: State, rng: random.Random) -> State:
    rnd = state.current
    assert rnd is not None
    play = two_seat_by_rating(rng)
    for g in rnd.games:
        if g.result is None and g.needs_game:
            state = engine.record(state, rnd.number, g.board, g.decider, play(state, rnd.number, g))
    return state


def started(fmt: Format, count: int, rounds: int = 0) -> State:
    state = engine.start(Config(fmt, rounds=rounds), entrants(count))
    return engine.next_round(state)


def test_correction_replaces_the_result_and_recomputes_standings() -> None:
    rng = random.Random(3)
    state = play_round(started(Format.SWISS, 8, rounds=3), rng)
    later = play_round(engine.next_round(state), rng)  # an earlier round is corrected in place
    game = next(g for g in later.rounds[0].games if not g.bye)
    assert game.result is not None
    moved = engine.correct(later, 1, game.board, 0, tuple(reversed(game.result.ranks)), "late")
    assert len(moved.rounds) == 2 and moved.rounds[1] == later.rounds[1]
    assert moved.rounds[0].game(game.board).note == "late"  # type: ignore[union-attr]
    game = next(g for g in state.rounds[0].games if not g.bye)
    assert game.result is not None
    flipped = tuple(reversed(game.result.ranks)) if len(set(game.result.ranks)) == 2 else (1, 2)
    before = {s.player_id: s.points for s in engine.standings(state)}
    fixed = engine.correct(state, 1, game.board, 0, flipped, "dispute settled")
    after_game = fixed.rounds[0].game(game.board)
    assert after_game is not None and after_game.note == "dispute settled"
    assert after_game.result is not None and after_game.result.ranks == flipped
    after = {s.player_id: s.points for s in engine.standings(fixed)}
    winner = game.seats[flipped.index(1)]
    assert after[winner] == 1.0 and before[winner] < 1.0
    # The same correction again changes nothing; JSON keeps the reason.
    assert engine.correct(fixed, 1, game.board, 0, flipped, "dispute settled") == fixed
    assert from_json(to_json(fixed)) == fixed


def test_correction_refusals() -> None:
    state = play_round(started(Format.SWISS, 7, rounds=3), random.Random(1))
    bye = next(g for g in state.rounds[0].games if g.bye)
    with pytest.raises(engine.TournamentError) as error:
        engine.correct(state, 1, bye.board, 0, (1,), "x")
    assert error.value.reason == "GAME_NOT_CORRECTABLE"
    with pytest.raises(engine.TournamentError) as error:
        engine.correct(state, 1, 1, 0, (1, 3), "x")
    assert error.value.reason == "BAD_CORRECTION"
    with pytest.raises(engine.TournamentError) as error:
        engine.correct(state, 9, 1, 0, (1, 2), "x")
    assert error.value.reason == "NO_SUCH_ROUND"


def test_a_playing_game_corrected_completes_the_round() -> None:
    state = started(Format.SWISS, 4, rounds=2)
    for g in state.rounds[0].games:
        state = engine.correct(state, 1, g.board, 0, (1, 2), "decided by the arbiter")
    assert engine.round_done(state)
    state = engine.next_round(state)
    assert len(state.rounds) == 2


def test_terminate_aborts_the_games_being_played_and_counts_none() -> None:
    rng = random.Random(5)
    state = play_round(started(Format.SWISS, 6, rounds=4), rng)
    state = engine.next_round(state)
    first = state.rounds[1].games[0]
    state = engine.record(state, 2, first.board, 0, Result((1, 2)))
    points_before = engine.points_table(state)
    ended = engine.terminate(state)
    assert ended.finished and ended.terminated
    aborted = [g for g in ended.rounds[1].games if g.aborted]
    assert len(aborted) == len(state.rounds[1].games) - 1
    assert engine.points_table(ended) == points_before
    assert engine.next_round(ended) == ended
    assert from_json(to_json(ended)) == ended


def test_a_withdrawn_round_robin_player_forfeits_every_later_game() -> None:
    rng = random.Random(2)
    state = play_round(started(Format.ROUND_ROBIN, 6), rng)
    state = engine.ban(state, "p03")
    assert state.banned == ("p03",) and state.is_withdrawn("p03")
    assert engine.ban(state, "p03") == state
    while not state.finished:
        state = engine.next_round(state)
        if state.finished:
            break
        for g in state.current.games if state.current else ():
            if "p03" in g.seats:
                assert g.result is not None and g.result.unplayed
        state = play_round(state, rng)
    forfeited = [g for _, g in state.all_games() if "p03" in g.seats and g.result is not None and g.result.unplayed]
    assert len(forfeited) == 4  # five opponents: one played, four forfeited
    table = {row.player_id: row for row in engine.standings(state)}
    assert table["p03"].games == 5 and table["p03"].withdrawn


def test_late_join_in_swiss() -> None:
    rng = random.Random(7)
    state = play_round(started(Format.SWISS, 6, rounds=4), rng)
    late = Entrant("late1", "late one", 1900.0)
    joined = engine.late_join(state, late, until_round=2)
    assert joined.entrant("late1") == late and joined.seed("late1") == 6
    assert engine.late_join(joined, late, until_round=2) == joined
    assert engine.points_table(joined)["late1"] == 0.0
    paired = engine.next_round(joined)
    assert any("late1" in g.seats for g in paired.rounds[1].games)
    with pytest.raises(engine.TournamentError):
        engine.late_join(paired, Entrant("late2"), until_round=2)  # round 2 is paired already
    with pytest.raises(engine.TournamentError):
        engine.late_join(started(Format.ROUND_ROBIN, 4), Entrant("late3"), until_round=2)


def test_rounds_wait_for_a_pause_a_director_or_their_time() -> None:
    rng = random.Random(9)
    state = play_round(started(Format.SWISS, 6, rounds=3), rng)
    none = engine.Schedule()
    assert engine.waiting_round(state, none, 0) is None
    paused = dataclasses.replace(state, paused=True)
    assert engine.waiting_round(paused, none, 0) == (2, 0)
    assert engine.waiting_round(state, engine.Schedule(manual=True), 0) == (2, 0)
    planned = engine.Schedule(round_times_ms=(10_000, 20_000))
    assert engine.waiting_round(state, planned, 9_999) == (2, 10_000)
    assert engine.waiting_round(state, planned, 10_000) is None
    released = engine.release(paused)
    assert not released.paused and released.released == 2
    assert engine.waiting_round(released, engine.Schedule(manual=True), 0) is None
    # A round being played: nothing to wait for, and no starting the next by hand.
    running = engine.next_round(released)
    assert engine.waiting_round(running, planned, 0) is None
    with pytest.raises(engine.TournamentError) as error:
        engine.release(running)
    assert error.value.reason == "ROUND_IN_PROGRESS"
    done = run(Config(Format.SWISS, rounds=2), entrants(4), two_seat_by_rating(rng))
    with pytest.raises(engine.TournamentError) as error:
        engine.release(done)
    assert error.value.reason == "NO_NEXT_ROUND"


def test_director_fields_round_trip_and_old_json_reads() -> None:
    state = dataclasses.replace(started(Format.SWISS, 4, rounds=2), paused=True, released=2, held=2, banned=("p01",))
    assert from_json(to_json(state)) == state
    plain = started(Format.SWISS, 4, rounds=2)
    assert '"p"' not in to_json(plain) and from_json(to_json(plain)) == plain


def test_starting_soon_lead() -> None:
    hour = 3_600_000
    assert soon_lead_ms(0, 10 * hour) == SOON_MS
    assert soon_lead_ms(9 * hour, 10 * hour) == SOON_CLOSE_MS
    assert soon_lead_ms(7 * hour, 10 * hour) == SOON_MS
