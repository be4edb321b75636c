"""Retry with backoff: the platform's one implementation (both tiers; the Python SDK, which may not
import kit/, has its own in clients/python/tafel/retry.py).

Two shapes cover every retry in the servers:

- ``await retrying(work, on=(RedisError,), attempts=3)``: call ``work()`` until it succeeds, at
  most ``attempts`` times, sleeping the backoff between tries; the last failure propagates.
- ``Attempts``: a failure counter for loops that retry forever (a subscription, a sweeper) and
  decide themselves what a failure is: ``await attempts.failed()`` sleeps the next delay,
  ``attempts.reset()`` after a success starts the delays from the first again.

Delays grow exponentially from ``first_s`` by ``factor`` up to ``cap_s``, each shortened by a
random part of up to ``jitter`` (never lengthened: the cap holds), so replicas that lost Redis
together do not all come back in the same millisecond.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    first_s: float = 0.1
    cap_s: float = 5.0
    factor: float = 2.0
    jitter: float = 0.2  # 0..1: the share of a delay that may be taken off at random

    def delay(self, failures: int, draw: Callable[[], float] = random.random) -> float:
        """The wait after the `failures`-th consecutive failure (0 = the first one)."""
        nominal = min(self.cap_s, self.first_s * self.factor ** max(0, failures))
        return nominal * (1.0 - self.jitter * draw())


class Attempts:
    """Consecutive failures of one thing, and the backoff between them."""

    def __init__(self, backoff: Backoff | None = None) -> None:
        self.backoff = backoff or Backoff()
        self.failures = 0

    def next_delay(self) -> float:
        """The delay before the next try; counts the failure."""
        delay = self.backoff.delay(self.failures)
        self.failures += 1
        return delay

    async def failed(self, at_least_s: float = 0.0) -> None:
        """Count a failure and sleep the backoff (or `at_least_s`, a server's retry hint, if longer)."""
        await asyncio.sleep(max(at_least_s, self.next_delay()))

    def reset(self) -> None:
        self.failures = 0


async def retrying(
    work: Callable[[], Awaitable[T]],
    *,
    on: tuple[type[BaseException], ...],
    attempts: int,
    backoff: Backoff | None = None,
) -> T:
    """`work()`'s result, trying up to `attempts` times while it raises one of `on`; the last
    failure propagates. Only for work that is safe to repeat (idempotent, or guarded by a
    request id)."""
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    counter = Attempts(backoff)
    while True:
        try:
            return await work()
        except on:
            if counter.failures + 1 >= attempts:
                raise
            await counter.failed()
