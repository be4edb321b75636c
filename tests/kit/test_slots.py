"""kit/slots.py: a rules stream's reader takes slots, its actions give them back."""

from __future__ import annotations

import asyncio

from kit.slots import Slots


async def test_slots_run_out_and_the_taker_waits_for_one_given_back() -> None:
    slots = Slots(asyncio.get_running_loop(), 2)
    assert slots.try_take() and slots.try_take()
    assert not slots.try_take() and slots.free == 0
    taker = asyncio.ensure_future(slots.take())
    await asyncio.sleep(0)
    assert not taker.done()  # none free: it waits
    slots.release()
    await asyncio.wait_for(taker, 1)
    assert slots.free == 0  # the one given back went to the waiting taker


async def test_a_taker_cancelled_while_waiting_takes_nothing() -> None:
    slots = Slots(asyncio.get_running_loop(), 1)
    assert slots.try_take()
    taker = asyncio.ensure_future(slots.take())
    await asyncio.sleep(0)
    taker.cancel()
    await asyncio.gather(taker, return_exceptions=True)
    slots.release()
    assert slots.free == 1 and slots.try_take()


async def test_releases_before_any_wait_are_all_kept() -> None:
    slots = Slots(asyncio.get_running_loop(), 0)
    slots.release()
    slots.release()
    await asyncio.wait_for(slots.take(), 1)
    assert slots.free == 1
