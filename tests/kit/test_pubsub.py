"""kit/redis/pubsub.py against a real Redis: shared subscriptions, patterns, confirmation, and
re-subscription (with the `again` callback) after the connection dies."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from kit.redis.pubsub import OnMessage, PubSub
from tools.redis_server import start_redis


@pytest.fixture
async def pubsub(redis_url: str) -> AsyncIterator[PubSub]:
    hub = PubSub(redis_url)
    hub.start()
    try:
        yield hub
    finally:
        await hub.close()


def collector() -> tuple[asyncio.Queue[tuple[bytes, bytes]], OnMessage]:
    queue: asyncio.Queue[tuple[bytes, bytes]] = asyncio.Queue()
    return queue, lambda channel, payload: queue.put_nowait((channel, payload))


async def got(queue: asyncio.Queue[tuple[bytes, bytes]]) -> tuple[bytes, bytes]:
    return await asyncio.wait_for(queue.get(), 5.0)


async def numsub(redis: Redis, channel: str) -> int:
    reply = await redis.pubsub_numsub(channel)
    return int(reply[0][1])


async def test_subscribers_share_a_channel_and_the_last_one_out_unsubscribes(pubsub: PubSub, redis: Redis) -> None:
    channel = f"t:ps:{uuid.uuid4().hex}"
    first, on_first = collector()
    second, on_second = collector()
    lives: list[bool] = []
    a = pubsub.subscribe(channel, on_first, on_live=lives.append)
    await a.ready()
    assert lives == [False]
    b = pubsub.subscribe(channel, on_second)
    await b.ready()  # joins the confirmed subscription at once
    assert await numsub(redis, channel) == 1  # one Redis subscription for both
    await redis.publish(channel, b"hello")
    assert await got(first) == (channel.encode(), b"hello")
    assert await got(second) == (channel.encode(), b"hello")

    a.cancel()
    await redis.publish(channel, b"again")
    assert await got(second) == (channel.encode(), b"again")
    assert first.empty()
    b.cancel()
    # Commands on the connection are ordered: once a later subscription is confirmed, the
    # UNSUBSCRIBE before it has been handled.
    marker = pubsub.subscribe(f"{channel}:marker", lambda c, p: None)
    await marker.ready()
    assert await numsub(redis, channel) == 0


async def test_a_pattern_subscription_names_each_channel(pubsub: PubSub, redis: Redis) -> None:
    prefix = f"t:ps:{uuid.uuid4().hex}"
    queue, on_message = collector()
    subscription = pubsub.subscribe(f"{prefix}:*", on_message, pattern=True)
    await subscription.ready()
    await redis.publish(f"{prefix}:one", b"1")
    await redis.publish(f"{prefix}:two", b"2")
    assert [await got(queue), await got(queue)] == [(f"{prefix}:one".encode(), b"1"), (f"{prefix}:two".encode(), b"2")]
    subscription.cancel()


async def test_a_failing_handler_does_not_stop_the_others(pubsub: PubSub, redis: Redis) -> None:
    channel = f"t:ps:{uuid.uuid4().hex}"
    queue, on_message = collector()

    def broken(channel: bytes, payload: bytes) -> None:
        raise RuntimeError("a subscriber's bug")

    await pubsub.subscribe(channel, broken).ready()
    await pubsub.subscribe(channel, on_message).ready()
    await redis.publish(channel, b"x")
    await redis.publish(channel, b"y")
    assert [await got(queue), await got(queue)] == [(channel.encode(), b"x"), (channel.encode(), b"y")]


async def test_after_a_lost_connection_it_resubscribes_and_says_so(pubsub: PubSub, redis: Redis) -> None:
    channel = f"t:ps:{uuid.uuid4().hex}"
    queue, on_message = collector()
    lives: asyncio.Queue[bool] = asyncio.Queue()
    subscription = pubsub.subscribe(channel, on_message, on_live=lives.put_nowait)
    assert await asyncio.wait_for(lives.get(), 5.0) is False
    killed = pubsub.client_id
    assert killed is not None
    await redis.execute_command("CLIENT", "KILL", "ID", killed)
    # Confirmed again on a new connection: `again` tells the subscriber to catch up.
    assert await asyncio.wait_for(lives.get(), 5.0) is True
    assert subscription.live.is_set() and pubsub.client_id != killed
    await redis.publish(channel, b"after")
    assert await got(queue) == (channel.encode(), b"after")


async def test_it_comes_back_when_redis_does() -> None:
    own = start_redis()  # its own server: this test stops and restarts it
    pubsub = PubSub(own.url)
    pubsub.start()
    try:
        queue, on_message = collector()
        lives: asyncio.Queue[bool] = asyncio.Queue()
        subscription = pubsub.subscribe("t:ps:back", on_message, on_live=lives.put_nowait)
        assert await asyncio.wait_for(lives.get(), 5.0) is False
        own.stop()  # connection refused while it is away: retried with backoff
        own = start_redis(port=own.port)
        assert await asyncio.wait_for(lives.get(), 10.0) is True
        assert subscription.live.is_set()
        back = Redis.from_url(own.url)
        try:
            await back.publish("t:ps:back", b"hello again")
        finally:
            await back.aclose()
        assert await got(queue) == (b"t:ps:back", b"hello again")
    finally:
        await pubsub.close()
        own.stop()
