"""kit/redis/pipe.py's RedisPipe against redis-py's asyncio client, on the move path's pattern: many
tasks of one process each making one call at a time (a commit script per move, a read per view),
in one process against one Redis, alternated round by round.

    .venv/bin/python -m tools.bench_redis_client [--tasks 200] [--calls 20000] [--rounds 3]
        [--channels 100] [--messages 20000]

RedisPipe sends every call of an event-loop turn in one write on its one connection and reads the
replies in bulk (hiredis); redis-py gives each concurrent call a pooled connection of its own (one
write and one read each). The call is an EVALSHA of a small script touching one hash, as a commit
is. Prints calls/s and this process's CPU µs a call per client, their medians and the ratios.

Then pub/sub: kit/redis/pubsub.py's PubSub against redis-py's PubSub taking --messages messages
spread over --channels channels (a game's wake-ups), published by another process; this process's
CPU µs a message received, from the first publish to the last message. Starts its own
redis-server (tools/redis_server.py).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis

from kit.redis.pipe import RedisPipe
from kit.redis.pubsub import PubSub
from tools.redis_server import start_redis

SCRIPT = "redis.call('HINCRBY', KEYS[1], 'v', 1) return redis.call('HGET', KEYS[1], 'v')"


async def timed(call: Callable[[int], Awaitable[Any]], tasks: int, calls: int) -> tuple[float, float]:
    """(calls/s, CPU µs a call) of `calls` calls spread over `tasks` concurrent tasks."""
    each = calls // tasks

    async def worker(index: int) -> None:
        for _ in range(each):
            await call(index)

    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker(i) for i in range(tasks)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    done = each * tasks
    return done / wall, cpu / done * 1e6


PUBLISHER = """
import asyncio, sys
from kit.redis.pipe import RedisPipe
async def main(url, channels, messages):
    pipe = RedisPipe(url)
    for start in range(0, messages, 1000):
        await pipe.many([("PUBLISH", f"bench:ch:{i % channels}", b"x" * 64) for i in range(start, start + 1000)])
    await pipe.close()
asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
"""


def publish(url: str, channels: int, messages: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", PUBLISHER, url, str(channels), str(messages)])


async def ours_receive(url: str, channels: int, messages: int) -> float:
    pubsub = PubSub(url)
    pubsub.start()
    got = 0
    done = asyncio.Event()

    def on_message(channel: bytes, payload: bytes) -> None:
        nonlocal got
        got += 1
        if got == messages:
            done.set()

    subscriptions = [pubsub.subscribe(f"bench:ch:{i}", on_message) for i in range(channels)]
    for subscription in subscriptions:
        await subscription.ready()
    cpu = time.process_time()
    publisher = publish(url, channels, messages)
    await done.wait()
    cpu = time.process_time() - cpu
    publisher.wait()
    await pubsub.close()
    return cpu / messages * 1e6


async def redis_py_receive(url: str, channels: int, messages: int) -> float:
    client = Redis.from_url(url)
    pubsub = client.pubsub()
    await pubsub.subscribe(*(f"bench:ch:{i}" for i in range(channels)))
    confirmed = 0
    while confirmed < channels:  # the subscribe confirmations
        if await pubsub.get_message(timeout=1.0) is not None:
            confirmed += 1
    got = 0
    cpu = time.process_time()
    publisher = publish(url, channels, messages)
    while got < messages:
        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
        if message is not None:
            got += 1
    cpu = time.process_time() - cpu
    publisher.wait()
    await pubsub.aclose()
    await client.aclose()
    return cpu / messages * 1e6


async def main(tasks: int, calls: int, rounds: int, channels: int, messages: int) -> None:
    server = start_redis()
    try:
        plain = Redis.from_url(server.url, max_connections=tasks)
        sha = await plain.script_load(SCRIPT)
        pipe = RedisPipe(server.url)
        keys = [f"bench:{i}" for i in range(tasks)]

        async def by_pipe(index: int) -> Any:
            return await pipe.call("EVALSHA", sha, 1, keys[index])

        async def by_redis_py(index: int) -> Any:
            return await plain.evalsha(sha, 1, keys[index])

        await timed(by_pipe, tasks, tasks * 10)  # connections open, code warm
        await timed(by_redis_py, tasks, tasks * 10)
        ours: list[tuple[float, float]] = []
        theirs: list[tuple[float, float]] = []
        for round_ in range(rounds):
            ours.append(await timed(by_pipe, tasks, calls))
            theirs.append(await timed(by_redis_py, tasks, calls))
            print(
                f"round {round_ + 1}: RedisPipe {ours[-1][0]:,.0f} calls/s {ours[-1][1]:.1f} µs CPU a call; "
                f"redis-py {theirs[-1][0]:,.0f} calls/s {theirs[-1][1]:.1f} µs CPU a call"
            )
        rate = statistics.median(r for r, _ in ours), statistics.median(r for r, _ in theirs)
        cpu = statistics.median(c for _, c in ours), statistics.median(c for _, c in theirs)
        print(
            f"medians: RedisPipe {rate[0]:,.0f} calls/s, {cpu[0]:.1f} µs CPU a call; redis-py {rate[1]:,.0f} calls/s, "
            f"{cpu[1]:.1f} µs; RedisPipe/redis-py calls/s {rate[0] / rate[1]:.2f}x, "
            f"redis-py/RedisPipe CPU a call {cpu[1] / cpu[0]:.2f}x"
        )
        await pipe.close()
        await plain.aclose()
        received: list[tuple[float, float]] = []
        for round_ in range(rounds):
            mine_now = await ours_receive(server.url, channels, messages)
            theirs_now = await redis_py_receive(server.url, channels, messages)
            received.append((mine_now, theirs_now))
            print(f"pub/sub round {round_ + 1}: PubSub {mine_now:.1f}, redis-py {theirs_now:.1f} µs CPU a message")
        mine, theirs_ = statistics.median(a for a, _ in received), statistics.median(b for _, b in received)
        print(f"pub/sub medians: PubSub {mine:.1f}, redis-py {theirs_:.1f} µs CPU a message: {theirs_ / mine:.2f}x")
    finally:
        server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=200, help="concurrent callers (games in flight)")
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--channels", type=int, default=100)
    parser.add_argument("--messages", type=int, default=20_000)
    args = parser.parse_args()
    asyncio.run(main(args.tasks, args.calls, args.rounds, args.channels, args.messages))
