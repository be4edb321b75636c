"""An unbounded first-in first-out queue for one event loop: the play stream's outbox and its
events, each crossed by every move.

asyncio.Queue does the same with more per item: a getter that waits asks for the running loop,
and on Python 3.11 that is a getpid system call each time (seen at ~3 % of a load generator's CPU
with the play stream's other get_running_loop calls); it also keeps a count of unfinished tasks
and an Event for join(), which nothing here uses. This one learns its loop at the first wait.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class Fifo(Generic[T]):
    __slots__ = ("_getters", "_items", "_loop")

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        self._getters: deque[asyncio.Future[None]] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None

    def __len__(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    def put_nowait(self, item: T) -> None:
        self._items.append(item)
        self._wake_next()

    def get_nowait(self) -> T:
        """The oldest item; IndexError when there is none."""
        return self._items.popleft()

    async def get(self) -> T:
        """The oldest item, waiting for one (several getters are served in the order they came)."""
        items = self._items
        while not items:
            if self._loop is None:
                self._loop = asyncio.get_running_loop()
            getter = self._loop.create_future()
            self._getters.append(getter)
            try:
                await getter
            except BaseException:
                getter.cancel()  # a no-op when it was woken already
                try:
                    self._getters.remove(getter)
                except ValueError:
                    pass
                if items and getter.done() and not getter.cancelled():
                    # Woken for an item, then cancelled before taking it: the next getter takes it.
                    self._wake_next()
                raise
        return items.popleft()

    def _wake_next(self) -> None:
        getters = self._getters
        while getters:
            getter = getters.popleft()
            if not getter.done():
                getter.set_result(None)
                return
