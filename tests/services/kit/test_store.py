"""The Redis game store's scripts against a real Redis: version checks, retries, batching."""

from __future__ import annotations

import asyncio
import uuid

from redis.asyncio import Redis

from services.kit.resp import command
from services.kit.store import (
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


def test_keys_share_one_cluster_slot_per_game() -> None:
    keys = game_keys("abc")
    tags = {key[key.index("{") : key.index("}") + 1] for key in (keys.state, keys.events, keys.requests, keys.actions)}
    assert tags == {"{g:abc}"}


def test_commands_are_packed_as_resp() -> None:
    assert command("SET", b"k", 5) == b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n5\r\n"


async def test_commit_checks_version_and_drops_repeated_request_ids(redis: Redis) -> None:
    store = GameStore(redis, live_ttl_s=600, finished_ttl_s=60)
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
    await store.close()


async def test_finished_games_get_the_short_ttl(redis: Redis) -> None:
    store = GameStore(redis, live_ttl_s=600, finished_ttl_s=30)
    game_id = new_game_id()
    await create(store, game_id)
    await commit(store, game_id, 0, "a", over=True)
    for key in (game_keys(game_id).state, game_keys(game_id).events, game_keys(game_id).actions):
        assert 0 < await redis.ttl(key) <= 30
    await store.close()


async def test_publish_carries_the_batch(redis: Redis) -> None:
    store = GameStore(redis, live_ttl_s=600, finished_ttl_s=60)
    game_id = new_game_id()
    await create(store, game_id)
    pubsub = redis.pubsub()
    await pubsub.subscribe(game_keys(game_id).channel)
    await pubsub.get_message(timeout=1)  # subscribe confirmation
    await commit(store, game_id, 0, "a")
    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=2)
    assert message is not None and message["data"] == b"batch"
    await pubsub.aclose()
    await store.close()


async def test_many_concurrent_commits_batch_and_each_applies_once(redis: Redis) -> None:
    store = GameStore(redis, live_ttl_s=600, finished_ttl_s=60)
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
    await store.close()


async def test_script_cache_flush_is_survived(redis: Redis) -> None:
    store = GameStore(redis, live_ttl_s=600, finished_ttl_s=60)
    game_id = new_game_id()
    await create(store, game_id)
    await redis.script_flush()
    assert isinstance(await commit(store, game_id, 0, "a"), Committed)
    await store.close()
