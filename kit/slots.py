"""A count of free slots with one taker: a stream's reader bounding what it has in flight.

asyncio.Semaphore serves any number of acquirers fairly: its acquire asks locked(), whose any()
walks a generator over the waiters, and its release wakes the next waiter through a helper, four
or five Python calls a slot, every action a rules stream carries. One reader takes, any number of
tasks give back: a counter, and a future only while the reader waits for a slot."""

from __future__ import annotations

import asyncio


class Slots:
    __slots__ = ("_free", "_loop", "_waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop, count: int) -> None:
        self._loop = loop
        self._free = count
        self._waiter: asyncio.Future[None] | None = None  # the taker, waiting for a slot

    @property
    def free(self) -> int:
        return self._free

    def try_take(self) -> bool:
        """Take a slot if one is free."""
        if self._free > 0:
            self._free -= 1
            return True
        return False

    async def take(self) -> None:
        """Take a slot, waiting until one is given back (one taker at a time)."""
        while self._free <= 0:
            waiter = self._waiter = self._loop.create_future()
            try:
                await waiter
            finally:
                if self._waiter is waiter:
                    self._waiter = None
        self._free -= 1

    def release(self) -> None:
        self._free += 1
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)
