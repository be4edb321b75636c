"""The pipelined Redis connection (kit/redis/pipe.py) against a real Redis: a call that gets no
answer in time fails (and everything in flight with it), the next call reconnects; calls that are
answered are never expired by the connection's one watchdog timer, however they are spaced;
many() answers in order, its first error reply raised after every command ran."""

from __future__ import annotations

import asyncio
import gc
import time

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
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


async def test_many_answers_in_order_and_raises_the_first_error_reply(redis_url: str) -> None:
    pipe = RedisPipe(redis_url)
    key = f"pipe-many-{time.monotonic_ns()}"
    try:
        # The first call of a pipe connects: everything goes out after that, in order.
        assert await pipe.many([("SET", key, 1), ("INCR", key), ("GET", key), ("DEL", key)]) == [b"OK", 2, b"2", 1]
        assert await pipe.many([]) == []
        with pytest.raises(ResponseError, match="not an integer"):
            await pipe.many([("SET", key, "x"), ("INCR", key), ("INCR", key), ("SET", f"{key}:after", "y")])
        # Every command ran (Redis does not stop a pipeline at an error); the connection is fine.
        assert await pipe.many([("GET", f"{key}:after"), ("DEL", key, f"{key}:after")]) == [b"y", 2]
    finally:
        await pipe.close()


async def test_many_on_a_lost_connection_fails_once_and_the_next_reconnects(redis_url: str) -> None:
    pipe = RedisPipe(redis_url)
    other = Redis.from_url(redis_url)
    loop = asyncio.get_running_loop()
    unhandled: list[dict[str, object]] = []
    gc.collect()  # what earlier tests left (a pipe never closed: its pending reader) is not this test's
    loop.set_exception_handler(lambda _, context: unhandled.append(context))
    try:
        name = f"pipe-many-{time.monotonic_ns()}"
        assert await pipe.call("CLIENT", "SETNAME", name) == b"OK"
        # The connection is killed while the batch waits behind a blocking command: all fail.
        batch = asyncio.ensure_future(pipe.many([("BLPOP", f"{name}:none", 5), ("PING",), ("PING",)]))
        await asyncio.sleep(0)  # sent
        clients = await other.client_list()
        killed = [client["id"] for client in clients if client["name"] == name]
        assert len(killed) == 1
        await other.execute_command("CLIENT", "KILL", "ID", killed[0])
        with pytest.raises(RedisConnectionError):
            await asyncio.wait_for(batch, 4)
        assert await pipe.many([("PING",), ("ECHO", "back")]) == [b"PONG", b"back"]
        del batch
        gc.collect()  # a failed future nobody retrieved would be reported now
        assert unhandled == []
    finally:
        loop.set_exception_handler(None)
        await pipe.close()
        await other.aclose()


async def test_a_cancelled_many_leaves_the_connection_in_step(redis_url: str) -> None:
    pipe = RedisPipe(redis_url)
    try:
        assert await pipe.call("PING") == b"PONG"
        waiting = asyncio.ensure_future(pipe.many([("BLPOP", f"pipe-many-{time.monotonic_ns()}", 0.3), ("ECHO", "a")]))
        await asyncio.sleep(0)  # one turn: the batch is sent, its replies not yet here
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        # The cancelled replies still arrive and are skipped: the next replies are this call's.
        assert await pipe.many([("ECHO", "b"), ("ECHO", "c")]) == [b"b", b"c"]
    finally:
        await pipe.close()
