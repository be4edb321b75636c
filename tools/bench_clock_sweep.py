"""What one clock sweep costs over every game shard (gateway/clocks.py `sweep_once`): on a fresh
single Redis (every shard in one claim script) and on a fresh local 3-master cluster (one claim per
shard, all in flight at once). Arms `--pending` deadlines an hour away, then times `--sweeps` sweeps
with nothing due: wall time per sweep from this process, and Redis time per sweep (EVALSHA usec of
INFO commandstats, summed over the masters).

    .venv/bin/python -m tools.bench_clock_sweep [--pending 1000] [--sweeps 200]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from tafel.games.v1 import games_pb2

from gateway.clocks import Clocks, Due
from kit.redis.layer import RedisLayer
from tools.redis_cluster import start_cluster
from tools.redis_server import start_redis


async def evalsha_usec(layer: RedisLayer) -> int:
    if layer.cluster:
        replies: Any = await layer.client.info("commandstats", target_nodes="primaries")
        return sum(int(node.get("cmdstat_evalsha", {}).get("usec", 0)) for node in replies.values())
    info: Any = await layer.client.info("commandstats")
    return int(info.get("cmdstat_evalsha", {}).get("usec", 0))


async def settled(_: Due) -> bool:
    return True


async def measure(url: str, label: str, pending: int, sweeps: int) -> None:
    layer = RedisLayer.connect(url)
    try:
        clocks = Clocks(layer, ttl_s=600)
        for i in range(pending):
            await clocks.arm(f"bench-{i}", games_pb2.GameStatus(version=1, to_act=[0]), 3600)
        await clocks.sweep_once(settled)  # scripts loaded everywhere
        before = await evalsha_usec(layer)
        started = time.perf_counter()
        for _ in range(sweeps):
            await clocks.sweep_once(settled)
        wall_ms = (time.perf_counter() - started) / sweeps * 1000
        redis_ms = (await evalsha_usec(layer) - before) / sweeps / 1000
        print(f"{label}: {wall_ms:.2f} ms a sweep (wall), {redis_ms:.2f} ms Redis time a sweep")
    finally:
        await layer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pending", type=int, default=1000)
    parser.add_argument("--sweeps", type=int, default=200)
    options = parser.parse_args()
    single = start_redis()
    try:
        asyncio.run(measure(single.url, "single Redis, every shard in one claim", options.pending, options.sweeps))
    finally:
        single.stop()
    cluster = start_cluster()
    try:
        asyncio.run(measure(cluster.url, "3-master cluster, a claim per shard", options.pending, options.sweeps))
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
