"""What the inbox costs (gateway/notices/inbox.py) on a fresh single Redis: `--accounts` inboxes
filled to the cap of 500 with YOUR_TURN-sized notices, `--concurrency` notify calls in flight;
then notices/s while filling, notices/s once every inbox is at the cap (each new notice drops the
oldest and tells the stream), the memory of one full inbox (every inbox key of the account, its
event stream apart), a repeat's cost (a notice handed in again), and a ListNotifications page
of 50.

    .venv/bin/python -m tools.bench_inbox [--accounts 20] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from tafel.play.v1 import notices_pb2

from gateway.events.feed import events_key
from gateway.notices.inbox import KEEP_NOTICES, Inbox, keys_of, notice_id
from kit.redis.layer import RedisLayer
from tools.redis_server import start_redis


def note(account: int, i: int) -> notices_pb2.Notification:
    return notices_pb2.Notification(
        notification_id=notice_id("turn", f"g{account:04d}x{i:06d}", i),
        kind=notices_pb2.NOTIFICATION_KIND_YOUR_TURN,
        game_id=f"g{account:04d}x{i:06d}",
        game="connect4",
    )


async def notify_all(inbox: Inbox, calls: list[tuple[str, notices_pb2.Notification]], concurrency: int) -> float:
    queue = list(reversed(calls))
    started = time.perf_counter()

    async def worker() -> None:
        while queue:
            player, n = queue.pop()
            await inbox.notify(player, n)

    await asyncio.gather(*[worker() for _ in range(concurrency)])
    return time.perf_counter() - started


async def main(accounts: int, concurrency: int) -> dict[str, Any]:
    server = start_redis()
    layer = RedisLayer.connect(server.url, max_connections=concurrency + 4)
    try:
        inbox = Inbox(layer)
        players = [f"bench{a:04d}" for a in range(accounts)]
        fill = [(players[a], note(a, i)) for i in range(KEEP_NOTICES) for a in range(accounts)]
        fill_s = await notify_all(inbox, fill, concurrency)
        over = [(players[a], note(a, KEEP_NOTICES + i)) for i in range(100) for a in range(accounts)]
        over_s = await notify_all(inbox, over, concurrency)
        repeat_s = await notify_all(inbox, over, concurrency)
        keys = keys_of(players[0])
        memory = 0
        for key in (*keys.inbox(), keys.seen, keys.seq):
            memory += int(await layer.call("MEMORY", "USAGE", key, "SAMPLES", "0") or 0)
        stream = int(await layer.call("MEMORY", "USAGE", events_key(players[0]), "SAMPLES", "0") or 0)
        started = time.perf_counter()
        for _ in range(200):
            await inbox.listing(players[0], page_size=50)
        page_ms = (time.perf_counter() - started) / 200 * 1000
        return {
            "accounts": accounts,
            "concurrency": concurrency,
            "fill_notices_per_s": round(len(fill) / fill_s),
            "at_cap_notices_per_s": round(len(over) / over_s),
            "repeat_notices_per_s": round(len(over) / repeat_s),
            "full_inbox_bytes": memory,
            "full_inbox_bytes_per_notice": round(memory / KEEP_NOTICES),
            "event_stream_bytes": stream,
            "list_page_of_50_ms": round(page_ms, 3),
            "unread": await inbox.unread(players[0]),
        }
    finally:
        await layer.close()
        server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main(args.accounts, args.concurrency)), indent=1))
