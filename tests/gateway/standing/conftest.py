"""Show the gateways' logs when a standing test fails (their errors are logged, not returned)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def gateway_logs_on_failure(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed and "gw_system" in request.fixturenames:
        system = request.getfixturevalue("gw_system")
        for proc in system.gateways:
            print(f"--- {proc.name}\n" + "\n".join(proc.output[-40:]))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
