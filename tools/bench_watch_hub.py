"""CPU of live-event fan-out in one gateway process: the process's pub/sub (kit/redis/pubsub.py)
feeding the watch hub (gateway/watch/hub.py) and its watchers.

    .venv/bin/python -m tools.bench_watch_hub [--games 50] [--watchers 4] [--batches 200] [--runs 3]

Starts Redis (or uses REDIS_URL), opens --watchers watches on each of --games games in this
process, then another process publishes --batches GameEventBatch messages a game (pipelined, in
order). Prints this process's CPU per published message and per delivered event, from the first
publish until every watcher has taken every event (the watchers' own loop included).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
import uuid

from redis.asyncio import Redis
from tafel.games.v1 import games_pb2

from gateway.watch.hub import EventHub
from kit.redis.game_reads import GameReads
from kit.redis.keys import game_keys
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub
from tools.redis_server import start_redis

PUBLISHER = r"""
import sys, redis
from tafel.games.v1 import games_pb2
from kit.redis.keys import game_keys
url, prefix, games, batches = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pipe = redis.Redis.from_url(url).pipeline(transaction=False)
for version in range(1, batches + 1):
    for g in range(games):
        event = games_pb2.GameEvent(event_id=f"{version}-1", version=version)
        event.connect4.disc_dropped.column = version % 7
        batch = games_pb2.GameEventBatch(game_id=f"{prefix}{g}", events=[event])
        pipe.publish(game_keys(f"{prefix}{g}").channel, batch.SerializeToString())
    if version % 20 == 0:
        pipe.execute()
pipe.execute()
"""


async def run(url: str, games: int, watchers: int, batches: int) -> tuple[float, float]:
    redis = Redis.from_url(url)
    pubsub, layer = PubSub(url), RedisLayer.around(redis)
    hub = EventHub(pubsub, GameReads(layer))
    hub.start()
    prefix = f"bench-{uuid.uuid4().hex[:6]}-"
    for g in range(games):
        keys = game_keys(f"{prefix}{g}")
        created = games_pb2.GameEvent(event_id="0-1", version=0)
        status = games_pb2.GameStatus(version=0).SerializeToString()  # beside each event, as commit.lua writes
        await redis.xadd(keys.events, {"e": created.SerializeToString(), "t": status}, id="0-1")
        await redis.hset(keys.state, mapping={"l": "0-1", "f": "0"})
    ready, done = asyncio.Semaphore(0), asyncio.Semaphore(0)

    async def watch(game_id: str) -> None:
        async with hub.watch(game_id, "0-1") as watcher:
            await watcher.prepare()
            ready.release()
            taken = 0
            async for _event, _source in watcher.events():
                taken += 1
                if taken == batches:
                    break
        done.release()

    tasks = [asyncio.create_task(watch(f"{prefix}{g}")) for g in range(games) for _ in range(watchers)]
    for _ in tasks:
        await ready.acquire()
    cpu, wall = time.process_time(), time.perf_counter()
    publisher = subprocess.Popen([sys.executable, "-c", PUBLISHER, url, prefix, str(games), str(batches)])
    for _ in tasks:
        await asyncio.wait_for(done.acquire(), 120)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    publisher.wait()
    await hub.close()
    await pubsub.close()
    await layer.close()
    await redis.aclose()
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--watchers", type=int, default=4)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    server = None if os.environ.get("REDIS_URL") else start_redis()
    url = os.environ["REDIS_URL"] if server is None else server.url
    try:
        for _ in range(args.runs):
            cpu, wall = asyncio.run(run(url, args.games, args.watchers, args.batches))
            messages = args.games * args.batches
            print(
                f"{messages} messages, {messages * args.watchers} deliveries: {cpu * 1e6 / messages:.1f} µs CPU "
                f"per message, {cpu * 1e6 / (messages * args.watchers):.2f} µs per delivery (wall {wall:.2f} s)"
            )
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
