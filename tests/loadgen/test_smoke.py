"""Short versions of the load generator's scenarios against the whole platform (real processes):
bounded, a few seconds each, asserting zero errors — not timing (that is `make bench-load`)."""

from __future__ import annotations

import argparse
import subprocess
import sys

from tafel_loadgen.chat import run_chat
from tafel_loadgen.games import run_games, run_pings
from tafel_loadgen.presence import run_presence
from tafel_loadgen.stats import server_processes
from tafel_loadgen.tournament import run_tournament
from tafel_loadgen.watchers import run_watchers

from tools.platform import ROOT, Platform


async def test_games_scenario_plays_and_replaces_games_without_errors(platform: Platform) -> None:
    stats = await run_games(platform.gateway_addresses, "connect4", games=4, think_s=0.0, duration_s=3.0, seed=1)
    assert not stats.errors
    assert stats.moves > 20 and stats.games_finished >= 1
    assert stats.latencies and stats.matchmaking
    assert max(stats.latencies) < 10.0
    # Measured as the peers' harness measures: from every player's first match on (window.py).
    assert len(stats.first_matchmaking) == 8 and stats.setup_s > 0
    assert 0 < stats.moves <= stats.moves_whole_run


async def test_games_scenario_for_the_other_games(platform: Platform) -> None:
    for game, seats in (("plus4", 2), ("coloursquare", 3)):
        # A next search needs a game over inside the 3 s window, which a Colour Square game (~200
        # actions) does not always manage on a busy machine (seen under `make test`: 288 actions,
        # none finished): runs are repeated, a bounded number of times, until one has it.
        for attempt in range(5):
            stats = await run_games(
                platform.gateway_addresses, game, games=2, think_s=0.0, duration_s=3.0, seed=2 + attempt, seats=seats
            )
            assert not stats.errors, game
            assert len(stats.first_matchmaking) == 2 * seats and stats.moves > 0, game  # every player matched
            if stats.matchmaking:
                break
        assert stats.matchmaking, f"{game}: no player searched again after a game in 5 runs"


async def test_ping_floor_on_the_play_stream(platform: Platform) -> None:
    stats = await run_pings(platform.gateway_addresses, streams=4, duration_s=1.0)
    assert not stats.errors and stats.pings > 10


async def test_watchers_scenario_holds_spectators_without_errors(platform: Platform) -> None:
    # 2,500 streams opened at once, more than gRPC's default pending-call limit (1,000 soft, 3,000
    # hard) lets through: with it, 10-25 % of them ended CANCELLED (kit/server.py).
    # Every watcher must connect (else WATCHERS_NOT_CONNECTED) and none may fail.
    stats = await run_watchers(platform.gateway_addresses, watchers=2500, live_games=2, hold_s=0.5)
    assert not stats.errors


async def test_tournament_scenario_plays_to_the_end(platform: Platform) -> None:
    args = argparse.Namespace(players=8, rounds=3, format="swiss", game="connect4", seed=3)
    stats = await run_tournament(platform.gateway_addresses, args)
    assert not stats.errors
    assert stats.games_finished == 12 and stats.moves > 0


def test_server_processes_include_every_process_of_the_platform(platform: Platform) -> None:
    # The gateways' process and its siblings (under `make run`: exactly the platform; under pytest
    # the test session's other platforms are siblings too, so only inclusion is checked here).
    found = {p.pid: p for p in server_processes(platform.gateway_addresses)}
    own = {child.process.pid for child in platform.children if child.name != "bot-pool"}
    assert own <= set(found)
    assert {found[pid].name for pid in own if found[pid].kind == "rules"} == {"connect4", "plus4", "coloursquare"}
    assert all(p.kind in ("gateway", "rules", "redis") for p in found.values())


def test_command_line_prints_a_summary_and_one_json_line(platform: Platform) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tafel_loadgen",
            "--gateways",
            platform.gateway_addresses[0],
            "games",
            "--games",
            "2",
            "--duration",
            "2",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    import json

    summary = json.loads(lines[-1])
    assert summary["errors"] == {} and summary["moves"] > 0
    assert {"p50", "p90", "p99", "max"} <= set(summary["latency_ms"])
    assert any(s["process"] == "gateway" and s["peak_rss_mib"] > 0 for s in summary["servers"])
    # The servers' CPU inside the window, and over the whole run (setup included) beside it.
    # The load goes to one gateway; the platform's other gateway is counted too and may idle
    # through the 2 s window (its CPU rounds to 0.00 there).
    gateways = [s for s in summary["servers"] if s["process"] == "gateway"]
    assert all(s["cpu_s"] <= s["whole_run_cpu_s"] for s in gateways)
    assert any(s["cpu_s"] > 0 for s in gateways)
    # Its threads' context switches inside the window, a move's share printed beside its CPU.
    assert any(s["context_switches"] > 0 for s in gateways)
    assert "context switches a move" in done.stdout
    assert summary["setup_s"] > 0 and "setup (not measured)" in done.stdout


async def test_chat_scenario_delivers_every_line_to_every_spectator(platform: Platform) -> None:
    # 10 spectators (4 of them writing) on one live game, 4 lines: every watcher gets every line once.
    stats = await run_chat(platform.gateway_addresses, spectators=10, senders=4, rate=2.0, duration_s=2.0)
    assert not stats.errors  # LINES_MISSING / LINES_DOUBLED / a refused send would be counted here
    assert len(stats.latencies) == 4 * 10 and max(stats.latencies) < 10.0


async def test_presence_scenario_tells_every_follower_online_then_offline(platform: Platform) -> None:
    # 20 followed accounts, 4 followers following 10 each: 40 PresenceChanged a wave, none missing.
    stats = await run_presence(platform.gateway_addresses, followed=20, followers=4, follows=10, settle_s=5.0)
    assert not stats.errors  # PRESENCE_MISSING / PRESENCE_DOUBLED per wave would be counted here
    assert len(stats.latencies) == 2 * 40 and max(stats.latencies) < 10.0
