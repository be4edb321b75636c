"""tafel against the peers (boardgame.io, Colyseus), interleaved, in one table of medians and ratios.

    .venv/bin/python -m tools.bench_peers [--rounds 3] [--games 200 500] [--duration 20]
        [--peers boardgameio colyseus] [--tafel LABEL [TREE] [KEY=VALUE ...]] ... [--json FILE]

Comparisons are made inside one run only, peer and tafel interleaved (A/B/A/B), quoted as
medians and ratios: this machine's speed moves by 2x within an hour, so a figure from another run
says little. Each round runs every contestant once at each games count, in order; the table then
gives each contestant's figure per round and its median, and each tafel contestant's ratio to
each peer round by round (the same minutes of the machine) and their median.

A peer is `../shared/peers/run.sh PEER G D` (its JSON line; `--peers-dir` or TAFEL_PEERS elsewhere).
A tafel contestant is the load generator against a fresh platform, as `tools.bench_load --once`
runs it (a connection per player, one gateway), from this tree or from TREE (another worktree or
clone with its own `make gen native`: its gen/, SDK and load generator come first on the path,
and its own .venv's Python runs it when it has one), with KEY=VALUE set in its environment (e.g.
`--tafel defaults . TAFEL_GRPC_EVENT_ENGINE=1`).
Without --tafel: one contestant, `tafel`, this tree.

`--think S` (tafel contestants only, so `--peers` with none): every bot waits S seconds before
each move. Without it the loop is closed: each move is sent the moment the last one was seen, so
the rate is what the servers' latency allows, and a change that adds latency thins the batches
every later move is cheaper for (docs/benchmarks.md, eleventh pass): CPU a move then follows the
throughput as much as the code. With a think time well above the latency (0.15 s at 200 games:
~1,200 moves/s, below what the servers can do) both trees run at the same rate with the same
batching, and their CPU a move differs by their code.

`--tafel go . TAFEL_LOADGEN_CLIENT=go` runs the Go players (`make loadgen-go`) instead of the Python
SDK's: ~95 µs of client CPU a move against ~200, about what the peers' Node clients spend, so
the servers keep more of the shared cores (docs/benchmarks.md, twelfth pass).

Moves per server CPU-second count the window's CPU on both sides: the peers' `extra.window` (their
top-level server_cpu_s is the server's whole life, setup included) and tafel's gateway + rules
services + Redis inside the load generator's window.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PEERS_DIR = ROOT.parent / "shared" / "peers"


@dataclass
class Result:
    contestant: str
    games: int
    round: int
    moves_per_s: float
    moves_per_cpu_s: float  # moves per server CPU-second, inside the window
    p99_ms: float
    setup_s: float
    errors: int
    # tafel: each server process's CPU a move (µs) and the load generator's
    per_move_us: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Tafel:
    label: str
    tree: Path
    env: dict[str, str]


def peer_result(line: dict[str, Any], games: int, index: int, name: str | None = None) -> Result:
    """A peer's JSON line (../shared/peers/README.md) as a Result, under `name` (the run.sh peer
    asked for: a variant such as tools/peers_flatfile.sh's `bgioflat` reports its base's name)."""
    window = line.get("extra", {}).get("window") or {}
    cpu = window.get("server_cpu_s") or line["server_cpu_s"]
    return Result(
        contestant=name or str(line["peer"]),
        games=games,
        round=index,
        moves_per_s=float(line["moves_per_s"]),
        moves_per_cpu_s=line["moves"] / cpu if cpu else 0.0,
        p99_ms=float(line["lat_ms"]["p99"]),
        setup_s=float(line.get("extra", {}).get("initial_setup_s") or 0.0),
        errors=sum(int(count) for count in (line.get("extra", {}).get("errors") or {}).values()),
    )


def tafel_result(label: str, summary: dict[str, Any], games: int, index: int) -> Result:
    """The load generator's JSON summary (tafel_loadgen games) as a Result."""
    moves = max(1, int(summary["moves"]))
    per_move: dict[str, float] = {}
    for server in summary.get("servers", []):
        name = str(server["process"])
        per_move[name] = per_move.get(name, 0.0) + float(server["cpu_s"]) * 1e6 / moves
    if summary.get("client_cpu_us_per_move") is not None:
        per_move["load generator"] = float(summary["client_cpu_us_per_move"])
    return Result(
        contestant=label,
        games=games,
        round=index,
        moves_per_s=float(summary["moves_per_s"]),
        moves_per_cpu_s=float(summary["moves_per_server_cpu_s"]),
        p99_ms=float(summary["latency_ms"]["p99"]),
        setup_s=float(summary.get("setup_s") or 0.0),
        errors=sum(int(count) for count in (summary.get("errors") or {}).values()),
        per_move_us={name: us for name, us in per_move.items() if us >= 1.0},
    )


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _cell(result: Result) -> str:
    return f"{result.moves_per_s:,.0f} | {result.moves_per_cpu_s:,.0f} | {result.p99_ms:.0f}"


def table(results: list[Result], tafel_labels: list[str]) -> str:
    """Per games count: each contestant by round with its medians, then each tafel contestant's
    ratio to each peer, round by round, with the median of those ratios."""
    out: list[str] = []
    for games in sorted({r.games for r in results}):
        at = [r for r in results if r.games == games]
        rounds = sorted({r.round for r in at})
        contestants = list(dict.fromkeys(r.contestant for r in at))
        out.append(f"{games} games: moves/s | moves per server CPU-s | p99 ms, by round, then the median")
        for name in contestants:
            mine = {r.round: r for r in at if r.contestant == name}
            cells = [
                f"{mine[i].moves_per_s:,.0f} | {mine[i].moves_per_cpu_s:,.0f} | {mine[i].p99_ms:.0f}"
                if i in mine
                else "-"
                for i in rounds
            ]
            rows = list(mine.values())
            median = (
                f"{_median([r.moves_per_s for r in rows]):,.0f} | {_median([r.moves_per_cpu_s for r in rows]):,.0f}"
                f" | {_median([r.p99_ms for r in rows]):.0f}"
            )
            errors = sum(r.errors for r in rows)
            out.append(f"  {name:<14} " + "   ".join(cells) + f"   median {median}   errors {errors}")
            if name in tafel_labels:
                parts = sorted({part for r in rows for part in r.per_move_us})
                spent = ", ".join(
                    f"{part} {_median([r.per_move_us.get(part, 0.0) for r in rows]):.0f}" for part in parts
                )
                out.append(f"  {'':<14} µs a move (median): {spent}; setup {_median([r.setup_s for r in rows]):.1f} s")
        peers = [name for name in contestants if name not in tafel_labels]
        for label in (name for name in contestants if name in tafel_labels):
            for peer in peers:
                ratios_cpu, ratios_rate = [], []
                for i in rounds:
                    ours = [r for r in at if r.round == i and r.contestant == label]
                    theirs = [r for r in at if r.round == i and r.contestant == peer]
                    if ours and theirs and theirs[0].moves_per_cpu_s and theirs[0].moves_per_s:
                        ratios_cpu.append(ours[0].moves_per_cpu_s / theirs[0].moves_per_cpu_s)
                        ratios_rate.append(ours[0].moves_per_s / theirs[0].moves_per_s)
                if ratios_cpu:
                    by_round = " / ".join(f"{c:.2f}" for c in ratios_cpu)
                    out.append(
                        f"  {label} / {peer}: moves per server CPU-s {by_round} (median {_median(ratios_cpu):.2f}x),"
                        f" moves/s median {_median(ratios_rate):.2f}x"
                    )
    return "\n".join(out)


def run_peer(peers_dir: Path, peer: str, games: int, duration: float, index: int) -> Result:
    done = subprocess.run(
        ["./run.sh", peer, str(games), str(int(duration))],
        cwd=peers_dir,
        capture_output=True,
        text=True,
        env={**os.environ, "KEEP_RUN_DIR": "0"},
        timeout=duration + 600,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"{peer} printed no result: {done.stderr[-2000:]}")
    return peer_result(json.loads(lines[-1]), games, index, peer)


def interpreter(tree: Path) -> Path:
    """The Python a tree's contestant runs on: the tree's own .venv when it has one (another
    interpreter is a contestant too), else this one."""
    own = tree / ".venv" / "bin" / "python"
    return own if own.exists() else Path(sys.executable)


# A think time reaches the tree's own `--tafel-once` (in that tree: its own tools) through the
# environment; the load generator's summary says which it ran with, and run_tafel checks it (a
# tree whose bench_peers predates --think would run a closed loop: refused, not compared).
THINK_ENV = "TAFEL_BENCH_THINK_S"
# Whose players (`tafel_loadgen games --client`): `--tafel go . TAFEL_LOADGEN_CLIENT=go` runs the
# Go players (`make loadgen-go` in that tree); checked against the summary the same way.
CLIENT_ENV = "TAFEL_LOADGEN_CLIENT"


def run_tafel(contestant: Tafel, games: int, duration: float, index: int, think: float = 0.0) -> Result:
    tree = contestant.tree
    path = [str(tree / "gen"), str(tree / "clients" / "python"), str(tree / "clients" / "loadgen")]
    env = {**os.environ, **contestant.env, "PYTHONPATH": os.pathsep.join(path)}
    if think > 0:
        env[THINK_ENV] = str(think)
    command = [str(interpreter(tree)), "-m", "tools.bench_peers", "--tafel-once", str(games), str(duration)]
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True, env=env, timeout=duration + 600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"tafel ({contestant.label}) failed: {done.stderr[-2000:]}")
    summary = json.loads(lines[-1])
    if float(summary.get("think_s") or 0.0) != think:
        raise RuntimeError(
            f"tafel ({contestant.label}) ran with think {summary.get('think_s')}, not {think}: its tree's"
            " tools/bench_peers.py predates --think"
        )
    client = contestant.env.get(CLIENT_ENV, "python")
    if (summary.get("client") or "python") != client:
        raise RuntimeError(
            f"tafel ({contestant.label}) ran the {summary.get('client') or 'python'} players, not {client}: its"
            " tree's load generator predates --client"
        )
    return tafel_result(contestant.label, summary, games, index)


def tafel_once(games: int, duration: float) -> None:
    """One games run of this tree's platform; its summary as the last line of stdout."""
    from tools.bench_load import loadgen, with_platform
    from tools.platform import Platform

    think = os.environ.get(THINK_ENV, "")

    def body(platform: Platform) -> dict[str, Any]:
        args: tuple[str, ...] = ("games", "--games", str(games), "--duration", str(duration))
        if think:
            args += ("--think", think)
        if os.environ.get(CLIENT_ENV, "python") != "python":
            args += ("--client", os.environ[CLIENT_ENV])
        with contextlib.redirect_stdout(sys.stderr):  # the human summary: stdout keeps the JSON
            return loadgen(platform.gateway_addresses, *args)

    print(json.dumps(with_platform(1, body)))


def parse_tafel(values: list[str]) -> Tafel:
    label, rest = values[0], values[1:]
    tree = ROOT
    if rest and "=" not in rest[0]:
        tree = Path(rest.pop(0)).resolve()
    malformed = [item for item in rest if "=" not in item]
    if malformed:
        raise ValueError(f"--tafel {label}: {' '.join(malformed)} is not KEY=VALUE (the tree comes first)")
    env = dict(item.split("=", 1) for item in rest)
    return Tafel(label, tree, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--games", type=int, nargs="+", default=[200])
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of each measured window")
    parser.add_argument("--peers", nargs="*", default=["boardgameio", "colyseus"])
    parser.add_argument("--peers-dir", type=Path, default=Path(os.environ.get("TAFEL_PEERS", PEERS_DIR)))
    parser.add_argument(
        "--tafel", nargs="+", action="append", metavar="LABEL [TREE] [KEY=VALUE]", help="a tafel contestant"
    )
    parser.add_argument("--json", type=Path, help="also write every result here")
    parser.add_argument(
        "--think", type=float, default=0.0, help="seconds each bot waits before a move (tafel contestants only)"
    )
    parser.add_argument("--tafel-once", nargs=2, metavar=("GAMES", "DURATION"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tafel_once:
        tafel_once(int(args.tafel_once[0]), float(args.tafel_once[1]))
        return
    try:
        tafels = [parse_tafel(values) for values in args.tafel] if args.tafel else [Tafel("tafel", ROOT, {})]
    except ValueError as error:
        parser.error(str(error))
    if args.think < 0 or (args.think > 0 and args.peers):
        parser.error("--think is for tafel contestants only (the peers' harness has none): give --peers with none")
    if args.peers and not (args.peers_dir / "run.sh").exists():
        parser.error(f"no peers' harness at {args.peers_dir} (--peers-dir, or --peers with none)")
    results: list[Result] = []
    for index in range(1, args.rounds + 1):
        for games in args.games:
            # The first peer, every tafel contestant, the other peers: tafel between its peers.
            runs: list[str | Tafel] = [*args.peers[:1], *tafels, *args.peers[1:]]
            for who in runs:
                if isinstance(who, Tafel):
                    result = run_tafel(who, games, args.duration, index, args.think)
                else:
                    result = run_peer(args.peers_dir, str(who), games, args.duration, index)
                results.append(result)
                print(
                    f"round {index}, {games} games, {result.contestant}: {result.moves_per_s:,.0f} moves/s,"
                    f" {result.moves_per_cpu_s:,.0f} moves per server CPU-s, p99 {result.p99_ms:.0f} ms",
                    flush=True,
                )
    print()
    print(table(results, [t.label for t in tafels]))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))


if __name__ == "__main__":
    main()
