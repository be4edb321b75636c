"""The pipelined Redis connection (kit/redis/pipe.py) against a real Redis: a call that gets no
answer in time fails (and everything in flight with it), the next call reconnects; calls that are
answered are never expired by the connection's one watchdog timer, however they are spaced."""

from __future__ import annotations

import asyncio
import time

import pytest
from redis.asyncio import Redis
from redis.exceptions import TimeoutError as RedisTimeoutError

from kit.redis.pipe import RedisPipe
from tools.redis_server import start_redis


async def test_a_call_without_an_answer_in_time_fails_and_the_next_reconnects() -> None:
    server = start_redis()  # its own: the pause holds every client of the server
    pipe = RedisPipe(server.url, timeout_s=0.3)
    other = Redis.from_url(server.url)
    try:
        assert await pipe.call("PING") == b"PONG"
        await other.execute_command("CLIENT", "PAUSE", 1500, "ALL")  # Redis holds every reply
        started = time.monotonic()
        with pytest.raises(RedisTimeoutError):
            await asyncio.gather(pipe.call("PING"), pipe.call("PING"))
        assert time.monotonic() - started < 1.2  # by the deadline, not by the pause's end
        await other.execute_command("CLIENT", "UNPAUSE")
        assert await pipe.call("PING") == b"PONG"
    finally:
        await pipe.close()
        await other.aclose()
        server.stop()


async def test_answered_calls_spaced_across_the_watchdog_never_expire(redis_url: str) -> None:
    pipe = RedisPipe(redis_url, timeout_s=0.3)
    try:
        for _ in range(8):  # 8 x 0.12 s: the watchdog fires between and during calls
            replies = await asyncio.gather(*(pipe.call("PING") for _ in range(20)))
            assert replies == [b"PONG"] * 20
            await asyncio.sleep(0.12)
    finally:
        await pipe.close()
