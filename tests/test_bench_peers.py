"""tools/bench_peers.py's reading of both sides' results and its table of medians and ratios."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tools.bench_peers import ROOT, Result, interpreter, parse_tafel, peer_result, table, tafel_result

PEER_LINE = {
    "peer": "boardgameio",
    "moves": 60_000,
    "moves_per_s": 3000.0,
    "lat_ms": {"p50": 50.0, "p99": 120.5},
    "server_cpu_s": 25.0,  # the server's whole life: not what is compared
    "extra": {"window": {"server_cpu_s": 20.0}, "initial_setup_s": 0.7, "errors": {"invalid": 2}},
}

TAFEL_SUMMARY = {
    "moves": 50_000,
    "moves_per_s": 2500.0,
    "moves_per_server_cpu_s": 2000.0,
    "latency_ms": {"p99": 110.0},
    "setup_s": 1.2,
    "errors": {"UNAVAILABLE": 1},
    "client_cpu_us_per_move": 150.0,
    "servers": [
        {"process": "gateway", "cpu_s": 10.0},
        {"process": "connect4", "cpu_s": 5.0},
        {"process": "plus4", "cpu_s": 0.01},  # idle: left out
        {"process": "redis", "cpu_s": 2.5},
    ],
}


def test_a_peer_counts_its_window_cpu_not_its_whole_life() -> None:
    result = peer_result(PEER_LINE, 200, 1)
    assert result.moves_per_cpu_s == 60_000 / 20.0
    assert (result.p99_ms, result.setup_s, result.errors) == (120.5, 0.7, 2)
    assert result.contestant == PEER_LINE["peer"]


def test_a_peer_variant_keeps_the_name_it_was_run_under() -> None:
    # tools/peers_flatfile.sh's bgioflat prints "peer": "boardgameio"; the table must not merge it
    # with the in-memory boardgame.io of the same round.
    assert peer_result(PEER_LINE, 200, 1, "bgioflat").contestant == "bgioflat"


def test_tafel_gives_each_server_its_cpu_a_move() -> None:
    result = tafel_result("now", TAFEL_SUMMARY, 200, 1)
    assert result.moves_per_cpu_s == 2000.0
    assert result.errors == 1
    assert result.per_move_us == {"gateway": 200.0, "connect4": 100.0, "redis": 50.0, "load generator": 150.0}


def _result(name: str, index: int, rate: float, per_cpu: float) -> Result:
    return Result(name, 200, index, rate, per_cpu, 100.0, 1.0, 0)


def test_the_table_gives_medians_and_round_by_round_ratios() -> None:
    results = [
        _result("boardgameio", 1, 4000, 4000),
        _result("tafel", 1, 3000, 2000),
        _result("boardgameio", 2, 2000, 2000),
        _result("tafel", 2, 2000, 1800),
        _result("boardgameio", 3, 3000, 3000),
        _result("tafel", 3, 3300, 3300),
    ]
    text = table(results, ["tafel"])
    tafel_row = next(line for line in text.splitlines() if line.strip().startswith("tafel "))
    assert "median 3,000 | 2,000 | 100" in tafel_row
    # Ratios inside each round (0.50, 0.90, 1.10), not of the medians (2,000 / 3,000).
    assert "moves per server CPU-s 0.50 / 0.90 / 1.10 (median 0.90x)" in text
    assert "moves/s median 1.00x" in text  # 0.75, 1.00, 1.10


def test_a_contestant_from_another_tree_with_its_environment(tmp_path: Path) -> None:
    assert parse_tafel(["now"]).tree == ROOT
    other = parse_tafel(["defaults", str(tmp_path), "TAFEL_GRPC_EVENT_ENGINE=1", "A=b=c"])
    assert other.tree == tmp_path.resolve()
    assert other.env == {"TAFEL_GRPC_EVENT_ENGINE": "1", "A": "b=c"}
    assert parse_tafel(["here", "X=1"]).tree == ROOT


def test_an_environment_entry_without_a_value_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not KEY=VALUE"):
        parse_tafel(["defaults", str(tmp_path), "TAFEL_GRPC_EVENT_ENGINE"])


def test_a_tree_with_its_own_venv_runs_on_its_own_python(tmp_path: Path) -> None:
    assert interpreter(tmp_path) == Path(sys.executable)  # no .venv: this interpreter
    own = tmp_path / ".venv" / "bin" / "python"
    own.parent.mkdir(parents=True)
    own.write_text("")
    assert interpreter(tmp_path) == own


FAKE_ONCE = """
import json, os, sys
think = os.environ.get("TAFEL_BENCH_THINK_S", "") if {reads} else ""
summary = dict({summary}, think_s=float(think) if think else 0.0)
print(json.dumps(summary))
"""


def fake_tree(tmp_path: Path, *, reads_think: bool) -> Path:
    """A tree whose `tools.bench_peers --tafel-once` prints a summary, passing the think time on
    (as this tree's does) or not (as one from before --think)."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "__init__.py").write_text("")
    source = FAKE_ONCE.format(reads=reads_think, summary=repr(TAFEL_SUMMARY))
    (tmp_path / "tools" / "bench_peers.py").write_text(source)
    return tmp_path


def test_a_think_time_reaches_the_tree_and_a_tree_that_ignores_it_is_refused(tmp_path: Path) -> None:
    from tools.bench_peers import Tafel, run_tafel

    (tmp_path / "new").mkdir()
    reading = fake_tree(tmp_path / "new", reads_think=True)
    result = run_tafel(Tafel("new", reading, {}), 200, 1.0, 1, think=0.15)
    assert result.moves_per_cpu_s == 2000.0
    assert run_tafel(Tafel("new", reading, {}), 200, 1.0, 1).moves_per_s == 2500.0  # (no think: none asked)

    (tmp_path / "old").mkdir()
    old = fake_tree(tmp_path / "old", reads_think=False)
    with pytest.raises(RuntimeError, match="predates --think"):
        run_tafel(Tafel("old", old, {}), 200, 1.0, 1, think=0.15)


def test_a_client_choice_reaches_the_tree_and_a_tree_that_ignores_it_is_refused(tmp_path: Path) -> None:
    from tools.bench_peers import CLIENT_ENV, Tafel, run_tafel

    tree = tmp_path / "fake"
    tree.mkdir()
    fake_tree(tree, reads_think=False)
    # A tree whose load generator says which players it ran: the one asked for passes.
    source = (tree / "tools" / "bench_peers.py").read_text()
    reading = source.replace("print(", "summary['client'] = os.environ.get('TAFEL_LOADGEN_CLIENT', 'python')\nprint(")
    (tree / "tools" / "bench_peers.py").write_text(reading)
    assert run_tafel(Tafel("go", tree, {CLIENT_ENV: "go"}), 200, 1.0, 1).moves_per_cpu_s == 2000.0
    # One that predates --client ran the Python players whatever was asked: refused.
    (tree / "tools" / "bench_peers.py").write_text(source)
    with pytest.raises(RuntimeError, match="predates --client"):
        run_tafel(Tafel("go", tree, {CLIENT_ENV: "go"}), 200, 1.0, 1)
    assert run_tafel(Tafel("python", tree, {}), 200, 1.0, 1).moves_per_cpu_s == 2000.0
