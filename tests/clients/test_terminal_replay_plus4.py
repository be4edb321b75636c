"""The terminal replay's Plus 4 board at a step is the server's view of that version drawn as a
live board is: the frame, the scores and the discs each player has left (a view carries them; the
events alone did not). That the views are the rules' state after every push, in the rounds mode,
is tests/clients/test_sdk_replay_views.py's."""

from __future__ import annotations

import random

from rich.console import Console
from tafel.by_game.base import Cursor, Seating
from tafel.by_game.plus4 import render as render_plus4
from tafel.cli.replay import ReplayApp
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2
from tafel_rules.plus4 import RULES, Mode, Plus4Options

from services.host.codec import GameEnvelope
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


def _plain(renderable: object) -> str:
    console = Console(width=100, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_the_replay_draws_each_steps_view_or_says_it_shows_the_final_position() -> None:
    """Step v draws views[v] (with the step's push marked); without views, the final position is
    shown and said to be the final one."""
    rng = random.Random(3)
    state = RULES.new_game(Plus4Options(Mode.POINTS, 3), 2, 0)
    views = [games_pb2.GameView(plus4=CODEC.view_to_proto(RULES.view(state, None)))]
    events = [games_pb2.GameEvent(version=0, created=games_pb2.GameCreated(game="plus4", seats=2))]
    for version in (1, 2):
        seat = state.to_move
        assert seat is not None
        legal = RULES.legal_moves(state, seat)
        state, raw = RULES.apply_move(state, seat, legal[rng.randrange(len(legal))])
        events.extend(GameEnvelope(CODEC).events_to_union(list(raw), version))
        views.append(games_pb2.GameView(plus4=CODEC.view_to_proto(RULES.view(state, None))))
    record = play_pb2.GameRecord(game_id="g", game="plus4")
    final = play_pb2.GetGameResponse(view=views[-1])
    replay = ReplayApp(record, final, events, views)
    replay.at = 1  # the first push
    first = _plain(replay.board())
    assert "move 1 of at most" in first and "last push" in first and "final position" not in first
    replay.at = 0
    assert "move 0 of at most" in _plain(replay.board())
    kept_none = ReplayApp(record, final, events, [])
    assert "final position:" in _plain(kept_none.board()) and "move 2 of at most" in _plain(kept_none.board())
