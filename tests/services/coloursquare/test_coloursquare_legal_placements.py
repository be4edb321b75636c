"""The view's legal placements (one die at a time) with the documented rule - different dice,
each to a listed target, no two on one target, from must_place to max_dice of them - give
exactly the legal placement lists, in games played at random to their end."""

from __future__ import annotations

import itertools
import random

from tafel_rules.coloursquare.legal import legal_placements
from tafel_rules.coloursquare.model import Move, Options, Phase, Placement, State
from tafel_rules.coloursquare.rules import RULES

from services.coloursquare.codec import CODEC


def composed(singles: tuple[Placement, ...], must: int, most: int) -> set[Move]:
    """The documented rule, as a client would apply it."""
    lists: set[Move] = set()
    for count in range(must, most + 1):
        for combo in itertools.combinations(singles, count):
            dice = [p.die for p in combo]
            targets = [p.target for p in combo]
            if len(set(dice)) == count and len(set(targets)) == count:
                lists.add(Move(tuple(combo)))
    return lists


def check(state: State, seat: int) -> None:
    view = RULES.view(state, seat)
    singles = legal_placements(view)
    assert len(CODEC.view_to_proto(view).legal_placements) == len(singles)
    legal = RULES.legal_moves(state, seat)
    if view.phase is Phase.FINAL:
        # Millions of lists: every listed placement is a legal move on its own, and so is none.
        assert Move() in legal
        assert all(Move((p,)) in legal for p in singles)
        return
    assert composed(singles, view.must_place, view.max_dice) == set(legal)


def test_legal_placements_compose_to_exactly_the_legal_moves() -> None:
    rng = random.Random(14)
    finals = 0
    for game in range(6):
        seats = 1 + game % 3
        state = RULES.new_game(Options(side="AB"[game % 2], max_rounds=200), seats, seed=game + 1)
        while RULES.to_act(state):
            for seat in sorted(RULES.to_act(state)):
                check(state, seat)
            finals += state.phase is Phase.FINAL
            seat = rng.choice(sorted(RULES.to_act(state)))
            moves = RULES.legal_moves(state, seat)
            state, _ = RULES.apply_move(state, seat, moves[rng.randrange(len(moves))])
        assert not legal_placements(RULES.view(state, 0))  # over: nothing to place
    assert finals > 0  # the final phase was checked too


def test_spectators_and_seats_not_asked_get_no_listing() -> None:
    state = RULES.new_game(Options(), 2, seed=3)
    assert legal_placements(RULES.view(state, None)) == ()
    seat = sorted(RULES.to_act(state))[0]
    placed, _ = RULES.apply_move(state, seat, RULES.legal_moves(state, seat)[0])
    assert legal_placements(RULES.view(placed, seat)) == ()
