"""The whole platform as real processes (as `make run` starts it), for client tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.keyspace import with_db
from tools.platform import Platform

ENV = {
    "TAFEL_TOKEN_SECRET": "client-tests-secret-0123456789abcdef",
    "TAFEL_LOG_LEVEL": "WARNING",
    "TAFEL_GRACE_S": "1",
    "TAFEL_MIN_PER_MOVE_S": "0.5",
}


@pytest.fixture(scope="module")
def platform(redis_url: str) -> Iterator[Platform]:
    running = Platform(redis_url=with_db(redis_url, 6), fixed_ports=False, extra_env=ENV).start()
    try:
        yield running
    finally:
        running.stop()
