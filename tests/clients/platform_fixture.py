"""The whole platform as real processes (as `make run` starts it), for client tests."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlparse, urlunparse

import pytest

from tools.platform import Platform

ENV = {
    "TAFEL_TOKEN_SECRET": "client-tests-secret-0123456789abcdef",
    "TAFEL_LOG_LEVEL": "WARNING",
    "TAFEL_GRACE_S": "1",
    "TAFEL_MIN_PER_MOVE_S": "0.5",
}


def with_db(url: str, db: int) -> str:
    parts = urlparse(url)
    return urlunparse(parts._replace(path=f"/{db}"))


@pytest.fixture(scope="module")
def platform(redis_url: str) -> Iterator[Platform]:
    running = Platform(redis_url=with_db(redis_url, 6), fixed_ports=False, extra_env=ENV).start()
    try:
        yield running
    finally:
        running.stop()
