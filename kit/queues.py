"""asyncio.Queue for a stream's one reader that sends everything waiting as one message."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Generic, Protocol, TypeVar

_T = TypeVar("_T")
_Item = TypeVar("_Item", covariant=True)


class _Taking(Protocol[_Item]):
    def empty(self) -> bool: ...
    def get_nowait(self) -> _Item: ...


class StreamQueue(Generic[_T]):
    """asyncio.Queue's put, put_nowait, get, get_nowait, empty, full and qsize, for a queue with one
    reader (a stream's writer), without what an asyncio.Queue makes up front for many readers and
    for join(): two deques of waiters and an Event with a deque of its own, ~2.3 KiB of empty
    blocks for every stream held open (tools/bench_connection_cost.py). Producers that wait for
    room get a deque only when one first waits."""

    __slots__ = ("_getter", "_items", "_maxsize", "_putters")

    def __init__(self, maxsize: int = 0) -> None:
        self._items: deque[_T] = deque()
        self._maxsize = maxsize
        self._getter: asyncio.Future[None] | None = None  # the one reader, waiting for an item
        self._putters: deque[asyncio.Future[None]] | None = None

    def qsize(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    def full(self) -> bool:
        return 0 < self._maxsize <= len(self._items)

    def put_nowait(self, item: _T) -> None:
        if 0 < self._maxsize <= len(self._items):
            raise asyncio.QueueFull
        self._items.append(item)
        getter = self._getter
        if getter is not None:
            self._getter = None
            if not getter.done():
                getter.set_result(None)

    async def put(self, item: _T) -> None:
        while self.full():
            putter = asyncio.get_running_loop().create_future()
            if self._putters is None:
                self._putters = deque()
            self._putters.append(putter)
            try:
                await putter
            except BaseException:
                putter.cancel()
                with contextlib.suppress(ValueError):
                    self._putters.remove(putter)
                if not self.full():  # the room it was woken for goes to the next producer
                    self._wake_putter()
                raise
        self.put_nowait(item)

    def get_nowait(self) -> _T:
        if not self._items:
            raise asyncio.QueueEmpty
        item = self._items.popleft()
        if self._putters:
            self._wake_putter()
        return item

    async def get(self) -> _T:
        while not self._items:
            if self._getter is not None:
                raise RuntimeError("a StreamQueue has one reader")
            getter = self._getter = asyncio.get_running_loop().create_future()
            try:
                await getter
            finally:
                if self._getter is getter:  # cancelled, not woken by a put
                    self._getter = None
        return self.get_nowait()

    def _wake_putter(self) -> None:
        putters = self._putters
        while putters:
            putter = putters.popleft()
            if not putter.done():
                putter.set_result(None)
                return


def take_waiting(queue: _Taking[_T], most: int | None = None) -> list[_T]:
    """Every item waiting in `queue` (at most `most`), oldest first, without waiting; each item
    taken makes room for a producer waiting on a full queue, as get_nowait does."""
    taken: list[_T] = []
    while not queue.empty() and (most is None or len(taken) < most):
        taken.append(queue.get_nowait())
    return taken
