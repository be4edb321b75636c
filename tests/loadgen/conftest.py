"""The load generator's smoke tests run against the whole platform, as the client tests do; the
Go players' tests need the built program."""

import os
from pathlib import Path

import pytest
from tafel_loadgen import go_client

from tests.platforms import platform_fixture

platform = platform_fixture()


@pytest.fixture(scope="module")
def go_players() -> Path:
    """The built program (`make loadgen-go`, which `make test` runs); CI must have it."""
    try:
        return go_client.binary()
    except FileNotFoundError as missing:
        if os.environ.get("CI") == "true":
            pytest.fail(str(missing))
        pytest.skip(str(missing))


__all__ = ["go_players", "platform"]
