"""A game's start in the gateway's books (GameDirectory.start_game) against a real rules service
and Redis: the metadata, the first clock and the live lists in one script on one Redis (the lists
after the game's own keys on a cluster), a retried start listing the stored game, and the first
view's deadline known from the start without a clock read."""

from __future__ import annotations

from typing import Any

import pytest
from tafel.games.v1 import games_pb2

from gateway.games import PRIVATE_ORIGIN, Followup, new_game_id
from gateway.matchmaking.queue import MatchQueue
from kit.redis.keys import bucket_keys, clock_key, live_key, meta_key, player_games_key
from kit.redis.scripts import script
from tests.gateway.harness import Client, Seating, new_id
from tests.gateway.lobby_helpers import FAST


def count_trips(seats: Seating, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every Redis round trip the directory makes from now on, by kind."""
    layer = seats.directory.layer
    trips: list[str] = []
    for name in ("run", "many", "call", "start"):
        real = getattr(layer, name)

        def counted(*args: Any, _real: Any = real, _name: str = name) -> Any:
            trips.append(_name)
            return _real(*args)

        monkeypatch.setattr(layer, name, counted)
    return trips


async def test_a_start_writes_the_game_its_clock_and_its_live_lists_in_one_round_trip(
    seats: Seating, clients: list[Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, _ = clients
    trips = count_trips(seats, monkeypatch)
    game_id = await seats.start([a.player, b.player])
    assert trips == (["run", "many"] if seats.directory.layer.cluster else ["run"])
    created = int(await seats.redis.hget(meta_key(game_id), "c"))
    for key in (live_key(), live_key("connect4"), *(player_games_key(p.player_id, "live") for p in (a.player, b.player))):
        assert await seats.redis.zscore(key, game_id) == created, key
    assert 0 < await seats.redis.ttl(meta_key(game_id)) <= 3600
    # The first view's deadline: the one the start armed, with no clock read.
    del trips[:]
    summary = await seats.directory.summary(game_id, games_pb2.GameStatus(version=0, to_act=[0]))
    armed = int((await seats.redis.hmget(clock_key(game_id), "d"))[0])
    assert summary.turn_deadline.ToMilliseconds() == armed and trips == []


async def test_a_retried_start_lists_the_stored_game_at_its_creation_time(
    seats: Seating, clients: list[Client]
) -> None:
    a, b, _ = clients
    game_id = new_game_id()
    await seats.start([a.player, b.player], game_id=game_id)
    created = int(await seats.redis.hget(meta_key(game_id), "c"))
    await seats.redis.zrem(live_key(), game_id)  # the first start's listing lost (a cluster's second step)
    assert await seats.start([a.player, b.player], game_id=game_id) == game_id
    assert int(await seats.redis.hget(meta_key(game_id), "c")) == created, "the metadata was written again"
    assert await seats.redis.zscore(live_key(), game_id) == created
    assert await seats.redis.zscore(live_key("connect4"), game_id) == created


async def test_a_private_game_is_listed_only_for_its_players(seats: Seating, clients: list[Client]) -> None:
    a, b, _ = clients
    game_id = await seats.directory.start_game(
        game="connect4",
        options=games_pb2.GameOptions(),
        players=[a.player, b.player],
        per_move_s=60.0,
        rated=False,
        origin=PRIVATE_ORIGIN,
    )
    assert await seats.redis.zscore(live_key(), game_id) is None
    assert await seats.redis.zscore(live_key("connect4"), game_id) is None
    for p in (a.player, b.player):
        assert await seats.redis.zscore(player_games_key(p.player_id, "live"), game_id) is not None


async def marked_match(seats: Seating, game_id: str) -> tuple[str, Followup]:
    """A paired match in a bucket of its own and its guarded `started` call, as the matchmaker
    sends it with the game's start."""
    bucket_id = new_id()
    await seats.redis.hset(bucket_keys(bucket_id).matches, game_id, "t1,t2")
    queue = MatchQueue(seats.directory.layer, FAST)
    keys, args = queue.started_call(bucket_id, game_id, ["t1", "t2"], guard=clock_key(game_id))
    return bucket_id, Followup(script("matchmaking/started"), keys, args)


async def test_a_matched_start_marks_the_match_started_in_its_own_write(
    seats: Seating, clients: list[Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, _ = clients
    game_id = new_game_id()
    bucket_id, followup = await marked_match(seats, game_id)
    for known in (script("games/start"), followup.script):  # as after their first use
        await seats.redis.script_load(known.source)
    await seats.directory.layer.call("PING")  # connected: a first call before any connection runs alone
    trips = count_trips(seats, monkeypatch)
    await seats.start([a.player, b.player], game_id=game_id, followed_by=followup)
    marked = await seats.redis.hget(bucket_keys(bucket_id).matches, f"{game_id}|s")
    if seats.directory.layer.cluster:  # the caller marks it: not in the start's write there
        assert trips == ["start", "run", "many"] and not followup.ran and marked is None
    else:
        assert trips == ["start", "start"] and followup.ran and followup.reply == 1 and marked == b"1"


async def test_a_matched_start_whose_script_redis_lacks_does_not_mark_the_match_first(
    seats: Seating, clients: list[Client]
) -> None:
    """games/start answered NOSCRIPT (Redis restarted or flushed its scripts) while `started` was
    known: the guarded `started` in the same write finds no clock and does nothing; the start is
    then loaded and run, and the match is left for its caller to mark."""
    if seats.directory.layer.cluster:
        pytest.skip("SCRIPT FLUSH reaches one node of a cluster; there the start is not followed")
    a, b, _ = clients
    game_id = new_game_id()
    bucket_id, followup = await marked_match(seats, game_id)
    await seats.redis.script_flush()
    await seats.redis.script_load(followup.script.source)
    await seats.start([a.player, b.player], game_id=game_id, followed_by=followup)
    assert not followup.ran
    assert await seats.redis.hget(bucket_keys(bucket_id).matches, f"{game_id}|s") is None
    assert await seats.redis.exists(meta_key(game_id)) and await seats.redis.exists(clock_key(game_id))
