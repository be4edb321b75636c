"""Wake-ups: one pub/sub connection per gateway process, shared by matchmaking and rooms."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

log = logging.getLogger("tafel.gateway.matchmaking")

class Wakeups:
    """One Redis pub/sub connection for the lobby of this process: handlers per channel, called
    with each message's payload. Reconnects by itself; callers also poll, so a message lost while
    reconnecting only delays them by a tick."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._handlers: dict[str, list[Callable[[bytes], None]]] = {}
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    def on(self, channel: str, handler: Callable[[bytes], None]) -> None:
        if self._task is not None:
            raise RuntimeError("register handlers before start()")
        self._handlers.setdefault(channel, []).append(handler)

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="lobby-wakeups")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), 5.0)

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            pubsub: PubSub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(*self._handlers)
                self._ready.set()
                while True:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is None or message.get("type") != "message":
                        continue
                    channel = message["channel"]
                    name = channel.decode() if isinstance(channel, bytes) else str(channel)
                    data = message["data"]
                    payload = data if isinstance(data, bytes) else str(data).encode()
                    for handler in self._handlers.get(name, ()):
                        try:
                            handler(payload)
                        except Exception:  # a handler bug must not stop the wake-ups
                            log.exception("wake-up handler failed", extra={"channel": name})
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError):
                log.warning("lobby pub/sub connection lost; reconnecting")
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
