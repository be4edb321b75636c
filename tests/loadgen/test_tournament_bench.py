"""The organiser's-size tournament benchmark (tools/bench_tournament.py) at a smoke test's size:
the same command, its figures, and the standings checker (tools/check_tournament.py) passing on
one Redis and on the local Redis Cluster with a gateway SIGKILLed mid-round; and the checker
failing on standings that do not follow from the records."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tafel.client import TafelClient
from tafel.play.v1 import tournaments_pb2

from tools import bench_tournament, check_tournament
from tools.platform import Platform


def bench(**more: Any) -> dict[str, Any]:
    args = argparse.Namespace(
        players=64,
        rounds=3,
        think=0.05,
        think_sigma=0.5,
        gateways=1,
        cluster=False,
        kill_round=0,
        kill_after_s=1.0,
        seed=38,
        arena=0.0,
        log="",
    )
    vars(args).update(more)
    return bench_tournament.run(args)


def check_figures(report: dict[str, Any], players: int, rounds: int) -> None:
    assert report["loadgen_exit"] == 0
    loadgen = report["loadgen"]
    assert loadgen["errors"] == {}
    assert loadgen["games_finished"] == rounds * players // 2
    assert loadgen["latency_ms"]["samples"] == loadgen["moves"] > 0
    figures = loadgen["tournament"]["rounds"]
    assert [row["round"] for row in figures] == list(range(1, rounds + 1))
    for row in figures:
        assert row["games"] == players // 2
        assert 0 < row["round_start_p50_ms"] <= row["round_start_max_ms"] < 60_000
        assert row["pairing_ms"] is not None
    assert report["redis_used_memory_mib_peak"] > 0
    assert any(s["process"] == "gateway" and s["peak_rss_mib"] > 0 for s in loadgen["servers"])
    check = report["check"]
    assert check["ok"], check["problems"]
    assert check["final"] and check["players"] == players and check["records_read"] == rounds * players // 2
    assert check["missed_games"] == 0, "every bot played its games"


def test_swiss_of_64_over_3_rounds_figures_and_standings_checked(tmp_path: Path) -> None:
    servers = tmp_path / "servers.log"
    report = bench(log=str(servers))
    check_figures(report, 64, 3)
    assert report["loadgen"]["retried"] == {}, "no move refused as unavailable on a quiet platform"
    lines = servers.read_text(encoding="utf-8")
    assert "gateway-0: LISTENING gateway" in lines and "connect4-0: LISTENING connect4" in lines


def test_on_the_cluster_with_a_gateway_killed_in_round_2_no_game_is_lost() -> None:
    report = bench(players=32, cluster=True, gateways=2, kill_round=2, think=0.1)
    assert report["killed"]["process"] == "gateway-1"
    check_figures(report, 32, 3)


async def test_the_checker_finds_standings_that_the_records_do_not_give(platform: Platform) -> None:
    """A finished tournament whose stored result of one game is changed behind the records' back:
    the checker names the game and the standings it moved."""
    args = argparse.Namespace(players=8, rounds=2, format="swiss", game="connect4", seed=8, think=0.0)
    from tafel_loadgen.tournament import run_tournament

    stats = await run_tournament(platform.gateway_addresses, args)
    assert not stats.errors
    client = await TafelClient.connect(platform.gateway_addresses)
    await client.sign_in_as_guest()
    try:
        clean = await check_tournament.check_tournament(client, stats.tournament_id)
        assert clean["ok"], clean["problems"]
        assert clean["records_read"] == 8

        real = client.get_record

        async def swapped(game_id: str) -> Any:
            record = await real(game_id)
            if game_id.endswith("-r1b1"):
                ranks = list(record.outcome.ranks)
                del record.outcome.ranks[:]
                record.outcome.ranks.extend(reversed(ranks) if ranks[0] != ranks[1] else [0, 1])
            return record

        client.get_record = swapped  # type: ignore[method-assign]
        found = await check_tournament.check_tournament(client, stats.tournament_id)
        assert not found["ok"]
        assert any("round 1 board 1" in problem for problem in found["problems"])
        assert any(problem.startswith("place ") for problem in found["problems"])
        state = await client.get_tournament(stats.tournament_id)
        assert state.state == tournaments_pb2.TOURNAMENT_STATE_FINISHED
    finally:
        await client.close()


def test_engine_only_times_each_round() -> None:
    report = bench_tournament.engine_only(200, 3, seed=1)
    assert [row["round"] for row in report["rounds"]] == [1, 2, 3]
    assert all(row["pairing_ms"] >= 0 and row["state_kib"] > 0 for row in report["rounds"])


def test_arena_of_40_for_half_a_minute() -> None:
    report = bench(players=40, arena=0.5, think=0.1)
    assert report["loadgen_exit"] == 0 and report["loadgen"]["errors"] == {}
    arena = report["loadgen"]["tournament"]["arena"]
    assert arena["games"] >= 20 and arena["same_opponent_twice_in_a_row"] == 0
    assert arena["free_to_paired_again_ms"]["samples"] > 0
    assert report["loadgen"]["games_finished"] == arena["games"]
