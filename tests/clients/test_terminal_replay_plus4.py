"""The terminal replay's Plus 4 board at a step is the server's view of that version drawn as a
live board is: the frame, the scores and the discs each player has left (a view carries them; the
events alone did not). That the views are the rules' state after every push, in the rounds mode,
is tests/clients/test_sdk_replay_views.py's."""

from __future__ import annotations

import random

from tafel.by_game.base import Cursor, Seating
from tafel.by_game.plus4 import render as render_plus4
from tafel_rules.plus4 import RULES, Mode, Plus4Options

from services.plus4.codec import CODEC


def test_a_step_draws_the_servers_view_with_names_and_supplies() -> None:
    rng = random.Random(7)
    state = RULES.new_game(Plus4Options(Mode.POINTS, 3), 2, 0)
    for _ in range(5):
        seat = state.to_move
        assert seat is not None
        legal = RULES.legal_moves(state, seat)
        state, _events = RULES.apply_move(state, seat, legal[rng.randrange(len(legal))])
    view = CODEC.view_to_proto(RULES.view(state, None))
    table = Seating(names=["ann", "bob"], last_column=2)
    drawn = render_plus4(view, Cursor(), None, table).plain
    assert "ann" in drawn and "bob" in drawn and "discs" in drawn
    assert "last push" in drawn and "move 5 of at most" in drawn
