"""Failover of a local Redis Cluster under a writing client, measured at the Redis layer.

    .venv/bin/python -m tools.cluster_failover [--runs 3] [--writers 20]

Each run starts a fresh 3+3 cluster (tools/redis_cluster.py), has `writers` tasks write in a loop
through one RedisLayer (ClusterPipe) to keys of every master, `kill -9`s one master (a different one
each run) and reports: how long until every writer of the killed master's slots succeeded again,
how many writes were refused meanwhile (the error reached the caller) and of which kind, whether
every acknowledged write of the killed master is on its promoted replica (acknowledged then lost),
and that the other masters' writers never failed. docs/cluster.md quotes the figures.

The game-level measurement (50 games over two gateways) waits for the sharded clock set: games do
not start on a cluster yet (docs/cluster.md, "What fails today").
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field

from redis.crc import key_slot

from kit.redis.layer import RedisLayer
from tools.redis_cluster import RedisClusterProcess, start_cluster


@dataclass
class Writer:
    key: str
    on_victim: bool
    acknowledged: int = 0  # the highest value Redis said OK to
    refused: Counter[str] = field(default_factory=Counter)
    last_refusal: float = 0.0


def key_on(cluster: RedisClusterProcess, port: int, prefix: str) -> str:
    ranges = cluster.masters()[port]
    for index in range(100_000):
        key = f"failover:{{{prefix}{index}}}"
        if any(start <= key_slot(key.encode()) <= end for start, end in ranges):
            return key
    raise RuntimeError("no key found")


async def write(layer: RedisLayer, writer: Writer, stop: asyncio.Event) -> None:
    value = 0
    while not stop.is_set():
        value += 1
        try:
            await layer.call("SET", writer.key, value)
            writer.acknowledged = value
        except Exception as error:  # every refusal is counted, by kind
            writer.refused[type(error).__name__] += 1
            writer.last_refusal = time.monotonic()
        await asyncio.sleep(0.005)


async def one_run(run: int, writers: int) -> str:
    cluster = await asyncio.to_thread(start_cluster)
    layer = RedisLayer.connect(cluster.url, timeout_s=10.0)
    try:
        masters = sorted(cluster.masters())
        victim = masters[run % len(masters)]
        crew = [
            Writer(key_on(cluster, masters[i % len(masters)], f"w{i}-"), masters[i % len(masters)] == victim)
            for i in range(writers)
        ]
        stop = asyncio.Event()
        tasks = [asyncio.create_task(write(layer, w, stop)) for w in crew]
        await asyncio.sleep(1.0)
        killed = time.monotonic()
        cluster.kill(victim)
        # Until every writer of the killed master's slots has written again after the kill.
        marks = {w.key: w.acknowledged for w in crew if w.on_victim}
        while any(w.acknowledged <= marks[w.key] for w in crew if w.on_victim):
            await asyncio.sleep(0.01)
            if time.monotonic() - killed > 30:
                raise RuntimeError("writers did not recover within 30 s")
        recovered = time.monotonic() - killed
        await asyncio.sleep(0.5)
        stop.set()
        await asyncio.gather(*tasks)
        lost = 0
        for w in crew:
            stored = await layer.call("GET", w.key)
            if int(stored or 0) < w.acknowledged:
                lost += 1
        refused = sum((w.refused for w in crew if w.on_victim), Counter())
        others = sum((w.refused for w in crew if not w.on_victim), Counter())
        return (
            f"run {run}: master {victim} killed; its writers all wrote again after {recovered:.2f} s; "
            f"refused meanwhile {sum(refused.values())} ({dict(refused)}); other masters' writers refused "
            f"{sum(others.values())}; keys whose acknowledged value was lost: {lost} of {len(crew)}"
        )
    finally:
        await layer.close()
        cluster.stop()


async def main(runs: int, writers: int) -> None:
    for run in range(runs):
        print(await one_run(run, writers), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--writers", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.writers))
