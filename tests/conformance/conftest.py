"""One platform (real processes, as `make run` starts it) for the conformance tests; the clients
need a clock minimum low enough for the kit's short-clock scenario."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.clients.platform_fixture import ENV, with_db
from tools.platform import Platform


@pytest.fixture(scope="module")
def client_platform(redis_url: str) -> Iterator[Platform]:
    running = Platform(redis_url=with_db(redis_url, 12), fixed_ports=False, extra_env=ENV, bot_pool=False).start()
    try:
        yield running
    finally:
        running.stop()
