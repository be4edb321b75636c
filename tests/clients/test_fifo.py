"""tafel.fifo.Fifo: the play stream's outbox and events queue (order, waiting getters, cancellation)."""

from __future__ import annotations

import asyncio

import pytest
from tafel.fifo import Fifo


async def test_items_come_out_in_the_order_they_went_in() -> None:
    fifo: Fifo[int] = Fifo()
    assert fifo.empty() and len(fifo) == 0
    for item in (3, 1, 2):
        fifo.put_nowait(item)
    assert len(fifo) == 3
    assert fifo.get_nowait() == 3
    assert [await fifo.get(), await fifo.get()] == [1, 2]
    assert fifo.empty()
    with pytest.raises(IndexError):
        fifo.get_nowait()


async def test_waiting_getters_are_served_in_the_order_they_came() -> None:
    fifo: Fifo[str] = Fifo()
    got: list[tuple[int, str]] = []

    async def getter(n: int) -> None:
        got.append((n, await fifo.get()))

    tasks = [asyncio.create_task(getter(n)) for n in range(3)]
    await asyncio.sleep(0)  # all three waiting
    for item in ("a", "b", "c"):
        fifo.put_nowait(item)
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert got == [(0, "a"), (1, "b"), (2, "c")]


async def test_a_getter_cancelled_while_waiting_leaves_nothing_behind() -> None:
    fifo: Fifo[int] = Fifo()
    waiting = asyncio.create_task(fifo.get())
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    fifo.put_nowait(7)  # no dead getter takes the wake-up: the next get has it at once
    assert await asyncio.wait_for(fifo.get(), 5) == 7


async def test_a_getter_woken_then_cancelled_passes_its_item_to_the_next() -> None:
    fifo: Fifo[int] = Fifo()
    first = asyncio.create_task(fifo.get())
    second = asyncio.create_task(fifo.get())
    await asyncio.sleep(0)
    fifo.put_nowait(1)  # wakes `first` ...
    first.cancel()  # ... which is cancelled before it runs
    assert await asyncio.wait_for(second, 5) == 1
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_get_with_a_timeout_keeps_a_later_item() -> None:
    fifo: Fifo[int] = Fifo()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(fifo.get(), 0.01)
    fifo.put_nowait(5)
    assert await asyncio.wait_for(fifo.get(), 5) == 5
