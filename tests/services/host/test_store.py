"""The Redis game store's scripts against a real Redis: version checks, retries, batching."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from redis.asyncio import Redis

from kit.redis.keys import clock_key, game_shard, meta_key, shard_tag
from kit.redis.layer import RedisLayer
from kit.redis.pipe import command
from kit.redis.pubsub import PubSub
from services.host.encoded import deadline_field
from services.host.store import (
    ClockArm,
    Committed,
    Conflict,
    GameStore,
    Missing,
    NewEvent,
    Replayed,
    StoredGame,
    game_keys,
)


def new_game_id() -> str:
    return f"s-{uuid.uuid4().hex[:12]}"


async def create(store: GameStore, game_id: str) -> None:
    result = await store.create(
        game_id=game_id,
        request_id="create",
        game="test",
        seats=2,
        options=b"opts",
        state=b"state0",
        created=NewEvent("0-1", b"created"),
        response=b"created-response",
        publish=b"batch0",
    )
    assert isinstance(result, Committed)


async def commit(store: GameStore, game_id: str, version: int, request_id: str, *, over: bool = False):  # type: ignore[no-untyped-def]
    return await store.commit(
        game_id=game_id,
        expected_version=version,
        request_id=request_id,
        state=f"state{version + 1}".encode(),
        events=[NewEvent(f"{version + 1}-1", b"e1"), NewEvent(f"{version + 1}-2", b"e2")],
        response=f"answer-{request_id}".encode(),
        over=over,
        publish=b"batch",
        action=b"action",
    )


async def test_the_first_answer_keeps_its_request_digest_the_status_and_the_window(redis: Redis) -> None:
    store = GameStore(RedisLayer.around(redis), live_ttl_s=600, finished_ttl_s=60)
    game_id = new_game_id()
    created = [NewEvent("0-1", b"created"), NewEvent("0-2", b"opening")]

    async def create_it() -> Any:
        return await store.create(
            game_id=game_id, request_id="c", game="test", seats=2, options=b"", state=b"s0", created=created,
            response=b"r0", publish=b"b0", status=b"status0", window_from=0,
        )

    assert isinstance(await create_it(), Committed)
    assert await create_it() == Replayed(b"r0")  # the creation's retry: its first answer
    loaded = await store.load(game_id)
    assert isinstance(loaded, StoredGame) and loaded.window_from == 0 and loaded.last_event_id == "0-2"
    committed = await store.commit(
        game_id=game_id, expected_version=0, request_id="a", state=b"s1", events=[NewEvent("1-1", b"e")],
        response=b"answer", over=False, publish=b"b", action=b"act", status=b"status1", digest=b"d-a",
        window_from=None,
    )
    assert isinstance(committed, Committed)
    # A retry sees the digest of the request the answer is for (the service compares it).
    assert await store.load(game_id, "a") == Replayed(b"answer", b"d-a")
    again = await store.commit(
        game_id=game_id, expected_version=0, request_id="a", state=b"x", events=[], response=b"other",
        over=False, publish=b"b", action=b"act", status=b"s", digest=b"d-other",
    )
    assert again == Replayed(b"answer", b"d-a")
    loaded = await store.load(game_id)
    assert isinstance(loaded, StoredGame) and loaded.window_from is None and loaded.version == 1
    # The answers are kept in the state hash, beside the digest.
    keys = game_keys(game_id)
    assert await redis.hmget(keys.state, "r:a", "r:a#") == [b"answer", b"d-a"]
    rows = await store.read_stream(game_id)
    assert [(r.event_id, r.status) for r in rows] == [("0-1", b"status0"), ("0-2", b"status0"), ("1-1", b"status1")]
    assert await store.end_of_stream(game_id) == ("1-1", False)
    assert await store.end_of_stream(new_game_id()) is None
    await store.layer.close()


def test_keys_share_one_cluster_slot_per_game() -> None:
    keys = game_keys("abc")
    tags = {key[key.index("{") : key.index("}") + 1] for key in (keys.state, keys.events, keys.channel)}
    assert tags == {shard_tag(game_shard("abc"))}


def test_commands_are_packed_as_resp() -> None:
    assert command("SET", b"k", 5) == b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n5\r\n"


async def test_commit_checks_version_and_drops_repeated_request_ids(redis: Redis) -> None:
    store = GameStore(RedisLayer.around(redis), live_ttl_s=600, finished_ttl_s=60)
    game_id = new_game_id()
    await create(store, game_id)
    assert isinstance(await commit(store, game_id, 0, "a"), Committed)
    assert await commit(store, game_id, 0, "a") == Replayed(b"answer-a")  # retry: first answer
    assert await commit(store, game_id, 0, "b") == Conflict(1)  # stale version
    assert await commit(store, game_id, 5, "a") == Replayed(b"answer-a")  # id wins over version
    loaded = await store.load(game_id)
    assert isinstance(loaded, StoredGame)
    assert (loaded.version, loaded.state, loaded.last_event_id, loaded.over) == (1, b"state1", "1-2", False)
    assert await store.read_events(game_id) == [("0-1", b"created"), ("1-1", b"e1"), ("1-2", b"e2")]
    assert await store.read_actions(game_id) == [b"action"]
    assert isinstance(await commit(store, new_game_id(), 0, "x"), Missing)
    await store.layer.close()


async def test_the_record_reads_every_action_in_order_a_move_without_events_too(redis: Redis) -> None:
    """A game keeps its actions in its event stream (a move without events gets an entry of its
    own, which watchers never see)."""
    store = GameStore(RedisLayer.around(redis), live_ttl_s=600, finished_ttl_s=60)
    game_id = new_game_id()
    await create(store, game_id)

    async def act(version: int, events: list[NewEvent]) -> None:
        result = await store.commit(
            game_id=game_id, expected_version=version, request_id=f"r{version}", state=b"s", events=events,
            response=b"a", over=False, publish=b"b", action=f"action{version}".encode(),
        )
        assert isinstance(result, Committed)

    await act(0, [NewEvent("1-1", b"e1"), NewEvent("1-2", b"e2")])
    await act(1, [])
    await act(2, [NewEvent("3-1", b"e3")])
    assert await store.read_actions(game_id) == [b"action0", b"action1", b"action2"]
    assert await store.read_events(game_id) == [("0-1", b"created"), ("1-1", b"e1"), ("1-2", b"e2"), ("3-1", b"e3")]
    assert await store.read_events(game_id, "1-2") == [("3-1", b"e3")]
    assert await store.end_of_stream(game_id) == ("3-1", False)
    await store.layer.close()


async def test_finished_games_get_the_short_ttl(redis: Redis) -> None:
    store = GameStore(RedisLayer.around(redis), live_ttl_s=600, finished_ttl_s=30)
    game_id = new_game_id()
    await create(store, game_id)
    await commit(store, game_id, 0, "a", over=True)
    for key in (game_keys(game_id).state, game_keys(game_id).events):  # (the actions are in the events)
        assert 0 < await redis.ttl(key) <= 30
    await store.layer.close()


async def pttls(redis: Redis, keys: list[str]) -> list[int]:
    return [int(await redis.pttl(key)) for key in keys]


async def test_live_ttls_are_set_at_the_first_move_and_refreshed_only_when_a_sixteenth_has_passed(
    redis: Redis,
) -> None:
    """Every key of a live game keeps at least 15/16 of the live TTL after every move (and never
    more than it) without an EXPIRE on each key every move (lua/rules/commit.lua)."""
    store = GameStore(RedisLayer.around(redis), live_ttl_s=600, finished_ttl_s=60)
    game_id = new_game_id()
    keys = game_keys(game_id)
    every = [keys.state, keys.events]  # (the answers are in the state hash, the actions in the events)
    result = await store.create(
        game_id=game_id, request_id="", game="test", seats=2, options=b"", state=b"s0",
        created=NewEvent("0-1", b"created"), response=b"r0", publish=b"b0",
    )
    assert isinstance(result, Committed)
    assert isinstance(await commit(store, game_id, 0, "a"), Committed)
    assert all(600_000 * 15 / 16 < ttl <= 600_000 for ttl in await pttls(redis, every))
    # Lowered by hand below the line but above it for the rest: the next move leaves them alone...
    for key in every:
        await redis.pexpire(key, 590_000)
    assert isinstance(await commit(store, game_id, 1, "b"), Committed)
    assert all(580_000 < ttl <= 590_000 for ttl in await pttls(redis, every))
    # ...and once the state key has less than 15/16 left, every key gets the full TTL again.
    for key in every:
        await redis.pexpire(key, 560_000)
    assert isinstance(await commit(store, game_id, 2, "c"), Committed)
    assert all(590_000 < ttl <= 600_000 for ttl in await pttls(redis, every))
    await store.layer.close()


async def test_the_clock_and_metadata_ttls_follow_the_same_rule(redis: Redis) -> None:
    store = GameStore(RedisLayer.around(redis), live_ttl_s=600, finished_ttl_s=60)
    game_id = new_game_id()
    meta = meta_key(game_id)
    await redis.hset(meta, "g", "test")
    await create(store, game_id)

    async def move(version: int, now_ms: int, to_act: str = "1") -> Any:
        return await store.commit(
            game_id=game_id, expected_version=version, request_id=f"r{version}", state=b"s",
            events=[NewEvent(f"{version + 1}-1", b"e")], response=b"a", over=to_act == "", publish=b"b",
            action=b"act", clock=ClockArm(to_act=to_act, per_move_ms=1000, now_ms=now_ms, ttl_s=1600, keep_meta=True),
        )

    start = 1_000_000_000_000
    assert await move(0, start) == Committed(start + 1000)
    assert all(1_500_000 < ttl <= 1_600_000 for ttl in await pttls(redis, [clock_key(game_id), meta]))
    for key in (clock_key(game_id), meta):
        await redis.pexpire(key, 1_000_000)
    # 99 s later (under a sixteenth of 1,600 s): armed, TTLs left alone; at 100 s: refreshed.
    assert await move(1, start + 99_000) == Committed(start + 100_000)
    assert all(990_000 < ttl <= 1_000_000 for ttl in await pttls(redis, [clock_key(game_id), meta]))
    assert await move(2, start + 100_000) == Committed(start + 101_000)
    assert all(1_590_000 < ttl <= 1_600_000 for ttl in await pttls(redis, [clock_key(game_id), meta]))
    await store.layer.close()


async def test_the_kept_answer_carries_the_armed_deadline_the_callers_or_one_encoded_in_lua(redis: Redis) -> None:
    """A retry after the game moved on is answered from the kept answer, which carries the deadline
    armed with it: the caller's encoded field when the deadline is the one it expected (now +
    per-move time), else the one Lua encodes (a simultaneous round keeps its deadline), and both
    encode what encoded.deadline_field does."""
    store = GameStore(RedisLayer.around(redis), live_ttl_s=600, finished_ttl_s=60)
    game_id = new_game_id()
    await create(store, game_id)
    start = 1_764_000_000_123  # milliseconds with a remainder: the Lua encoder writes the nanos

    async def move(version: int, now_ms: int, to_act: str, stamp: bytes = b"") -> Any:
        clock = ClockArm(to_act=to_act, per_move_ms=30_000, now_ms=now_ms, ttl_s=1600, stamp=stamp)
        return await store.commit(
            game_id=game_id, expected_version=version, request_id=f"r{version}", state=b"s",
            events=[NewEvent(f"{version + 1}-1", b"e")], response=b"a", over=False, publish=b"b",
            action=b"act", clock=clock,
        )

    assert await move(0, start, "0,1") == Committed(start + 30_000)
    # One seat of the round acted: the other's turn keeps the round's deadline, not now + 30 s, so
    # the caller's stamp (for now + 30 s; a wrong one here, to show it is not used) is not the answer's.
    assert await move(1, start + 5_000, "1", stamp=b"not-used") == Committed(start + 30_000)
    assert await move(2, start + 7_000, "0") == Committed(start + 37_000)
    kept = [await store.load(game_id, f"r{version}") for version in range(3)]
    assert kept == [Replayed(b"a" + deadline_field(d)) for d in (start + 30_000, start + 30_000, start + 37_000)]
    await store.layer.close()


async def test_publish_carries_the_batch(redis: Redis, redis_url: str) -> None:
    # Through the platform's own pub/sub: on a cluster the game's channel is a shard channel
    # (SPUBLISHed by the commit), which a plain SUBSCRIBE would never see.
    store = GameStore(RedisLayer.around(redis), live_ttl_s=600, finished_ttl_s=60)
    game_id = new_game_id()
    await create(store, game_id)
    pubsub = PubSub(redis_url)
    pubsub.start()
    received: asyncio.Queue[bytes] = asyncio.Queue()
    subscription = pubsub.subscribe(game_keys(game_id).channel, lambda _channel, payload: received.put_nowait(payload))
    try:
        await subscription.ready()  # subscribed before the commit
        await commit(store, game_id, 0, "a")
        assert await asyncio.wait_for(received.get(), 10) == b"batch"  # (a busy machine is slow)
    finally:
        subscription.cancel()
        await pubsub.close()
        await store.layer.close()


async def test_many_concurrent_commits_batch_and_each_applies_once(redis: Redis) -> None:
    store = GameStore(RedisLayer.around(redis), live_ttl_s=600, finished_ttl_s=60)
    games = [new_game_id() for _ in range(50)]
    for game_id in games:
        await create(store, game_id)
    # Every game gets the same move twice (a retry) and a conflicting one, all in one turn.
    calls = []
    for game_id in games:
        calls += [commit(store, game_id, 0, "m"), commit(store, game_id, 0, "m"), commit(store, game_id, 0, "z")]
    results = await asyncio.gather(*calls)
    for i in range(len(games)):
        first, retry, other = results[3 * i : 3 * i + 3]
        assert isinstance(first, Committed) and retry == Replayed(b"answer-m") and other == Conflict(1)
    await store.layer.close()


async def test_script_cache_flush_is_survived(redis: Redis) -> None:
    store = GameStore(RedisLayer.around(redis), live_ttl_s=600, finished_ttl_s=60)
    game_id = new_game_id()
    await create(store, game_id)
    await redis.script_flush()
    assert isinstance(await commit(store, game_id, 0, "a"), Committed)
    await store.layer.close()
