"""kit/when_set.py: many listeners of one asyncio.Event share one waiting task."""

from __future__ import annotations

import asyncio

from kit.when_set import when_set


async def test_listeners_hear_once_and_a_forgotten_one_not_at_all() -> None:
    event = asyncio.Event()
    heard: list[str] = []
    before = len(asyncio.all_tasks())
    forgets = {name: when_set(event, lambda name=name: heard.append(name)) for name in ("a", "b", "c")}  # type: ignore[misc]
    assert len(asyncio.all_tasks()) == before + 1  # one waiting task for all of them
    forgets["b"]()
    event.set()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert sorted(heard) == ["a", "c"]
    forgets["a"]()  # after it was heard: nothing happens
    event.set()
    await asyncio.sleep(0)
    assert sorted(heard) == ["a", "c"]


async def test_an_event_set_already_calls_soon_and_can_be_forgotten_first() -> None:
    event = asyncio.Event()
    event.set()
    heard: list[int] = []
    when_set(event, lambda: heard.append(1))
    forget = when_set(event, lambda: heard.append(2))
    forget()
    assert heard == []
    await asyncio.sleep(0)
    assert heard == [1]


async def test_an_event_set_cleared_and_listened_to_again() -> None:
    event = asyncio.Event()
    heard: list[int] = []
    when_set(event, lambda: heard.append(1))
    event.set()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    event.clear()
    when_set(event, lambda: heard.append(2))
    await asyncio.sleep(0)
    assert heard == [1]
    event.set()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert heard == [1, 2]
