"""Background work: the platform's one start/stop/backoff loop.

A sweeper, a subscription listener or a feed reader is a ``Loop`` around one async ``step``:

    self.loop = Loop("rating sweeper", self._sweep_step, every_s=30.0, log=log)
    self.loop.start()        # in the composition root's start
    await self.loop.stop()   # cancels the task and waits for it

``step()`` does one pass and returns the seconds until the next one (``None``: ``every_s``; 0:
again at once). A step that never returns (a subscription: subscribe, then listen) calls
``loop.healthy()`` once it is connected, so its next outage backs off from the first delay again.

Failures:
- Redis out of reach (``is_outage``: a lost or refused connection, a timeout, Redis answering
  that it cannot serve now; or the ``outages`` given) is an outage: logged once as a warning when it
  begins (not once per try), the step retried with backoff (kit/retry.py), and logged once more
  when a step succeeds again;
- any other exception is a bug (ours, or an error a script or Redis answered for what we sent: a
  ``ResponseError``, a script file missing from the installed package), never "Redis
  unavailable": logged with its stack trace when a run of failing passes begins, the passes
  retried with the same backoff (one bad pass must not stop the sweeps, and a pass that fails
  every time must not flood the log), and logged once more when a pass succeeds again.
The loop's task never ends but by ``stop()``. ``wake()`` runs the next pass now instead of after
its wait (new work arrived).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable

from redis.exceptions import RedisError

from kit import errors
from kit.retry import Attempts, Backoff

Step = Callable[[], Awaitable[float | None]]

# Besides Redis's own (kit/errors.py is_outage), the network to it failing: refused, reset,
# timed out, a name that does not resolve (yet). Not OSError as a whole: a FileNotFoundError is a
# file missing from the package, and counting it as an outage logged "redis unavailable" and
# "reachable again" every lease while Redis was fine.
NETWORK: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError, socket.gaierror)


def is_outage(error: BaseException) -> bool:
    """Whether `error` says Redis is out of reach (retry later), rather than a bug: a lost or
    refused connection, a timeout, Redis answering that it cannot serve now (LOADING, READONLY,
    CLUSTERDOWN, ...). An error reply to what we sent (a ResponseError such as WRONGTYPE) is not."""
    if isinstance(error, RedisError):
        return errors.is_outage(error)
    return isinstance(error, NETWORK)


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
        outages: tuple[type[BaseException], ...] | None = None,
    ) -> None:
        """`outages`: the exceptions that count as an outage for this step (default: is_outage)."""
        self.name = name
        self.step = step
        self.every_s = every_s
        self.log = log
        self.outages = outages
        self.attempts = Attempts(backoff)
        self.broken = Attempts(backoff)  # consecutive passes that failed with a bug
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
            except Exception as error:
                if self._outage(error):
                    if self.attempts.failures == 0:
                        self.log.warning("%s: redis unavailable; retrying with backoff", self.name)
                    await self._pause(self.attempts.next_delay())
                    continue
                if self.broken.failures == 0:
                    self.log.exception("%s: a pass failed; retrying with backoff", self.name)
                self.passes += 1
                await self._pause(max(self.every_s, self.broken.next_delay()))
                continue
            self.healthy()
            if self.broken.failures:
                self.log.info("%s: passes succeed again", self.name, extra={"failures": self.broken.failures})
                self.broken.reset()
            self.passes += 1
            await self._pause(self.every_s if wait is None else wait)

    def _outage(self, error: Exception) -> bool:
        return isinstance(error, self.outages) if self.outages is not None else is_outage(error)

    async def _pause(self, wait_s: float) -> None:
        if wait_s > 0 and not self._wake.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait_s)
