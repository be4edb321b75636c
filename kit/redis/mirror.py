"""A table every process keeps in memory and Redis keeps for all of them (session revocations,
roles, sanctions): read whole when the process's pub/sub confirms the table's channel (after every
reconnect too, so nothing published while the connection was down is missed), then kept by the
channel's messages. A check against it is a dictionary look-up, no Redis round trip per call.

A subclass says how to read the whole table (`load`) and what a message means (`on_message`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from redis.exceptions import RedisError

from kit.redis.pubsub import PubSub, Subscription
from kit.retry import Attempts, Backoff
from kit.tasks import spawn

LOAD_BACKOFF = Backoff(first_s=0.1, cap_s=5.0)


class Mirror:
    channel: str
    log: logging.Logger

    def __init__(self) -> None:
        self._subscription: Subscription | None = None
        self._loading: asyncio.Task[None] | None = None
        self.subscribed = asyncio.Event()  # set once the table has been read after subscribing

    async def load(self) -> None:
        raise NotImplementedError

    def on_message(self, channel: bytes, payload: bytes) -> None:
        raise NotImplementedError

    def start(self, pubsub: PubSub) -> None:
        if self._subscription is None:
            pubsub.start()
            self._subscription = pubsub.subscribe(self.channel, self.on_message, on_live=self._on_live)

    async def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.cancel()
            self._subscription = None
        loading, self._loading = self._loading, None
        if loading is not None:
            loading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await loading

    def _on_live(self, again: bool) -> None:
        # Subscribed (again): read the table now, so nothing published before is missed.
        if self._loading is not None:
            self._loading.cancel()
        # It retries Redis errors itself; anything else is a bug, logged by its supervisor (the
        # next confirmation, after a reconnect, loads again).
        self._loading = spawn(self._load_until_read(), f"{self.channel} mirror", log=self.log)

    async def _load_until_read(self) -> None:
        attempts = Attempts(LOAD_BACKOFF)
        while True:
            try:
                await self.load()
            except RedisError:
                self.log.warning("cannot read the table; retrying", extra={"channel": self.channel})
                await attempts.failed()
                continue
            self.subscribed.set()
            return
