"""Records.write against a real Redis (one, or a cluster under TAFEL_TEST_REDIS=cluster): the
record and its index entries (one round trip on one Redis, the record first on a cluster) are
written once, whichever replica writes first; a second write returns the record that stands."""

from __future__ import annotations

import time
from typing import Any

from redis.asyncio import Redis
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2

from gateway.games import GameMeta
from gateway.records import Records
from kit.redis.game_reads import GameReads
from kit.redis.keys import game_keys, record_key, records_index_key
from kit.redis.layer import RedisLayer
from tests.gateway.harness import new_id


def meta_of(game_id: str, players: tuple[str, str]) -> GameMeta:
    return GameMeta(
        game_id=game_id,
        game="connect4",
        players=tuple((p, p, False) for p in players),
        options=b"",
        per_move_s=30.0,
        rated=True,
        origin="test",
        created_at=time.time() - 60,
    )


async def played(redis: Redis, game_id: str, ended_ms: int) -> None:
    # What the commit script writes: each move's action on its first event stream entry.
    for version, (seat, at) in enumerate(((0, ended_ms - 2_000), (1, ended_ms - 1_000), (0, ended_ms)), 1):
        action = games_pb2.RecordedAction(seat=seat, version=version)
        action.at.FromMilliseconds(at)
        await redis.xadd(game_keys(game_id).events, {"a": action.SerializeToString()}, id=f"{version}-0")


async def test_a_record_and_its_index_are_written_once_by_whichever_replica_is_first(
    redis: Redis, layer: RedisLayer
) -> None:
    game_id, a, b = new_id(), new_id(), new_id()
    ended_ms = int(time.time() * 1000) - 5_000
    await played(redis, game_id, ended_ms)
    meta = meta_of(game_id, (a, b))
    first_outcome = games_pb2.Outcome(winners=[0])
    first = await Records(layer, GameReads(layer)).write(meta, first_outcome)
    assert first.ended_at.ToMilliseconds() == ended_ms and len(first.actions) == 3
    # Another replica ends the same game (a different outcome only to tell the two apart): the
    # first record stands and is what it returns.
    second = await Records(layer, GameReads(layer)).write(meta, games_pb2.Outcome(winners=[1]))
    assert second == first
    stored = await redis.get(record_key(game_id))
    assert isinstance(stored, bytes) and play_pb2.GameRecord.FromString(stored) == first
    for player_id in (a, b):
        for game in ("", "connect4"):
            assert await redis.zrange(records_index_key(player_id, game), 0, -1, withscores=True) == [
                (game_id.encode(), float(ended_ms))
            ]
    for game in ("", "connect4"):  # every game's indexes: other tests' games are in them too
        assert await redis.zscore(records_index_key("", game), game_id) == float(ended_ms)


async def test_a_game_without_actions_is_indexed_at_the_time_of_the_record_that_stands(
    redis: Redis, layer: RedisLayer
) -> None:
    game_id, a, b = new_id(), new_id(), new_id()
    meta = meta_of(game_id, (a, b))
    first = await Records(layer, GameReads(layer)).write(meta, games_pb2.Outcome(winners=[0]))
    again = await Records(layer, GameReads(layer)).write(meta, games_pb2.Outcome(winners=[1]))
    assert again == first and not first.actions
    assert await redis.zscore(records_index_key(a), game_id) == float(first.ended_at.ToMilliseconds())


class Counting:
    """A RedisLayer that records the round trips made through it (call: one, many: one batch)."""

    def __init__(self, layer: RedisLayer) -> None:
        self._layer = layer
        self.trips: list[list[tuple[Any, ...]]] = []

    async def call(self, *command: Any) -> Any:
        self.trips.append([command])
        return await self._layer.call(*command)

    async def many(self, commands: Any) -> Any:
        self.trips.append(list(commands))
        return await self._layer.many(commands)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._layer, name)


async def test_the_ends_bookkeeping_and_companions_go_in_the_records_round_trip(
    redis: Redis, layer: RedisLayer
) -> None:
    """On one Redis the record, its index, what the companions store and the `then` steps are one
    batch, in that order (any part of it that lands is a prefix); on a cluster, step by step after
    the record."""
    game_id, a, b = new_id(), new_id(), new_id()
    await played(redis, game_id, int(time.time() * 1000) - 5_000)
    counting = Counting(layer)
    records = Records(counting, GameReads(layer))  # type: ignore[arg-type]
    companion_key, first_key, second_key = f"test:{{{game_id}}}:c", f"test:{new_id()}:1", f"test:{new_id()}:2"
    records.companions.append(lambda record: [("SET", companion_key, record.game_id)])
    then = ([("ZADD", first_key, 1, game_id)], [("SET", second_key, "done")])
    await records.write(meta_of(game_id, (a, b)), games_pb2.Outcome(winners=[0]), then=then)
    assert await redis.get(companion_key) == game_id.encode()
    assert await redis.zscore(first_key, game_id) == 1 and await redis.get(second_key) == b"done"
    sent = [command for trip in counting.trips for command in trip]
    assert sent[0][:2] == ("SET", record_key(game_id))
    assert sent[-3:] == [("SET", companion_key, game_id), *then[0], *then[1]]
    assert len(counting.trips) == (4 if layer.cluster else 1)
    await redis.delete(companion_key, first_key, second_key)
