"""kit/retry.py and kit/loops.py: the one backoff and the one background loop."""

from __future__ import annotations

import asyncio
import logging

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from kit.loops import Loop
from kit.retry import Attempts, Backoff, retrying


def test_backoff_grows_to_the_cap_and_jitter_only_shortens() -> None:
    backoff = Backoff(first_s=0.1, cap_s=1.0, factor=2.0, jitter=0.5)
    assert [backoff.delay(n, draw=lambda: 0.0) for n in range(6)] == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0, 1.0])
    assert backoff.delay(10, draw=lambda: 1.0) == pytest.approx(0.5)
    assert all(0.05 <= backoff.delay(0) <= 0.1 for _ in range(100))


def test_attempts_count_and_reset() -> None:
    attempts = Attempts(Backoff(first_s=1.0, cap_s=8.0, jitter=0.0))
    assert [attempts.next_delay() for _ in range(3)] == [1.0, 2.0, 4.0]
    attempts.reset()
    assert attempts.next_delay() == 1.0


async def test_retrying_returns_after_failures_and_gives_up_with_the_last_error() -> None:
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise RedisConnectionError("down")
        return "ok"

    fast = Backoff(first_s=0.001, cap_s=0.001)
    assert await retrying(flaky, on=(RedisConnectionError,), attempts=3, backoff=fast) == "ok"
    assert calls == 3

    calls = 0
    with pytest.raises(RedisConnectionError):
        await retrying(flaky, on=(RedisConnectionError,), attempts=2, backoff=fast)
    assert calls == 2

    async def wrong() -> str:
        raise ValueError("not retried")

    with pytest.raises(ValueError):
        await retrying(wrong, on=(RedisConnectionError,), attempts=5, backoff=fast)


async def test_loop_backs_off_through_an_outage_logging_it_once(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("tafel.test.loops")
    outage = 5
    recovered = asyncio.Event()

    async def step() -> float | None:
        nonlocal outage
        if outage:
            outage -= 1
            raise RedisConnectionError("down")
        recovered.set()
        return 60.0  # the next pass waits for wake()

    loop = Loop("test sweeper", step, every_s=60.0, log=log, backoff=Backoff(first_s=0.001, cap_s=0.002))
    with caplog.at_level(logging.INFO, logger="tafel.test.loops"):
        loop.start()
        loop.start()  # a second start is a no-op
        await asyncio.wait_for(recovered.wait(), 5.0)
        assert loop.running and loop.passes == 1 and loop.attempts.failures == 0
        loop.wake()
        passes = loop.passes
        recovered.clear()
        await asyncio.wait_for(recovered.wait(), 5.0)  # woken long before every_s
        assert loop.passes >= passes
        await loop.stop()
    assert not loop.running
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "redis unavailable" in warnings[0].getMessage()
    assert any("reachable again" in r.getMessage() for r in caplog.records)


async def test_loop_survives_a_failing_pass(caplog: pytest.LogCaptureFixture) -> None:
    passes: list[int] = []
    done = asyncio.Event()

    async def step() -> float | None:
        passes.append(len(passes))
        if len(passes) == 1:
            raise RuntimeError("bug in one pass")
        done.set()
        return None

    loop = Loop("test buggy", step, every_s=0.001, log=logging.getLogger("tafel.test.loops"))
    with caplog.at_level(logging.ERROR, logger="tafel.test.loops"):
        loop.start()
        await asyncio.wait_for(done.wait(), 5.0)
        await loop.stop()
    assert len(passes) >= 2
    assert any(r.exc_info for r in caplog.records)


async def test_stop_ends_a_step_that_swallowed_its_cancellation(monkeypatch: pytest.MonkeyPatch) -> None:
    # Python 3.11's asyncio.wait_for can swallow a cancellation that meets the awaited call's end:
    # the step then goes on (here, listens forever). stop() cancels again until the task is done.
    monkeypatch.setattr("kit.loops.STOP_RECANCEL_S", 0.05)
    entered = asyncio.Event()
    swallowed = 0

    async def step() -> float | None:
        nonlocal swallowed
        entered.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            swallowed += 1  # as wait_for does when its inner call finished at that moment
        await asyncio.sleep(3600)  # "listening": only a second cancellation ends it
        return None

    loop = Loop("listener", step, every_s=1.0, log=logging.getLogger("test"))
    loop.start()
    await asyncio.wait_for(entered.wait(), 5)
    # (asyncio.wait, not wait_for: a timeout must not cancel stop(), which would end the step.)
    stopping = asyncio.get_running_loop().create_task(loop.stop())
    done, _ = await asyncio.wait((stopping,), timeout=5)
    assert stopping in done, "stop() is still waiting for the step"
    assert swallowed == 1 and not loop.running
