"""Background work: the platform's one start/stop/backoff loop.

A sweeper, a subscription listener or a feed reader is a ``Loop`` around one async ``step``:

    self.loop = Loop("rating sweeper", self._sweep_step, every_s=30.0, log=log)
    self.loop.start()        # in the composition root's start
    await self.loop.stop()   # cancels the task and waits for it

``step()`` does one pass and returns the seconds until the next one (``None``: ``every_s``; 0:
again at once). A step that never returns (a subscription: subscribe, then listen) calls
``loop.healthy()`` once it is connected, so its next outage backs off from the first delay again.

Failures:
- a Redis failure (``RedisError``/``OSError``, or the ``outages`` given) is an outage: logged once
  as a warning when it begins (not once per try), the step retried with backoff (kit/retry.py),
  and logged once more when a step succeeds again;
- any other exception is a bug in one pass: logged with its stack trace, and the next pass runs
  after ``every_s`` as usual (one bad pass must not stop the sweeps).
``wake()`` runs the next pass now instead of after its wait (new work arrived).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from redis.exceptions import RedisError

from kit.retry import Attempts, Backoff

Step = Callable[[], Awaitable[float | None]]

OUTAGES: tuple[type[BaseException], ...] = (RedisError, OSError)
STOP_RECANCEL_S = 1.0  # how long stop() waits for a cancelled step before cancelling it again


class Loop:
    def __init__(
        self,
        name: str,
        step: Step,
        *,
        every_s: float,
        log: logging.Logger,
        backoff: Backoff | None = None,
        outages: tuple[type[BaseException], ...] = OUTAGES,
    ) -> None:
        self.name = name
        self.step = step
        self.every_s = every_s
        self.log = log
        self.outages = outages
        self.attempts = Attempts(backoff)
        self.passes = 0  # steps completed (tests wait on progress with it)
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Start the loop (once: a second start while it runs does nothing)."""
        if not self.running:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        """Cancel the loop and wait until it has ended. Cancelled again until it has: Python
        3.11's asyncio.wait_for swallows a cancellation that arrives as the awaited call finishes
        (gh-86296, fixed in 3.12), so a step connecting with it at that moment would go on (a
        subscription's would listen forever) and a single cancel would wait for it forever."""
        task, self._task = self._task, None
        if task is None:
            return
        while not task.done():
            task.cancel()
            await asyncio.wait((task,), timeout=STOP_RECANCEL_S)
        with contextlib.suppress(asyncio.CancelledError):
            task.result()

    def wake(self) -> None:
        self._wake.set()

    def healthy(self) -> None:
        """The step reached Redis again: end the outage (logged once) and reset the backoff."""
        if self.attempts.failures:
            self.log.info("%s: redis reachable again", self.name, extra={"failures": self.attempts.failures})
        self.attempts.reset()

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                wait = await self.step()
            except asyncio.CancelledError:
                raise
            except self.outages:
                if self.attempts.failures == 0:
                    self.log.warning("%s: redis unavailable; retrying with backoff", self.name)
                await self._pause(self.attempts.next_delay())
                continue
            except Exception:
                self.log.exception("%s: one pass failed", self.name)
                wait = None
            else:
                self.healthy()
            self.passes += 1
            await self._pause(self.every_s if wait is None else wait)

    async def _pause(self, wait_s: float) -> None:
        if wait_s > 0 and not self._wake.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait_s)
