"""A gateway lists what it can describe: in a deployment where another gateway also serves a game
type this one has no rules service for (a partial roll-out, or tests sharing one Redis), its live
list leaves those games out instead of failing the whole listing."""

from __future__ import annotations

from tafel.play.v1 import play_pb2

from tests.gateway.harness import Client, seating, spawn_gateway, spawn_rules
from tests.keyspace import emptied


async def test_live_list_leaves_out_games_of_types_this_gateway_does_not_serve(redis_url: str) -> None:
    url = emptied(redis_url, "listing")  # a cluster's too (tests/keyspace.py)
    connect4, coloursquare = spawn_rules(url), spawn_rules(url, "coloursquare")
    gateway = spawn_gateway(url, {"connect4": connect4.address})  # no Colour Square here
    try:
        a, b = await Client(gateway.address).guest(), await Client(gateway.address).guest()
        both = {"connect4": connect4.address, "coloursquare": coloursquare.address}
        async with seating(url, both) as seats:
            c4_game = await seats.start([a.player, b.player])
            cs_game = await seats.start([a.player, b.player], game="coloursquare")
        live = await a.games.ListLiveGames(play_pb2.ListLiveGamesRequest(page_size=100), metadata=a.md)
        listed = [g.game_id for g in live.games]
        assert c4_game in listed and cs_game not in listed
        await a.close()
        await b.close()
    finally:
        gateway.stop()
        connect4.stop()
        coloursquare.stop()
