"""A replay's positions come from the server (GetGameRecord include_views, rebuilt by each game's
rules service from the recorded actions): the view at every version is the rules' own view of that
version's position, also across take-backs (twice, the second over the first) and for a game of
dice (its seed kept by the store); without include_views there are none, and once the game's
positions are no longer kept the record still stands, without views. Real platform, SDK only."""

from __future__ import annotations

import asyncio
from typing import Any

import redis.asyncio as aioredis
from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2
from tafel_rules.connect4 import RULES as CONNECT4
from tafel_rules.connect4 import Options as Connect4Options
from tafel_rules.plus4 import RULES as PLUS4
from tafel_rules.plus4 import Mode, Plus4Options

from kit.redis.keys import game_keys
from services.connect4.codec import CODEC as CONNECT4_CODEC
from services.host.codec import GameEnvelope
from services.host.replay import positions
from services.plus4.codec import CODEC as PLUS4_CODEC
from tools.platform import Platform


async def _clients(platform: Platform, count: int) -> list[TafelClient]:
    out = []
    for _ in range(count):
        client = await TafelClient.connect(platform.gateway_addresses)
        await client.sign_in_as_guest()
        out.append(client)
    return out


async def _room(players: list[TafelClient], game: str, options: Any = None) -> tuple[str, list[int]]:
    """An unrated room game of `players` (a take-back is for unrated games): its id and their seats."""
    host, *guests = players
    room = await host.create_room(game, options, seats=len(players), per_move_s=60)
    for guest in guests:
        await guest.join_room(room.code)
    game_id = (await host.wait_room_started(room.code)).game_id
    return game_id, [(await p.get_game(game_id)).seat for p in players]


def _expected(rules: Any, codec: Any, initial: Any, record: play_pb2.GameRecord) -> list[games_pb2.GameView]:
    """The rules' own spectator view after every version of `record`, replayed here."""
    states = positions(rules, GameEnvelope(codec), initial, list(record.actions))
    return [GameEnvelope(codec).view_to_union(rules.view(state, None)) for state in states]


async def test_connect_four_views_follow_every_version_across_take_backs(platform: Platform) -> None:
    players = await _clients(platform, 2)
    try:
        game_id, seats = await _room(players, "connect4")
        by_seat = {seat: client for client, seat in zip(players, seats, strict=True)}
        version = 0

        async def drop(column: int) -> None:
            nonlocal version
            state = await by_seat[0].get_game(game_id)
            mover = by_seat[state.summary.status.to_act[0]]
            answer = await mover.submit_move(game_id, connect4_pb2.Move(column=column), expected_version=version)
            version = answer.status.version

        async def take_back() -> None:
            nonlocal version
            state = await by_seat[0].get_game(game_id)
            asker = by_seat[1 - state.summary.status.to_act[0]]  # the one who moved last
            other = by_seat[state.summary.status.to_act[0]]
            await asker.make_offer(game_id, "takeback")
            await other.answer_offer(game_id, "takeback", True)
            version = (await by_seat[0].get_game(game_id)).summary.status.version

        for column in (3, 4, 3, 2):
            await drop(column)
        await take_back()
        for column in (6, 5):
            await drop(column)
        await take_back()
        await drop(0)
        await by_seat[0].resign(game_id)

        record, views = await players[1].get_replay(game_id)
        taken_back = [a for a in record.actions if a.WhichOneof("action") == "taken_back_to"]
        assert len(taken_back) == 2, "the game was played with two take-backs"
        assert len(views) == len(record.actions) + 1
        expected = _expected(CONNECT4, CONNECT4_CODEC, CONNECT4.new_game(Connect4Options(), 2, 0), record)
        for at, (view, rules_view) in enumerate(zip(views, expected, strict=True)):
            assert view == rules_view, f"version {at}"
        assert views[0].connect4.moves == "" and not any(column.seats for column in views[0].connect4.board)
        # After the take-backs the board holds the drops that stood: a take-back's version shows the
        # position it went back to.
        back = taken_back[0].version
        assert views[back] == views[taken_back[0].taken_back_to]
        assert views[-1] == (await players[0].get_game(game_id)).view  # the server's final view
        # Asked without include_views, the record comes alone.
        assert record == await players[0].get_record(game_id)
        plain = await players[0]._call(players[0].games.GetGameRecord, play_pb2.GetGameRecordRequest(game_id=game_id))
        assert plain.record == record and not plain.views
    finally:
        for client in players:
            await client.close()


async def test_plus4_views_are_the_rules_state_after_every_push(platform: Platform) -> None:
    players = await _clients(platform, 2)
    try:
        options = Plus4Options(Mode.ROUNDS, 2)
        game_id, seats = await _room(players, "plus4", PLUS4_CODEC.options_to_proto(options))
        await asyncio.wait_for(
            asyncio.gather(
                *(
                    play_game(c, game_id, seat, strategy_for("plus4", 1, seed=seat))
                    for c, seat in zip(players, seats, strict=True)
                )
            ),
            timeout=180,
        )
        record, views = await players[0].get_replay(game_id)
        assert len(record.actions) > 4 and len(views) == len(record.actions) + 1
        expected = _expected(PLUS4, PLUS4_CODEC, PLUS4.new_game(options, 2, 0), record)
        for at, (view, rules_view) in enumerate(zip(views, expected, strict=True)):
            assert view == rules_view, f"version {at}"
        assert [v.plus4.moves_made for v in views[:5]] == [0, 1, 2, 3, 4]
    finally:
        for client in players:
            await client.close()


async def test_colour_square_views_replay_the_dice_and_outlive_nothing(platform: Platform) -> None:
    players = await _clients(platform, 2)
    try:
        game_id, seats = await _room(players, "coloursquare")
        await asyncio.wait_for(
            asyncio.gather(
                *(
                    play_game(c, game_id, seat, strategy_for("coloursquare", 1, seed=seat))
                    for c, seat in zip(players, seats, strict=True)
                )
            ),
            timeout=300,
        )
        record, views = await players[0].get_replay(game_id)
        assert len(views) == len(record.actions) + 1
        # The dice of every round rolled again from the kept seed: every sheet as the player's own
        # final view shows it (a seat's view adds only what that seat sees of itself).
        final = (await players[1].get_game(game_id)).view.coloursquare
        last = views[-1].coloursquare
        assert list(last.players) == list(final.players) and last.players
        assert (last.round, last.roll, last.phase) == (final.round, final.roll, final.phase)
        rolls = {(v.coloursquare.round, v.coloursquare.roll.SerializeToString()) for v in views}
        assert len({r for r, _ in rolls}) > 1 and len(rolls) > 2, "the rounds' rolls differ"

        # Once the game's positions are gone (its keys expired), the record stands without views.
        assert platform.redis_url is not None
        redis = aioredis.from_url(platform.redis_url)
        try:
            keys = game_keys(game_id)
            await redis.delete(keys.state, keys.events)
        finally:
            await redis.aclose()
        again, none = await players[0].get_replay(game_id)
        assert again == record and none == []
    finally:
        for client in players:
            await client.close()
