"""Run callbacks when an asyncio.Event is set, without a task (and a future) per listener.

A long-lived stream that must end when its server stops used to keep a task of its own blocked in
`stopping.wait()`: a task, its coroutine's frame and a future each, for every stream held open
(a few KiB a connected player; tools/bench_connection_cost.py). Here every listener of one event
shares one waiting task: a callback registered is a set entry, and is called once, on the loop,
when the event is set (at once, soon, when it is set already)."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable

from kit.tasks import spawn

_log = logging.getLogger("tafel.tasks")


class _Listeners:
    def __init__(self, event: asyncio.Event) -> None:
        self.callbacks: set[Callable[[], None]] = set()
        self.task = spawn(self._wait(event), "event listeners", log=_log)

    async def _wait(self, event: asyncio.Event) -> None:
        await event.wait()
        callbacks, self.callbacks = self.callbacks, set()
        for callback in callbacks:
            try:
                callback()
            except Exception:  # one listener's failure must not keep the others from hearing
                _log.exception("a listener of a set event failed")


_listening: weakref.WeakKeyDictionary[asyncio.Event, _Listeners] = weakref.WeakKeyDictionary()


def when_set(event: asyncio.Event, callback: Callable[[], None]) -> Callable[[], None]:
    """Call `callback` once when `event` is set; returns what forgets it (call it when the listener
    ends first). Each listener passes a callback object of its own (it is a set entry)."""
    if event.is_set():
        handle = asyncio.get_running_loop().call_soon(callback)
        return handle.cancel
    listeners = _listening.get(event)
    if listeners is None or listeners.task.done():
        listeners = _listening[event] = _Listeners(event)
    listeners.callbacks.add(callback)
    callbacks = listeners.callbacks
    return lambda: callbacks.discard(callback)
