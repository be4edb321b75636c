"""The Go players (clients/loadgen/go, `tafel_loadgen games --client go`): against the whole
platform, and the line protocol with their Python parent (go_client.py) with stand-in programs."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tafel.client import TafelClient
from tafel_loadgen import go_client
from tafel_loadgen.window import Board

from tools.platform import ROOT, Platform


def loadgen(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tafel_loadgen", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.usefixtures("go_players")
def test_go_players_play_whole_games_through_the_platform(platform: Platform) -> None:
    gateway = platform.gateway_addresses[0]
    done = loadgen(
        "--gateways", gateway, "--processes", "2", "games", "--client", "go", "--games", "3", "--duration", "3"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["client"] == "go" and summary["errors"] == {}
    # Games played to their end and searched again, each move's latency measured at the opponent.
    assert summary["games_finished"] >= 3 and summary["moves"] > 50
    assert 0 < summary["latency_ms"]["p50"] <= summary["latency_ms"]["max"] < 5_000
    # A latency needs both players in one process (the submit's time is the mover's): games paired
    # across the two processes have none, as with the Python players.
    assert summary["latency_ms"]["samples"] > 0.2 * summary["moves"]
    assert summary["matchmaking_wait_ms"]["p50"] > 0
    assert 0 < summary["moves"] <= summary["moves_whole_run"]
    # The window opened once all 6 players of both Go processes had their first match.
    assert summary["setup_s"] > 0
    # Its own CPU is counted (every Go thread), and the servers' inside the window.
    assert summary["client_cpu_s"] > 0 and summary["client_cpu_us_per_move"] > 0
    # This platform's own gateway and Connect Four service (by pid: the load generator measures
    # every sibling of the gateway's process, and here that is every process pytest started).
    ours = {child.process.pid for child in platform.children if child.name in ("gateway-0", "connect4-0")}
    measured = {s["pid"]: s for s in summary["servers"]}
    assert len(ours) == 2 and ours <= measured.keys(), summary["servers"]
    assert all(measured[pid]["cpu_s"] > 0 for pid in ours), summary["servers"]


@pytest.mark.usefixtures("go_players")
async def test_go_players_games_are_on_record_as_the_platform_played_them(platform: Platform) -> None:
    gateway = platform.gateway_addresses[0]
    started = time.time()
    done = loadgen("--gateways", gateway, "games", "--client", "go", "--games", "1", "--duration", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["games_finished"] >= 1 and summary["errors"] == {}
    # One process: every move's opponent is in it, so (almost: a window's edges) every move has one.
    assert summary["latency_ms"]["samples"] >= 0.95 * summary["moves"]
    async with await TafelClient.connect([gateway]) as client:
        await client.sign_in_as_guest()
        records = (await client.list_records(game="connect4", page_size=50)).records
    # (The platform is shared with other tests: only games that started under this one's players.)
    ours = [r for r in records if r.started_at.ToSeconds() >= int(started) and all(p.player.guest for p in r.players)]
    assert ours, "no finished Connect Four game on record"
    record = ours[0]
    # Whole games: at least 7 discs (the shortest win), an outcome, the two seats alternating.
    assert len(record.actions) >= 7 and record.HasField("outcome")
    seats = [action.seat for action in record.actions]
    assert all(a != b for a, b in itertools.pairwise(seats))


def test_go_client_is_refused_where_it_cannot_play(tmp_path: Path) -> None:
    for args in (("--game", "plus4"), ("--seats", "3"), ("--shared-connection",)):
        done = loadgen("games", "--client", "go", *args)
        assert done.returncode == 2 and "--client go plays Connect Four" in done.stderr
    missing = loadgen("games", "--client", "go", env={go_client.BINARY_ENV: str(tmp_path / "none")})
    assert missing.returncode == 2 and "make loadgen-go" in missing.stderr


def stand_in(tmp_path: Path, body: str) -> Path:
    program = tmp_path / "players"
    program.write_text("#!/bin/sh\n" + body)
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    return program


def args(**overrides: object) -> argparse.Namespace:
    values = {"gateways": "127.0.0.1:1", "seats": 2, "think": 0.0, "duration": 1.0, "seed": 1, **overrides}
    return argparse.Namespace(**values)


RESULT = (
    '{"moves": 5, "moves_whole_run": 7, "games_finished": 1, "latencies": [0.01, 0.02], "matchmaking": [0.1],'
    ' "first_matchmaking": [0.2, 0.3], "setup_s": 9.0, "errors": {}, "client_cpu_s": 0.5}'
)


def test_parent_opens_the_window_when_every_player_matched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two players' first matches, then it waits for "open" before its result: the board opens
    # the window only once both counted, and the parent says so.
    program = stand_in(
        tmp_path, f"echo matched\necho matched\nread line\n[ \"$line\" = open ] && echo 'result {RESULT}'\n"
    )
    monkeypatch.setenv(go_client.BINARY_ENV, str(program))
    board = Board(2)
    stats = go_client.run_go_games(args(), 0, 1, board)
    assert board.started() > 0
    assert not stats.errors
    assert (stats.moves, stats.moves_whole_run, stats.games_finished) == (5, 7, 1)
    assert stats.latencies == [0.01, 0.02] and stats.first_matchmaking == [0.2, 0.3]
    assert stats.client_cpu_s == 0.5
    assert 0 < stats.setup_s < 9.0  # the board's, from before any client started, not the program's


def test_parent_passes_the_run_to_the_players(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(go_client.BINARY_ENV, "/bin/true")
    command = go_client.command(args(think=0.25, duration=20.0, seed=7), 2, 50)
    assert command[1:] == [
        "--gateways",
        "127.0.0.1:1",
        "--players",
        "100",
        "--think",
        "0.25s",
        "--duration",
        "20.0s",
        "--seed",
        "9",
    ]


def test_players_that_die_are_an_error_not_a_hang(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(go_client.BINARY_ENV, str(stand_in(tmp_path, "echo matched\nexit 1\n")))
    stats = go_client.run_go_games(args(), 0, 1, Board(2))
    assert stats.errors == {"CLIENT_PROCESS_DIED": 1}
