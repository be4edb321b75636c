"""A short `make soak` in `make test` (marked `chaos`, as the short chaos run is): a minute of
thinking players with a gateway and a rules replica SIGTERMed every 20 s, so the sampling, the
census and the audit of tools/soak.py cannot rot. A minute is too short to judge slopes; the hour
does (docs/benchmarks.md, "Soak"). And the pure parts: key families, slopes, leaks."""

from __future__ import annotations

import asyncio
import math

import pytest

from tools.soak import Census, Sample, SoakSettings, family, game_of, leaks, run_soak, slope_per_hour, steady_segments


@pytest.mark.chaos
@pytest.mark.timeout(300)
async def test_a_minute_of_thinking_players_and_restarts_leaves_nothing_behind() -> None:
    settings = SoakSettings(
        duration_s=60.0, restart_every_s=20.0, games=6, audited_games=1, think_s=1.0, per_move_s=5.0,
        sample_every_s=2.0, warm_up_s=10.0, settle_s=3.0, finished_ttl_s=10, grace_s=2.0, seed=5,
        rss_mib_per_h=1e9, fds_per_h=1e9, tasks_per_h=1e9,  # (a minute says nothing about slopes)
    )
    report = await asyncio.wait_for(run_soak(settings, log=lambda _line: None), 280)
    text = "\n".join(report.lines())
    assert [name for _, name in report.restarts] == ["gateway-0", "connect4-0", "gateway-1", "connect4-1"], text
    assert {s.process for s in report.samples} == {"gateway-0", "gateway-1", "connect4-0", "connect4-1"}
    assert all(not math.isnan(s.tasks) for s in report.samples[:4]), "every server exposes its task count"
    assert all(v is not None for row in report.slopes().values() for v in row.values()), text
    assert report.audit.acked > 0 and report.audit.records_checked > 0, text
    assert report.leaks() == [], text
    assert report.ok, text


def test_key_families_hide_ids_and_hash_tags() -> None:
    assert family("tafel:{gs:17}:g:Ab3dEfGh12:state") == "tafel:{gs:*}:g:*:state"
    assert family("tafel:record:{g:Ab3dEfGh12}") == "tafel:record:{g:*}"
    assert family("tafel:records:p:guest-1a2b:g:connect4") == "tafel:records:p:*:g:connect4"
    assert family("tafel:games:live:connect4") == "tafel:games:live:connect4"
    assert game_of("tafel:{gs:17}:g:Ab3dEfGh12:clock") == "Ab3dEfGh12"
    assert game_of("tafel:{g:Ab3dEfGh12}:rated") == "Ab3dEfGh12"
    assert game_of("tafel:records:g:connect4") is None


def test_slopes_are_pooled_within_segments_so_a_step_between_them_is_no_slope() -> None:
    flat_then_higher = [[(0.0, 10.0), (60.0, 10.0)], [(120.0, 50.0), (180.0, 50.0)]]
    assert slope_per_hour(flat_then_higher) == 0.0
    assert slope_per_hour([[(0.0, 0.0), (1800.0, 5.0), (3600.0, 10.0)]]) == pytest.approx(10.0)
    assert slope_per_hour([[(0.0, 1.0)]]) is None
    samples = [Sample(t, "gateway-0", 1 if t < 100 else 2, t, 0, 0.0) for t in (10.0, 50.0, 90.0, 110.0, 150.0)]
    pieces = steady_segments(samples, "gateway-0", "rss_mib", restarts=[100.0], settle_s=20.0)
    assert pieces == [[(50.0, 50.0), (90.0, 90.0)], [(150.0, 150.0)]]


def test_a_key_of_an_ended_game_without_ttl_is_a_leak_its_record_is_not() -> None:
    start = Census(0.0, {"tafel:{gs:*}:g:*:state": {"keys": 5, "no_ttl": 0}}, {})
    end = Census(
        9.0,
        {"tafel:{gs:*}:g:*:state": {"keys": 5, "no_ttl": 2}, "tafel:record:{g:*}": {"keys": 9, "no_ttl": 9}},
        {"tafel:{gs:*}:g:*:state": {"keys": 2, "no_ttl": 2, "max_ttl_s": -1},
         "tafel:record:{g:*}": {"keys": 9, "no_ttl": 9, "max_ttl_s": -1}},
    )
    assert leaks(start, end) == ["tafel:{gs:*}:g:*:state: 2 keys of ended games without a TTL"]
    assert leaks(start, Census(9.0, {"tafel:stray": {"keys": 3, "no_ttl": 3}}, {})) == [
        "tafel:stray: keys without a TTL grew 0 -> 3"
    ]
