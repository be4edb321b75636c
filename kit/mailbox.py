"""A queue with one reader: what the gateway's Play and rules stream writers and the rules service's
ApplyMoves answers drain.

asyncio.Queue serves any number of getters and putters: each put wakes a getter through a list of
waiters, each wait makes its future through get_running_loop (a getpid system call in Python
3.11), and every put touches its join() bookkeeping (an Event cleared). A stream's queue has one
reader, so a deque, the one future that reader may be waiting on (made from the loop it was given),
and futures only for producers that find the queue full do the same for a fraction of the work
(docs/benchmarks.md, third pass: several puts and a get per move).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Generic, TypeVar

_T = TypeVar("_T")


class Mailbox(Generic[_T]):
    """FIFO of items for one reader; `limit` items at most (0: unbounded), producers wait for
    room beyond it (put) or get QueueFull (put_nowait)."""

    __slots__ = ("_getter", "_items", "_limit", "_loop", "_putters")

    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int = 0) -> None:
        self._loop = loop
        self._limit = limit
        self._items: deque[_T] = deque()
        self._getter: asyncio.Future[None] | None = None  # the reader, waiting for an item
        self._putters: deque[asyncio.Future[None]] = deque()  # producers waiting for room

    def __len__(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    def full(self) -> bool:
        return 0 < self._limit <= len(self._items)

    def put_nowait(self, item: _T) -> None:
        if 0 < self._limit <= len(self._items):
            raise asyncio.QueueFull
        self._items.append(item)
        getter = self._getter
        if getter is not None:
            self._getter = None
            if not getter.done():
                getter.set_result(None)

    async def put(self, item: _T) -> None:
        while 0 < self._limit <= len(self._items):
            putter = self._loop.create_future()
            self._putters.append(putter)
            try:
                await putter
            except BaseException:
                if putter.done() and not putter.cancelled():
                    self._wake_putter()  # woken for room it will not use: pass it on
                else:
                    putter.cancel()
                    with contextlib.suppress(ValueError):
                        self._putters.remove(putter)
                raise
        self.put_nowait(item)

    def get_nowait(self) -> _T:
        if not self._items:
            raise asyncio.QueueEmpty
        item = self._items.popleft()
        if self._putters:
            self._wake_putter()
        return item

    def get_many(self, most: int | None = None) -> list[_T]:
        """Every item waiting (at most `most`), oldest first; none waiting: []. One call where a
        writer draining the queue into one message asked empty() and get_nowait() per item."""
        items = self._items
        if not items or (most is not None and most <= 0):
            return []
        if most is None or len(items) <= most:
            taken = list(items)
            items.clear()
        else:
            taken = [items.popleft() for _ in range(most)]
        for _ in range(min(len(taken), len(self._putters))):
            self._wake_putter()  # (as get_nowait wakes one per item taken)
        return taken

    async def get(self) -> _T:
        while not self._items:
            getter = self._getter = self._loop.create_future()
            try:
                await getter
            finally:
                if self._getter is getter:
                    self._getter = None
        return self.get_nowait()

    def clear(self) -> None:
        """Drop every item and wake every producer waiting for room."""
        self._items.clear()
        while self._putters:
            self._wake_putter()

    def _wake_putter(self) -> None:
        while self._putters:
            putter = self._putters.popleft()
            if not putter.done():
                putter.set_result(None)
                return
