"""Helpers for the pure tournament tests: entrants and a seeded result simulator."""

from __future__ import annotations

import random
from collections.abc import Callable

from gateway.tournaments import engine
from gateway.tournaments.model import Config, Entrant, Game, Result, State

Play = Callable[[State, int, Game], Result]


def entrants(count: int, rng: random.Random | None = None) -> list[Entrant]:
    rng = rng or random.Random(count)
    return [Entrant(f"p{i:02d}", f"player{i:02d}", float(rng.randint(1200, 2200))) for i in range(count)]


def two_seat_by_rating(rng: random.Random, draw_rate: float = 0.15) -> Play:
    """Win/draw/loss with the Elo expectation of the seats' ratings."""

    def play(state: State, round_number: int, game: Game) -> Result:
        a, b = (state.entrant(p).rating for p in game.seats)
        expected = 1 / (1 + 10 ** ((b - a) / 400))
        roll = rng.random()
        if roll < draw_rate:
            return Result((1, 1))
        return Result((1, 2)) if rng.random() < expected else Result((2, 1))

    return play


def table_by_score(rng: random.Random) -> Play:
    """A random score per seat; ranks by score (ties share)."""

    def play(state: State, round_number: int, game: Game) -> Result:
        scores = tuple(rng.randint(0, 12) for _ in game.seats)
        ranks = tuple(1 + sum(1 for o in scores if o > s) for s in scores)
        return Result(ranks, scores)

    return play


def run(config: Config, people: list[Entrant], play: Play, max_steps: int = 10_000) -> State:
    state = engine.next_round(engine.start(config, people))
    for _ in range(max_steps):
        if state.finished:
            return state
        rnd = state.current
        assert rnd is not None
        pending = [g for g in rnd.games if g.result is None and not g.bye]
        for game in pending:
            state = engine.record(state, rnd.number, game.board, game.decider, play(state, rnd.number, game))
        state = engine.next_round(state)
    raise AssertionError("the tournament did not finish")
