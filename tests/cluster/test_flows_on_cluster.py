"""The platform on a real Redis Cluster (3 masters, 3 replicas), as `make run REDIS_CLUSTER=1` starts
it, through two gateways and the SDK: accounts, rooms, tournaments, a whole matched game and a turn
clock firing (the clocks are sharded with the games, docs/cluster.md). A CROSSSLOT anywhere on these
paths fails the call (UNAVAILABLE), so these tests are the call-site audit."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from tafel.client import TafelClient
from tafel.play.v1 import tournaments_pb2 as T

from tests.clients.test_sdk import test_two_sdk_players_matchmake_and_play_to_the_end as play_a_matched_game
from tests.platforms import ENV
from tools.platform import Platform


@pytest.fixture(scope="module")
def cluster_platform(cluster_url: str) -> Iterator[Platform]:
    running = Platform(
        redis_url=cluster_url, gateways=2, fixed_ports=False, extra_env=ENV, bot_pool=False, games=("connect4", "coloursquare")
    ).start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
async def two(cluster_platform: Platform) -> AsyncIterator[list[TafelClient]]:
    """One client on each gateway."""
    clients = [await TafelClient.connect([address]) for address in cluster_platform.gateway_addresses]
    try:
        yield clients
    finally:
        for client in clients:
            await client.close()


async def test_accounts_across_gateways(two: list[TafelClient]) -> None:
    name = f"ada{uuid.uuid4().hex[:8]}"
    registered = await two[0].register(name, "correct horse battery")
    signed_in = await two[1].sign_in(name, "correct horse battery")
    assert signed_in.player_id == registered.player_id
    assert (await two[1].me()).player_id == registered.player_id


async def test_a_room_across_gateways(two: list[TafelClient]) -> None:
    host, guest = two
    await host.sign_in_as_guest()
    await guest.sign_in_as_guest()
    # Three seats, two taken: the join that fills a room starts its game, which needs the clocks.
    room = await host.create_room("coloursquare", seats=3, per_move_s=30)
    joined = await guest.join_room(room.code)
    assert joined.code == room.code and len(joined.players) == 2
    assert len((await host.get_room(room.code)).players) == 2


async def test_a_tournament_and_a_leaderboard(two: list[TafelClient]) -> None:
    organiser, player = two
    await organiser.sign_in_as_guest()
    await player.sign_in_as_guest()
    created = await organiser.create_tournament(
        name="on a cluster", game="connect4", format=T.TOURNAMENT_FORMAT_SWISS, rounds=3
    )
    joined = await player.join_tournament(created.tournament_id)
    assert joined.tournament_id == created.tournament_id
    assert created.tournament_id in {t.tournament_id for t in await organiser.list_tournaments()}
    board = await player.leaderboard("connect4")
    assert board.total == len(board.entries)  # read from the rating pool's slot


async def test_a_matched_game_is_played_on_the_cluster(cluster_platform: Platform) -> None:
    await asyncio.wait_for(play_a_matched_game(cluster_platform, "connect4"), timeout=12)


async def test_a_turn_clock_fires_once_on_the_cluster(two: list[TafelClient]) -> None:
    """Nobody moves: the sweepers of both gateways (one claim per shard) time the first seat out,
    exactly once, and the game ends on time."""
    for client in two:
        await client.sign_in_as_guest()
    # A per-move time no other test here uses, so these two tickets meet only each other.
    matches = await asyncio.gather(*(c.find_match("connect4", per_move_s=0.75) for c in two))
    game_id = matches[0].game_id
    assert game_id == matches[1].game_id

    async def events() -> list[str]:
        return [e.WhichOneof("kind") or "" async for e in two[1].watch(game_id)]

    kinds = await asyncio.wait_for(events(), timeout=15)
    assert kinds == ["created", "timed_out", "ended"]
    record = await two[0].get_record(game_id)
    assert [(a.timed_out, a.seat) for a in record.actions] == [(True, 0)]
    assert record.outcome.reason == "TIMEOUT" and list(record.outcome.winners) == [1]
