"""kit/flag.py: asyncio.Event's behaviour (set, clear, wait, timeouts), lighter."""

from __future__ import annotations

import asyncio

import pytest

from kit.flag import Flag


async def test_set_wakes_every_waiter_and_a_set_flag_does_not_wait() -> None:
    flag = Flag()
    assert not flag.is_set()
    waiters = [asyncio.ensure_future(flag.wait()) for _ in range(3)]
    await asyncio.sleep(0)
    assert not any(waiter.done() for waiter in waiters)
    flag.set()
    flag.clear()  # as with an Event: woken waiters stay woken
    assert await asyncio.gather(*waiters) == [True, True, True]
    assert not flag.is_set()
    flag.set()
    flag.set()
    assert flag.is_set() and await flag.wait()


async def test_a_waiter_cancelled_or_timed_out_is_forgotten() -> None:
    flag = Flag()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.01):
            await flag.wait()
    cancelled = asyncio.ensure_future(flag.wait())
    await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert not flag._waiters  # nothing kept for waiters gone
    later = asyncio.ensure_future(flag.wait())
    await asyncio.sleep(0)
    flag.set()
    assert await later
