"""What a game's wake-up costs the cluster: plain PUBLISH (broadcast to every node over the cluster
bus) against SPUBLISH (the owning shard only: its master and replica), on a fresh local 3+3 Redis 7
cluster. `--channels` game channels, `--messages` wake-ups of `--size` bytes published pipelined
through one RedisLayer, taken by one PubSub (plain: SUBSCRIBE on one node; sharded: SSUBSCRIBE on
each channel's master, as kit/redis/pubsub.py does on Redis 7). Prints, per mode, the CPU the six
redis-servers spent (INFO cpu, summed), the cluster-bus publish messages (sent plus received, CLUSTER
INFO, summed) and the rate at which they were delivered.

    .venv/bin/python -m tools.bench_shard_pubsub [--channels 64] [--messages 20000] [--size 200]
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from typing import Any

from kit.redis.keys import game_keys
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub
from tools.redis_cluster import RedisClusterProcess, start_cluster

BATCH = 500  # commands in flight at once


def cluster_counters(cluster: RedisClusterProcess) -> tuple[float, int]:
    """(CPU seconds of every node, cluster-bus publish messages sent by every node)."""
    cpu, bus = 0.0, 0
    for node in cluster.nodes:
        with node.client() as client:
            info: Any = client.info("cpu")
            cpu += float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
            reply: Any = client.execute_command("CLUSTER", "INFO")
            text = reply.decode() if isinstance(reply, bytes) else str(reply)
            # publish_sent/received and publishshard_sent/received: each node's share of the bus
            stats = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
            bus += sum(int(v) for k, v in stats.items() if k.startswith("cluster_stats_messages_publish"))
    return cpu, bus


async def measure(cluster: RedisClusterProcess, sharded: bool, channels: list[str], messages: int, size: int) -> str:
    layer = RedisLayer.connect(cluster.url)
    pubsub = PubSub(cluster.url if sharded else f"redis://{cluster.nodes[0].address}/0")
    pubsub.start()
    got = 0
    done = asyncio.Event()

    def on_message(_channel: bytes, _payload: bytes) -> None:
        nonlocal got
        got += 1
        if got == messages:
            done.set()

    try:
        subscriptions = [pubsub.subscribe(channel, on_message) for channel in channels]
        await asyncio.gather(*(s.ready(10.0) for s in subscriptions))
        command = "SPUBLISH" if sharded else "PUBLISH"
        payload = b"x" * size
        cpu0, bus0 = cluster_counters(cluster)
        started = time.perf_counter()
        for first in range(0, messages, BATCH):
            await layer.many(
                [(command, channels[i % len(channels)], payload) for i in range(first, min(messages, first + BATCH))]
            )
        await asyncio.wait_for(done.wait(), 60.0)
        wall = time.perf_counter() - started
        cpu1, bus1 = cluster_counters(cluster)
        return (
            f"{command:8s}: redis CPU {1e6 * (cpu1 - cpu0) / messages:6.1f} us/message over 6 nodes, "
            f"bus messages sent+received {(bus1 - bus0) / messages:4.1f}/message, "
            f"{messages / wall:8.0f} messages/s delivered"
        )
    finally:
        await pubsub.close()
        await layer.close()


async def run(channels: int, messages: int, size: int) -> None:
    cluster = await asyncio.to_thread(start_cluster)
    try:
        with cluster.nodes[0].client() as client:
            if int(str(client.info("server")["redis_version"]).split(".")[0]) < 7:
                raise SystemExit("needs Redis 7 on PATH (make redis)")
        names = [game_keys(uuid.uuid4().hex).channel for _ in range(channels)]
        for sharded in (False, True, False, True):  # interleaved: the machine's noise hits both
            print(await measure(cluster, sharded, names, messages, size), flush=True)
    finally:
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--channels", type=int, default=64)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--size", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(run(args.channels, args.messages, args.size))


if __name__ == "__main__":
    main()
