"""A short `make chaos`: gateways and rules replicas killed and stopped under live games, then every
record replayed through the rules and every acknowledged move found (tools/chaos.py)."""

from __future__ import annotations

import asyncio

from tools.chaos import ChaosSettings, run_chaos


async def test_a_short_chaos_run_loses_nothing() -> None:
    settings = ChaosSettings(
        duration_s=10.0, games=2, audited_games=1, interval_s=2.5, signal="both", per_move_s=2.0, seed=3
    )
    report = await asyncio.wait_for(run_chaos(settings, log=lambda _line: None), 150)
    assert len(report.failures) >= 2, report.failures
    assert {how for _, _, how in report.failures} == {"kill", "term"}
    assert report.records_checked > 0 and report.acked > 0
    assert report.ok, "\n".join(report.lines())
