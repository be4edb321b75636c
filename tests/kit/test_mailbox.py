"""kit/mailbox.py: the one-reader queue the gateway's stream writers and the rules service's answers use."""

from __future__ import annotations

import asyncio

import pytest

from kit.mailbox import Mailbox


async def test_items_come_out_in_order_and_a_waiting_reader_is_woken() -> None:
    box: Mailbox[int] = Mailbox(asyncio.get_running_loop())
    reader = asyncio.ensure_future(box.get())
    await asyncio.sleep(0)
    assert not reader.done()  # nothing yet: the reader waits
    box.put_nowait(1)
    box.put_nowait(2)
    assert await asyncio.wait_for(reader, 5) == 1
    assert box.get_nowait() == 2
    assert box.empty()
    with pytest.raises(asyncio.QueueEmpty):
        box.get_nowait()


async def test_a_full_box_holds_producers_until_there_is_room() -> None:
    box: Mailbox[str] = Mailbox(asyncio.get_running_loop(), limit=2)
    box.put_nowait("a")
    await box.put("b")
    assert box.full()
    with pytest.raises(asyncio.QueueFull):
        box.put_nowait("x")
    third = asyncio.ensure_future(box.put("c"))
    fourth = asyncio.ensure_future(box.put("d"))
    await asyncio.sleep(0)
    assert not third.done() and not fourth.done()
    assert await box.get() == "a"  # room for one: the first producer that waited
    await asyncio.wait_for(third, 5)
    assert not fourth.done()
    assert [box.get_nowait(), box.get_nowait()] == ["b", "c"]
    await asyncio.wait_for(fourth, 5)
    assert box.get_nowait() == "d"


async def test_a_woken_producer_that_is_cancelled_passes_the_room_on() -> None:
    box: Mailbox[str] = Mailbox(asyncio.get_running_loop(), limit=1)
    box.put_nowait("a")
    first = asyncio.ensure_future(box.put("b"))
    second = asyncio.ensure_future(box.put("c"))
    await asyncio.sleep(0)
    box.get_nowait()  # wakes `first` ...
    first.cancel()  # ... which goes away before it runs: `second` gets the room
    await asyncio.wait_for(second, 5)
    assert first.cancelled()
    assert box.get_nowait() == "c"
    assert box.empty()


async def test_a_cancelled_producer_leaves_the_waiting_line() -> None:
    box: Mailbox[str] = Mailbox(asyncio.get_running_loop(), limit=1)
    box.put_nowait("a")
    gone = asyncio.ensure_future(box.put("b"))
    kept = asyncio.ensure_future(box.put("c"))
    await asyncio.sleep(0)
    gone.cancel()
    await asyncio.sleep(0)
    box.get_nowait()
    await asyncio.wait_for(kept, 5)
    assert box.get_nowait() == "c"


async def test_clear_drops_everything_and_releases_the_waiting_producers() -> None:
    box: Mailbox[int] = Mailbox(asyncio.get_running_loop(), limit=1)
    box.put_nowait(0)
    producers = [asyncio.ensure_future(box.put(n)) for n in (1, 2)]
    await asyncio.sleep(0)
    box.clear()  # 0 is dropped; the first producer takes the room, the second waits again
    await asyncio.wait_for(producers[0], 5)
    assert not producers[1].done()
    assert box.get_nowait() == 1
    await asyncio.wait_for(producers[1], 5)
    assert box.get_nowait() == 2


async def test_get_many_takes_what_waits_in_order_and_makes_room_for_producers() -> None:
    box: Mailbox[int] = Mailbox(asyncio.get_running_loop(), limit=3)
    assert box.get_many() == []
    for item in (1, 2, 3):
        box.put_nowait(item)
    producers = [asyncio.ensure_future(box.put(item)) for item in (4, 5)]
    await asyncio.sleep(0)
    assert not any(producer.done() for producer in producers)  # full: both wait
    assert box.get_many(2) == [1, 2]  # at most two: two places free
    await asyncio.wait_for(asyncio.gather(*producers), 5)  # each woken for one of them
    assert box.get_many(0) == []
    assert box.get_many() == [3, 4, 5] and box.empty()
