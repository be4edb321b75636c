"""The tests' whole platforms: the system as `make run` starts it (tools/platform.py: real rules
services, gateways with their web edge, a bot pool), on a Redis database named in tests/keyspace.py.

    platform = platform_fixture()                                   # a module's platform
    two_gateways = platform_fixture("graceful stop", gateways=2, bot_pool=False)
    platform = platform_fixture(env={"TAFEL_ARENA_MIN_S": "5"})     # settings over ENV's

A module names what it needs (a database, settings, Platform's arguments) and gets a fixture that
starts it once for the module and stops it after. The client, web edge, web app, load generator
and conformance tests use it.

Kept apart, for what they do differently:
- tests/gateway/conftest.py's `gw_system`: one rules service and two gateways shared by the whole
  session (per module on a cluster), not a platform per module: the gateway tests are many and
  short, and a platform's start is seconds;
- tests/gateway/tournaments/e2e.py's and correspondence's `Platform`: rules services on fixed ports,
  restarted in place mid-test, and a moved clock;
- tests/clients/test_typescript_sdk.py's TLS platform: certificates made for it first;
- tests/deploy and tests/containers: the images and their orchestrators, not processes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

import pytest

from tests.keyspace import with_db
from tools.platform import Platform

ENV = {
    "TAFEL_TOKEN_SECRET": "client-tests-secret-0123456789abcdef",
    "TAFEL_LOG_LEVEL": "WARNING",
    "TAFEL_GRACE_S": "1",
    "TAFEL_MIN_PER_MOVE_S": "0.5",
}

Env = Mapping[str, str] | Callable[[pytest.FixtureRequest], Mapping[str, str]]


def platform_fixture(
    database: str = "platform",
    *,
    env: Env | None = None,
    base: Mapping[str, str] = ENV,
    scope: Literal["module", "function"] = "module",
    **asked: Any,
) -> Any:
    """A fixture that starts a Platform on `database` with `base` and `env` over it (a mapping, or a
    function of the fixture's request for settings that need another fixture: a mail relay's
    port, a folder), and `asked` (Platform's own arguments: gateways, games, bot_pool); stopped at
    the end of its scope."""

    @pytest.fixture(scope=scope)
    def platform(redis_url: str, request: pytest.FixtureRequest) -> Iterator[Platform]:
        extra = env(request) if callable(env) else (env or {})
        running = Platform(
            redis_url=with_db(redis_url, database), fixed_ports=False, extra_env={**base, **extra}, **asked
        ).start()
        try:
            yield running
        finally:
            running.stop()

    return platform
