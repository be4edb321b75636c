"""A short `make chaos` in `make test` (marked `chaos`): a minute of gateways and rules replicas
SIGKILLed and SIGTERMed under live games, then every record replayed through the rules and every
acknowledged move found (tools/chaos.py). The load generator must play through it: a run whose
load died is a failure, not a pass."""

from __future__ import annotations

import asyncio

import pytest

from tools.chaos import ChaosSettings, Report, run_chaos


@pytest.mark.chaos
@pytest.mark.timeout(400)
async def test_a_minute_of_kills_and_stops_under_load_loses_nothing() -> None:
    settings = ChaosSettings(
        duration_s=60.0, games=4, audited_games=1, interval_s=6.0, signal="both", per_move_s=2.0, seed=3
    )
    report = await asyncio.wait_for(run_chaos(settings, log=lambda _line: None), 360)
    assert {how for _, _, how in report.failures} == {"kill", "term"}, report.failures
    assert report.records_checked > 0 and report.acked > 0
    assert report.loadgen_moves >= settings.loadgen_floor > 0, "\n".join(report.lines())
    assert report.clients_died == 0, "\n".join(report.lines())
    assert report.ok, "\n".join(report.lines())


def test_a_run_whose_load_died_or_fell_short_is_not_a_pass() -> None:
    died = Report(loadgen_floor=100, loadgen_moves=5000)
    died.client_errors["CLIENT_PROCESS_DIED"] = 1
    assert died.clients_died == 1 and not died.ok and died.as_dict()["ok"] is False
    assert not Report(loadgen_floor=100, loadgen_moves=99).ok
    assert not Report(loadgen_floor=100, loadgen_moves=5000, loadgen_failure="AttributeError: ...").ok
    assert not Report(loadgen_floor=100, loadgen_moves=5000, players_crashed=1).ok
    assert Report(loadgen_floor=100, loadgen_moves=100).ok
