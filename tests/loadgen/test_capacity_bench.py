"""Capacity at human pace (tools/bench_capacity.py, the Go players' `--capacity` scenario in
clients/loadgen/go/human.go) at a smoke test's size: the harness's own platform with two gateways,
one step and a hold, every figure read for real; half the players on the web edge (connect.go),
theirs and the gRPC players' figures apart, and a refused move reading the same on both; a game
lost on the clock counted as an error; and the harness naming the resource that ran out."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tafel_loadgen import go_client

from tools import bench_capacity
from tools.platform import Platform


def capacity_args(**more: Any) -> argparse.Namespace:
    args = argparse.Namespace(
        target=200,
        step=200,
        settle=3.0,
        window=10.0,
        hold=10.0,
        gateways=2,
        # The figures are checked here, not this machine's latency (other work shares its cores).
        p99_ms=5_000.0,
        think_mean=0.5,
        think_sigma=0.75,
        per_move=5.0,
        pause=0.5,
        spectators=0.1,
        connect_rate=500,
        seed=40,
        web_share=0.0,
    )
    vars(args).update(more)
    return args


def check_row(row: dict[str, Any], players: int) -> None:
    assert row["errors"] == {} and row["games_timed_out"] == 0
    # Every player connected and kept its stream; a tenth of them watching, the rest in games.
    assert row["players"] == row["connected"] == players
    assert 0 < row["watching"] <= players // 10
    assert 0 < row["live_games"] <= players // 2
    assert row["moves_per_s"] > 20 and row["games_finished"] > 0 and row["games_watched"] > 0
    latency = row["latency_ms"]
    assert latency["samples"] > 100 and 0 < latency["p50"] <= latency["p99"] <= latency["max"] < 5_000
    # The think times drawn have about the asked mean (0.5 s), capped under the 5 s clock.
    assert 0.3 < row["think_s"]["mean"] < 0.7 and row["think_s"]["max"] <= 3.75
    # The servers' and the load generator's CPU, memory and descriptors read from /proc and Redis.
    assert row["server_cores"] > 0 and row["gateway_cores"] > 0 and row["loadgen_cores"] > 0
    assert row["gateway_processes"] == 2 and row["gateway_rss_mib"] > 0 and row["gateway_kib_per_player"] > 0
    assert row["redis_used_mib"] > 0 and row["redis_kib_per_live_game"] > 0
    # A descriptor per player in the gateways (spread over both) and in the load generator.
    assert row["gateway_fds"] >= players and row["loadgen_fds"] >= players
    assert row["gateway_fd_limit"] > players


@pytest.mark.usefixtures("go_players")
def test_a_small_ramp_and_hold_reports_real_figures(tmp_path: Path) -> None:
    report = bench_capacity.run(capacity_args())
    assert report["highest_passing_players"] == 200 and "limit" not in report, report.get("limit")
    (step,) = report["steps"]
    check_row(step, 200)
    assert report["hold_meets_bar"] is True
    check_row(report["hold"], 200)
    # Every second counted: connected players, live games and moves, from the first second on.
    seconds = report["per_second"]
    assert len(seconds) >= 20 and max(s[1] for s in seconds) == 200 and sum(s[3] for s in seconds) > 0
    assert json.loads(json.dumps(report)) == report  # the one JSON line


@pytest.mark.usefixtures("go_players")
def test_a_game_lost_on_the_clock_is_an_error(platform: Platform) -> None:
    """Think times allowed past the per-move clock: the games that time out are counted, so the
    benchmark's "errors 0" covers the clocks too."""
    command = [
        str(go_client.binary()), "--capacity", "--gateways", platform.gateway_addresses[0],
        "--players", "20", "--spectators", "0", "--per-move", "5s",
        "--think-mean", "5s", "--think-sigma", "0.3", "--think-cap", "9s", "--pause", "100ms",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdin is not None
        for line in process.stdout:
            tick = json.loads(line.split(" ", 1)[1]) if line.startswith("tick ") else {}
            if tick.get("t", 0) >= 15:
                break
        process.stdin.write("report\n")
        process.stdin.flush()
        report = json.loads(next(line for line in process.stdout if line.startswith("report "))[len("report ") :])
    finally:
        process.kill()
        process.wait()
    assert report["games_timed_out"] > 0
    assert report["errors"]["GAME_TIMED_OUT"] == report["games_timed_out"]


@pytest.mark.usefixtures("go_players")
def test_half_the_players_on_the_web_edge() -> None:
    """Half the players arrive as browsers (the edge's Connect calls, an HTTP client each): they
    play their games to the end with the gRPC players, and each transport's latencies are its own."""
    report = bench_capacity.run(capacity_args(web_share=0.5, hold=0.0))
    assert report["highest_passing_players"] == 200 and report["web_share"] == 0.5, report.get("limit")
    (row,) = report["steps"]
    assert row["errors"] == {} and row["games_timed_out"] == 0
    assert row["players"] == row["connected"] == 200 and row["games_finished"] > 0 and row["games_watched"] > 0
    web, grpc = row["transports"]["web"], row["transports"]["grpc"]
    assert web["players"] + grpc["players"] == 200 and abs(web["players"] - 100) <= 3
    for transport in (web, grpc):
        latency = transport["latency_ms"]
        assert latency["samples"] > 50 and 0 < latency["p50"] <= latency["p99"] <= latency["max"] < 5_000
    assert web["latency_ms"]["samples"] + grpc["latency_ms"]["samples"] == row["latency_ms"]["samples"]
    # An edge player holds a socket or more (a stream, a unary call's kept-alive connection).
    assert row["loadgen_fds"] >= 200
    assert bench_capacity.meets(row, 5_000.0) and not bench_capacity.meets(
        {**row, "transports": {**row["transports"], "web": {**web, "latency_ms": {**web["latency_ms"], "p99": 6e3}}}},
        5_000.0,
    )


@pytest.mark.usefixtures("go_players")
def test_a_refused_move_reads_the_same_on_both_transports(platform: Platform) -> None:
    """clients/loadgen/go/connect_test.go against this platform: a gRPC player and an edge player
    meet in a game, and each one's move against a stale version (and a move in no game) is
    counted as the same error kind, with the same code, ErrorInfo reason and current version."""
    go = shutil.which("go")
    if go is None:
        pytest.skip("no Go toolchain")
    out = go_client.binary().parent  # clients/loadgen/go/build.sh's folder, the sources copied in
    env = {
        **os.environ,
        "GO111MODULE": "off",
        "GOPATH": f"{out}:/usr/share/gocode",
        "GOCACHE": str(out / "cache"),
        "GOFLAGS": "-trimpath",
        "TAFEL_TEST_GATEWAY": platform.gateway_addresses[0],
        "TAFEL_TEST_WEB": platform.web_urls[0],
    }
    done = subprocess.run(
        [go, "test", "-count=1", "-v", "."],
        cwd=out / "src" / "tafel.dev" / "loadgen",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for test in ("TestARefusedMoveReadsTheSameOnBothTransports", "TestConnectErrorsReadAsGRPCStatuses"):
        assert f"--- PASS: {test}" in done.stdout, done.stdout


def step_row(**more: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "players": 1000,
        "connected": 1000,
        "latency_ms": {"p99": 150.0},
        "errors": {},
        "server_cores": 0.6,
        "gateway_cores": 0.4,
        "gateway_cores_busiest": 0.4,
        "rules_cores": 0.1,
        "redis_cores": 0.1,
        "loadgen_cores": 0.2,
        "gateway_fds": 1100,
        "gateway_fd_limit": 20_000,
        "gateway_processes": 1,
        "mem_available": 0.8,
        "machine_cores_busy": 0.9,
        "load_avg": 0.5,
    }
    base.update(more)
    return base


def test_the_resource_that_ran_out_is_named() -> None:
    cores = os.cpu_count() or 1
    assert bench_capacity.limit_of(step_row(), 100).startswith("latency with CPU to spare")
    busy = step_row(server_cores=cores * 0.8, loadgen_cores=cores * 0.15)
    assert bench_capacity.limit_of(busy, 100).startswith("CPU saturated:")
    others = step_row(machine_cores_busy=cores * 0.95)
    assert bench_capacity.limit_of(others, 100).startswith("CPU saturated by the machine's other work")
    if cores > 1:
        one_core = step_row(gateway_cores=0.95, gateway_cores_busiest=0.95, server_cores=1.1)
        assert bench_capacity.limit_of(one_core, 100).startswith("a gateway process's one core")
    assert bench_capacity.limit_of(step_row(gateway_fds=19_500), 100).startswith("file descriptors")
    assert bench_capacity.limit_of(step_row(mem_available=0.05), 100).startswith("memory")
    assert bench_capacity.limit_of(step_row(load_avg=cores + 2.0), 100).startswith("CPU contended")
    assert bench_capacity.limit_of(step_row(connected=900), 100).startswith("connections")
    assert bench_capacity.limit_of(step_row(errors={"UNAVAILABLE": 3}), 100).startswith("errors")
