"""The end of a game when a Redis write fails (a Redis Cluster failover): the last action is
committed, so nothing else comes back to the game (its clock is settled); the gateway itself must
write the record and take the game off the live lists, trying again when a write is lost in flight.
Before, one lost SET of the record left a game over in its rules state, listed live forever and
without a record (1 game in a failover run of tools/cluster_failover.py --games on Redis 7)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from gateway.actions import Actions
from gateway.records import Records
from kit.redis.keys import clocks_key, game_shard, live_key, record_key
from tests.gateway.harness import Client, Seating


async def test_a_game_ends_with_its_record_when_the_first_record_write_is_lost(
    seats: Seating, clients: list[Client]
) -> None:
    a, b, _ = clients
    records = Records(seats.directory.layer, seats.reads)
    actions = Actions(seats.directory, seats.router, seats.directory.clocks, records)
    game_id = await seats.start([a.player, b.player])
    assert await seats.redis.zscore(live_key(), game_id) is not None
    real_call = records.layer.call
    lost: list[str] = []

    async def call(*command: Any) -> Any:
        # The record's SET NX, sent on a connection that died (as the dying master's writes are).
        if command[0] == "SET" and command[1] == record_key(game_id) and not lost:
            lost.append(command[1])
            raise RedisConnectionError("redis connection lost")
        return await real_call(*command)

    real_many = records.layer.many

    async def many(commands: Any) -> Any:
        # The record's SET NX in one batch with its index entries (one Redis): the batch is lost.
        if any(c[0] == "SET" and c[1] == record_key(game_id) for c in commands) and not lost:
            lost.append(record_key(game_id))
            raise RedisConnectionError("redis connection lost")
        return await real_many(commands)

    records.layer = _Layer(seats.directory.layer, call, many)
    meta = await seats.directory.meta(game_id)
    applied = await actions.apply(meta, 0, expected_version=0, request_id="resign-1", resign=True)
    assert applied.response.status.over
    assert lost == [record_key(game_id)], "the record write was not the one that failed"
    assert await seats.redis.exists(record_key(game_id)), "the game ended without its record"
    assert await seats.redis.zscore(live_key(), game_id) is None, "the ended game is still listed live"


async def test_a_game_whose_gateway_died_before_its_record_is_finished_by_a_sweeper(
    seats: Seating, clients: list[Client]
) -> None:
    """The end committed (in the rules service's script), then the process that applied it gone
    before any of the end's writes: the finalise deadline the commit armed comes due and one of the
    running gateways' sweepers writes the record and takes the game off the live lists."""
    a, b, _ = clients
    records = Records(seats.directory.layer, seats.reads)
    actions = Actions(seats.directory, seats.router, seats.directory.clocks, records)
    game_id = await seats.start([a.player, b.player])
    real_call = records.layer.call

    async def call(*command: Any) -> Any:
        if command[0] == "SET" and command[1] == record_key(game_id):  # this process is gone
            raise RedisConnectionError("redis connection lost")
        return await real_call(*command)

    real_many = records.layer.many

    async def many(commands: Any) -> Any:
        if any(c[0] == "SET" and c[1] == record_key(game_id) for c in commands):  # in one batch
            raise RedisConnectionError("redis connection lost")
        return await real_many(commands)

    records.layer = _Layer(seats.directory.layer, call, many)
    meta = await seats.directory.meta(game_id)
    with pytest.raises(RedisConnectionError):
        await actions.apply(meta, 0, expected_version=0, request_id="resign-1", resign=True)
    assert not await seats.redis.exists(record_key(game_id))
    assert await seats.redis.zscore(live_key(), game_id) is not None
    finalise = f"{game_id}|1|"  # the end's version, no seat to act
    due_at = await seats.redis.zscore(clocks_key(game_shard(game_id)), finalise)
    assert due_at is not None and due_at > time.time() * 1000 + 20_000, "the end armed no finalise deadline"
    # Its 30 s pass at once: the deadline moved to now (the sweepers sleep at most 1 s between sweeps).
    await seats.redis.zadd(clocks_key(game_shard(game_id)), {finalise: time.time() * 1000 - 1}, xx=True)
    deadline = asyncio.get_running_loop().time() + 20
    while not await seats.redis.exists(record_key(game_id)):
        assert asyncio.get_running_loop().time() < deadline, "no sweeper finished the ended game"
        await asyncio.sleep(0.05)
    assert await seats.redis.zscore(live_key(), game_id) is None, "the ended game is still listed live"
    assert await seats.redis.zscore(clocks_key(game_shard(game_id)), finalise) is None


async def test_a_game_ended_normally_leaves_no_finalise_deadline(seats: Seating, clients: list[Client]) -> None:
    a, b, _ = clients
    actions = Actions(
        seats.directory, seats.router, seats.directory.clocks, Records(seats.directory.layer, seats.reads)
    )
    game_id = await seats.start([a.player, b.player])
    meta = await seats.directory.meta(game_id)
    applied = await actions.apply(meta, 0, expected_version=0, request_id="resign-1", resign=True)
    assert applied.response.status.over and await seats.redis.exists(record_key(game_id))
    members = await seats.redis.zrange(clocks_key(game_shard(game_id)), 0, -1)
    assert not [m for m in members if m.decode().startswith(f"{game_id}|")]


class _Layer:
    """The directory's RedisLayer with `call` and `many` replaced (the records' writes only)."""

    def __init__(self, layer: Any, call: Any, many: Any) -> None:
        self._layer = layer
        self.call = call
        self.many = many

    def __getattr__(self, name: str) -> Any:
        return getattr(self._layer, name)
