"""A pytest plugin (tests/conftest.py loads it): the suite fails when a server's log says a
background task failed unseen ("Task exception was never retrieved", kit/tasks.py), in a server
process that tools/platform.py or tests/gateway/harness.py started, or in the test process itself
(servers started in it, asyncio's own logger)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tools.platform import FORBIDDEN_IN_LOGS, forbidden_seen


class _Watch(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if any(text in message for text in FORBIDDEN_IN_LOGS):
            forbidden_seen.append(f"test process ({record.name}): {message}")


_handler = _Watch()
_reported = 0


def pytest_configure(config: pytest.Config) -> None:
    logging.getLogger("asyncio").addHandler(_handler)


def _new() -> list[str]:
    global _reported
    new = forbidden_seen[_reported:]
    _reported = len(forbidden_seen)
    return new


@pytest.fixture(autouse=True)
def no_unretrieved_task_failures() -> Iterator[None]:
    """Fails the test in whose time a server logged a task failure that nobody retrieved (a line
    that arrives later, as a process ends, fails the next test or the session)."""
    yield
    new = _new()
    if new:
        pytest.fail("a server logged a failed background task nobody retrieved:\n" + "\n".join(new[:5]), pytrace=False)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    new = _new()
    if new:
        print("\na server logged a failed background task nobody retrieved:\n" + "\n".join(new[:5]))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
