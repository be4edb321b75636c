"""tools/bench_capacity_peers.py: Colyseus at human pace, a real server and real clients (the peers'
harness copied by tools/peers_human.sh, its Node dependencies from the peers' lock file)."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import pytest

from tools.bench_capacity_peers import limit_of, meets, parser, prepare, run

needs_node = pytest.mark.skipif(
    shutil.which("node") is None, reason="no node on PATH (the peers' harness needs Node 20)"
)


@pytest.fixture(scope="module")
def peers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The harness copy (tools/peers_human.sh), made once for this file."""
    root = tmp_path_factory.mktemp("peers") / "copy"
    prepare(root)
    return root


def _median_for(mean: float, sigma: float, cap: float) -> float:
    """The log-normal median whose capped draws have `mean` (clients/loadgen/go/human.go's thinker)."""

    def phi(x: float) -> float:
        return (1 + math.erf(x / math.sqrt(2))) / 2

    def capped(mu: float) -> float:
        lc = math.log(cap)
        return math.exp(mu + sigma**2 / 2) * phi((lc - mu - sigma**2) / sigma) + cap * (1 - phi((lc - mu) / sigma))

    lo, hi = math.log(mean) - 20, math.log(cap) + 20
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if capped(mid) < mean else (lo, mid)
    return math.exp((lo + hi) / 2)


@needs_node
def test_the_room_takes_spectators_by_id_and_keeps_full_games_out_of_matchmaking(peers: Path) -> None:
    done = subprocess.run(
        ["node", "--test", "test_room_human.js"], cwd=peers / "colyseus", capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "# pass 1" in done.stdout


@needs_node
def test_a_step_of_100_clients_at_a_quick_pace_has_real_figures(peers: Path) -> None:
    quick = ["--window", "10", "--hold", "0", "--think-mean", "0.3", "--pause", "0.3", "--connect-rate", "200"]
    args = parser().parse_args(["--peers-dir", str(peers), "--target", "100", "--step", "100", "--settle", "2", *quick])
    report = run(args)
    assert len(report["steps"]) == 1 and report["hold"] is None
    step = report["steps"][0]
    assert (step["players"], step["spectators"]) == (100, 10)
    assert step["errors"] == {}
    assert step["moves"] > 0 and step["moves_per_s"] > 0
    assert step["latency_ms"]["samples"] == step["moves"] and step["latency_ms"]["p99"] is not None
    assert 0 < step["connected"] <= 100 and step["live_games"] > 0
    assert step["games_finished"] > 0 and step["games_watched"] > 0  # players and spectators both took part
    assert step["matchmaking_wait_ms"]["samples"] > 0
    assert step["server_cores"] > 0 and step["loadgen_cores"] > 0
    assert step["machine_cores_busy"] > 0
    assert step["server_rss_mib"] > report["at_rest"]["server_rss_mib"] > 0
    assert step["server_fds"] >= step["connected"]
    # the same think time as tafel's Go players: mean of the capped draws 0.3 s
    assert report["think_median_s"] == pytest.approx(_median_for(0.3, 0.75, 45.0), rel=0.01)
    assert report["highest_passing_players"] == (100 if meets(step, 100.0) else 0)


ROW = {
    "errors": {},
    "latency_ms": {"p99": 80.0, "samples": 10},
    "server_cores": 0.95,
    "loadgen_cores": 0.3,
    "server_fds": 100,
    "loadgen_fds": 100,
    "mem_available": 0.8,
    "machine_cores_busy": 1.4,
}


def test_the_bar_and_what_ran_out() -> None:
    assert meets(ROW, 100.0)
    assert not meets({**ROW, "errors": {"unexpected_leave": 1}}, 100.0)
    assert not meets({**ROW, "latency_ms": {"p99": None, "samples": 0}}, 100.0)
    assert "server's one core" in limit_of(ROW, 100.0, 20_000)
    assert limit_of({**ROW, "server_fds": 19_000}, 100.0, 20_000).startswith("file descriptors")
    assert limit_of({**ROW, "loadgen_fds": 19_000}, 100.0, 20_000).startswith("file descriptors")
    idle = {**ROW, "server_cores": 0.2, "errors": {}}
    assert limit_of({**idle, "machine_cores_busy": 1.9}, 100.0, 20_000).startswith("CPU saturated by the machine's")
    assert limit_of(idle, 100.0, 20_000).startswith("latency while CPU was idle (1.40 of")
