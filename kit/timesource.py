"""The platform's wall clock, which a test may move forward (a week of correspondence in seconds).

Every deadline is computed from this module's now_ns/now_ms (the rules services' commit in
services/host/service.py, the gateway's clocks, vacations and notices), never from time.time.

Off (production, and every run that does not ask for it): ``now_ns`` IS ``time.time_ns`` (the same
builtin, bound at import), so the hot move path costs exactly what it did.

On: ``TAFEL_TIME_OFFSET_FILE=<path>`` together with ``TAFEL_TEST_TIME=on``. The file holds an offset
in milliseconds added to the real clock; a test writes a bigger number to jump ahead. Why a file:
every process of a test platform (the gateways and each rules service) must see the same time, the
read must be synchronous (a deadline is computed inside the commit's judging, no await there) and
cheap (re-read at most every 5 ms, by its modification time), and a file outlives a restart of the
platform as the test's simulated time must. A Redis key would have needed an await or a blocking
round trip in every process's hot path. One variable alone stops the process at start (an offset
file left in a production environment without the test switch is a mistake, not a wish), and a
process running on moved time says so with a warning at start (``announce``).

Redis's own clock (TTLs) is not moved: a simulated week expires no key.

This module reads the environment itself, at import, as kit/grpc_polling.py does: the clock must be
the same for every caller from the first line, before any settings object exists.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

OFFSET_FILE_ENV = "TAFEL_TIME_OFFSET_FILE"
SWITCH_ENV = "TAFEL_TEST_TIME"
_REREAD_NS = 5_000_000

log = logging.getLogger("tafel.kit.timesource")


class TimeSourceError(RuntimeError):
    """The moved clock was asked for without its explicit test switch."""


def _configured() -> str:
    path = os.environ.get(OFFSET_FILE_ENV, "")
    switch = os.environ.get(SWITCH_ENV, "")
    if path and switch != "on":
        raise TimeSourceError(
            f"{OFFSET_FILE_ENV} is set but {SWITCH_ENV} is not 'on': a moved clock is for tests only; "
            f"unset {OFFSET_FILE_ENV} (or set {SWITCH_ENV}=on in a test)"
        )
    if switch and switch != "on":
        raise TimeSourceError(f"{SWITCH_ENV} must be 'on' or unset")
    if switch == "on" and not path:
        raise TimeSourceError(f"{SWITCH_ENV}=on needs {OFFSET_FILE_ENV} (the file holding the offset in ms)")
    return path


class _OffsetFile:
    """The offset (ns) read from the file, again when 5 ms have passed and the file changed."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset_ns = 0
        self.checked_ns = -_REREAD_NS
        self.stamp: tuple[int, int] = (-1, -1)

    def now_ns(self) -> int:
        mono = time.monotonic_ns()
        if mono - self.checked_ns >= _REREAD_NS:
            self.checked_ns = mono
            try:
                stat = os.stat(self.path)
                if (stat.st_ino, stat.st_mtime_ns) != self.stamp:
                    with open(self.path, encoding="ascii") as handle:
                        text = handle.read().strip()
                    self.offset_ns = int(text or "0") * 1_000_000
                    self.stamp = (stat.st_ino, stat.st_mtime_ns)
            except (OSError, ValueError):
                pass  # missing or half-written: keep the last offset
        return time.time_ns() + self.offset_ns


OFFSET_FILE = _configured()
_source = _OffsetFile(OFFSET_FILE) if OFFSET_FILE else None

# Nanoseconds since the epoch, as the platform sees them.
now_ns: Callable[[], int] = _source.now_ns if _source is not None else time.time_ns


def now_ms() -> int:
    return now_ns() // 1_000_000


def _shifted_s() -> float:
    return now_ns() / 1e9


# Seconds since the epoch (a float), as time.time: time.time itself when off.
now_s: Callable[[], float] = _shifted_s if _source is not None else time.time


def moved() -> bool:
    """Whether this process runs on a test's moved clock."""
    return _source is not None


def announce() -> None:
    """Say loudly at start that the clock is a test's (each server's entry point calls this)."""
    if _source is not None:
        log.warning(
            "TEST CLOCK: time is moved by the offset in %s (%s=on); never in production",
            OFFSET_FILE,
            SWITCH_ENV,
            extra={"offset_ms": (now_ns() - time.time_ns()) // 1_000_000},
        )


def write_offset(path: str, offset_ms: int) -> None:
    """For tests: set the offset every process reading `path` sees (atomically: no half-written
    file is ever read)."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="ascii") as handle:
        handle.write(str(int(offset_ms)))
    os.replace(tmp, path)
