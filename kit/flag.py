"""An asyncio.Event for the many: the same set / clear / is_set / wait, without the deque every
asyncio.Event allocates when it is made (~760 bytes, most of them an empty block). A server holds
one or two for every stream it keeps open (a subscription's confirmation, a stream's wake-up), so
at tens of thousands of connected players that block is megabytes of nothing
(tools/bench_connection_cost.py). A Flag makes its list of waiters only when someone waits."""

from __future__ import annotations

import asyncio


class Flag:
    __slots__ = ("_set", "_waiters")

    def __init__(self) -> None:
        self._set = False
        self._waiters: list[asyncio.Future[None]] | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        """Set it and wake every waiter (as Event.set: a waiter woken stays woken if it is cleared
        again before the waiter runs)."""
        if self._set:
            return
        self._set = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        self._set = False

    async def wait(self) -> bool:
        if self._set:
            return True
        waiter = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        try:
            await waiter
            return True
        finally:
            if self._waiters is not None and waiter in self._waiters:  # cancelled while waiting
                self._waiters.remove(waiter)
