"""GameMeta's seat lookup (asked on every move, cached per metadata): a player's seats in order,
none for a spectator, the same answer on every call."""

from __future__ import annotations

import dataclasses

from gateway.games import GameMeta


def test_seats_of_a_player_with_two_seats_a_player_and_a_spectator() -> None:
    meta = GameMeta(
        game_id="g1",
        game="coloursquare",
        players=(("p-a", "a", False), ("p-b", "b", True), ("p-a", "a", False)),
        options=b"",
        per_move_s=30.0,
        rated=False,
        origin="test",
        created_at=0.0,
    )
    assert meta.seats_of("p-a") == (0, 2)
    assert meta.seats_of("p-b") == (1,)
    assert meta.seats_of("p-c") == ()
    assert meta.seats_of("p-a") == (0, 2)  # cached: the same answer
    assert meta.visible_to("p-c")  # not private: anyone may watch
    # The cache is no field: equality and copies are the metadata's alone.
    assert meta == dataclasses.replace(meta) and meta.seats_of("p-b") == (1,)
