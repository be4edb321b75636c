"""The mail outbox's throughput: N mails queued on a fresh Redis, then one sender (what one gateway
runs) hands them all to an SMTP server in this process (aiosmtpd, which only counts them).

    .venv/bin/python -m tools.bench_mail [N]    # default 1000

Prints the queueing rate (lua/mail/queue, one script a mail) and the sending rate (claim, a new
SMTP connection a mail through aiosmtplib, settle). aiosmtpd is in the dev extra."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Any

from aiosmtpd.controller import Controller

from gateway.mail.outbox import Mail, Outbox, SmtpTransport
from kit.redis.layer import RedisLayer
from tools.redis_server import free_port, start_redis


class Counter:
    """Runs on aiosmtpd's own thread and loop: tells the benchmark through a thread-safe event."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.received = 0
        self.all_in = threading.Event()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.received += 1
        if self.received >= self.expected:
            self.all_in.set()
        return "250 OK"


async def main(count: int) -> None:
    redis = start_redis()
    counter = Counter(count)
    port = free_port()
    relay = Controller(counter, hostname="127.0.0.1", port=port)
    relay.start()
    layer = RedisLayer.connect(redis.url, max_connections=8)
    try:
        outbox = Outbox(layer, SmtpTransport("127.0.0.1", port), sender="tafel <noreply@example.org>", max_wait_s=0.05)
        started = time.perf_counter()
        for i in range(count):
            mail = Mail(f"m{i:08d}", f"p{i % 50}", f"u{i}@example.org", "Subject", "a line of text\n" * 20)
            await outbox.queue(mail)
        queued = time.perf_counter()
        outbox.start()
        await asyncio.to_thread(counter.all_in.wait)
        sent = time.perf_counter()
        await outbox.stop()
        print(
            f"{count} mails: queued {count / (queued - started):,.0f}/s; sent {count / (sent - queued):,.0f}/s "
            f"({(sent - queued) * 1000 / count:.2f} ms a mail, one sender)"
        )
    finally:
        await layer.close()
        relay.stop()
        redis.stop()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
