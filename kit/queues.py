"""asyncio.Queue for a stream's one reader that sends everything waiting as one message."""

from __future__ import annotations

import asyncio
from typing import TypeVar

_T = TypeVar("_T")


def take_waiting(queue: asyncio.Queue[_T], most: int | None = None) -> list[_T]:
    """Every item waiting in `queue` (at most `most`), oldest first, without waiting; each item
    taken makes room for a producer waiting on a full queue, as get_nowait does."""
    taken: list[_T] = []
    while not queue.empty() and (most is None or len(taken) < most):
        taken.append(queue.get_nowait())
    return taken
