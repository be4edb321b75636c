"""kit/queues.py StreamQueue: asyncio.Queue's behaviour for one reader, bounded, in order."""

from __future__ import annotations

import asyncio

import pytest

from kit.queues import StreamQueue, take_waiting


async def test_in_order_bounded_and_the_reader_woken_by_a_put() -> None:
    queue: StreamQueue[int] = StreamQueue(2)
    assert queue.empty() and not queue.full() and queue.qsize() == 0
    reading = asyncio.ensure_future(queue.get())
    await asyncio.sleep(0)
    assert not reading.done()
    queue.put_nowait(1)
    assert await reading == 1
    queue.put_nowait(2)
    queue.put_nowait(3)
    assert queue.full() and queue.qsize() == 2
    with pytest.raises(asyncio.QueueFull):
        queue.put_nowait(4)
    assert take_waiting(queue) == [2, 3]
    with pytest.raises(asyncio.QueueEmpty):
        queue.get_nowait()


async def test_producers_wait_for_room_in_turn_and_a_cancelled_one_gives_its_turn_on() -> None:
    queue: StreamQueue[str] = StreamQueue(1)
    queue.put_nowait("a")
    first = asyncio.ensure_future(queue.put("b"))
    second = asyncio.ensure_future(queue.put("c"))
    third = asyncio.ensure_future(queue.put("d"))
    await asyncio.sleep(0)
    assert not (first.done() or second.done() or third.done())
    assert queue.get_nowait() == "a"  # room for one: the first producer's
    first.cancel()  # ... who leaves before it runs: its turn passes on
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert first.cancelled() and second.done() and not third.done()
    assert await queue.get() == "c"
    await asyncio.sleep(0)
    assert third.done() and await queue.get() == "d"


async def test_a_cancelled_reader_and_one_reader_only() -> None:
    queue: StreamQueue[int] = StreamQueue()
    reading = asyncio.ensure_future(queue.get())
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="one reader"):
        await queue.get()
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading
    queue.put_nowait(7)  # nobody waits now: kept for the next reader
    assert await queue.get() == 7
