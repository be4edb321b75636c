"""`make bench-load`: the published load figures (docs/benchmarks.md), from the load generator
against the whole platform started as `make run` starts it, on this machine.

Runs, each against a fresh platform:
- `games` (Connect Four, think 0) at several concurrencies, with the empty-ping floor on the same
  play-stream layout, on 1 gateway;
- the same at the top concurrency on 2 gateways (client-side round robin) to compare;
- `watchers` (10,000 idle spectators on one gateway);
- optionally `tournament` (1,024-player Swiss, 10 rounds): --tournament.
Writes docs/benchmarks.json; tools/plot_benchmarks.py turns it into docs/benchmarks.png.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform as host
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

from tools.platform import ROOT, Platform

OUT = ROOT / "docs" / "benchmarks.json"


def loadgen(gateways: list[str], *args: str, timeout_s: float = 1800) -> dict[str, Any]:
    command = [sys.executable, "-m", "tafel_loadgen", "--gateways", ",".join(gateways), *args]
    print("$", " ".join(command[1:]), flush=True)
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s)
    sys.stdout.write("".join(line + "\n" for line in done.stdout.splitlines()[:-1]))
    if not done.stdout.strip():
        raise RuntimeError(f"load generator failed: {done.stderr[-3000:]}")
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    floor = [line for line in done.stdout.splitlines() if line.startswith("floor:")]
    if floor:
        summary["floor_pings_per_s"] = float(floor[0].split()[1].replace(",", ""))
    return summary


@contextlib.contextmanager
def load_in_background(gateway: str, games: int, duration_s: float) -> Iterator[subprocess.Popen[bytes]]:
    """The load generator playing `games` games against `gateway` for duration_s while the body
    runs (its output dropped: the tools that use this measure the servers); killed on leaving."""
    command = [sys.executable, "-m", "tafel_loadgen", "--gateways", gateway, "games"]
    command += ["--games", str(games), "--duration", str(duration_s)]
    load = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield load
    finally:
        load.kill()
        load.wait()


def window_arguments(parser: argparse.ArgumentParser, *, games: int, warm_up_s: float, window_s: float) -> None:
    """--games, --warm-up and --window: a load, then a window measured inside it."""
    parser.add_argument("--games", type=int, default=games, help="concurrent games")
    parser.add_argument("--warm-up", type=float, default=warm_up_s, help="seconds of play before the window")
    parser.add_argument("--window", type=float, default=window_s, help="seconds measured")


def with_platform(gateways: int, body: Any, *, redis_cluster: bool = False) -> Any:
    """`body(platform)` against a fresh platform; `redis_cluster`: on a local 3+3 cluster instead of
    one Redis (tools/bench_cluster.py compares the two)."""
    running = Platform(gateways=gateways, fixed_ports=False, bot_pool=False, redis_cluster=redis_cluster).start()
    try:
        time.sleep(1.0)
        return body(running)
    finally:
        running.stop()


def redis_per_move(url: str, moves: int) -> dict[str, float]:
    """What the platform's Redis did per move over a run (from a fresh platform: INFO counts from
    its start, matchmaking and game starts included): commands by name, reads and writes of its
    clients' sockets. Exact counts, unlike CPU on this shared machine."""
    import redis as redis_py

    client = redis_py.Redis.from_url(url)
    try:
        stats: Any = client.info("stats")
        commands: Any = client.info("commandstats")
    finally:
        client.close()
    per = {name.removeprefix("cmdstat_"): int(row["calls"]) / max(1, moves) for name, row in commands.items()}
    per["(all commands)"] = int(stats["total_commands_processed"]) / max(1, moves)
    per["(socket reads)"] = int(stats["total_reads_processed"]) / max(1, moves)
    # Time inside each command (a script's includes the commands it runs, which are also listed).
    per.update(
        {f"{name.removeprefix('cmdstat_')} µs": int(row["usec"]) / max(1, moves) for name, row in commands.items()}
    )
    return per


def once(args: argparse.Namespace) -> None:
    """`--once`: one games run per concurrency on one gateway, figures printed, nothing written —
    for A/B runs (run it from a worktree of the other commit, interleaved)."""
    for concurrency in args.concurrency:

        def body(p: Platform, c: int = concurrency) -> None:
            summary = loadgen(
                p.gateway_addresses,
                "--processes",
                str(args.processes),
                "games",
                "--games",
                str(c),
                "--duration",
                str(args.duration),
                *(["--shared-connection"] if args.shared_connection else []),
                *(["--client", args.client] if args.client != "python" else []),
            )
            assert p.redis_url is not None
            # INFO counts the whole run: per move of the whole run (setup and its end included).
            per = redis_per_move(p.redis_url, int(summary.get("moves_whole_run") or summary["moves"]))
            counts = {k: v for k, v in per.items() if not k.endswith(" µs")}
            times = {k.removesuffix(" µs"): v for k, v in per.items() if k.endswith(" µs")}
            print(
                "  redis per move: "
                + ", ".join(f"{k} {v:.2f}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]) if v >= 0.05)
            )
            print(
                "  redis µs per move inside commands (wall time; a script's includes its commands): "
                + ", ".join(f"{k} {v:.2f}" for k, v in sorted(times.items(), key=lambda kv: -kv[1]) if v >= 0.1)
            )

        with_platform(args.gateways, body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds per games run")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[10, 50, 100, 200])
    parser.add_argument("--processes", type=int, default=1, help="load generator processes (one saturates this box)")
    parser.add_argument("--watchers", type=int, default=10_000)
    parser.add_argument("--tournament", action="store_true", help="also the 1,024-player Swiss (long)")
    parser.add_argument("--tournament-players", type=int, default=1024)
    parser.add_argument("--tournament-rounds", type=int, default=10)
    parser.add_argument("--once", action="store_true", help="only the games runs, printed (A/B), nothing written")
    parser.add_argument(
        "--shared-connection",
        action="store_true",
        help="with --once: every player on one connection (the shape of the figures before 2026-12-02)",
    )
    parser.add_argument("--gateways", type=int, default=1, help="with --once: gateways (the players spread over them)")
    parser.add_argument(
        "--client",
        default="python",
        choices=("python", "go"),
        help="with --once: whose players (tafel_loadgen games --client; go needs `make loadgen-go`)",
    )
    args = parser.parse_args()
    if args.once:
        once(args)
        return
    results: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "platform": host.platform(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        },
        "games": [],
    }
    base = ["--processes", str(args.processes)]
    for concurrency in args.concurrency:
        summary = with_platform(
            1,
            lambda p, c=concurrency: loadgen(
                p.gateway_addresses, *base, "games", "--games", str(c), "--duration", str(args.duration), "--floor"
            ),
        )
        results["games"].append(summary)
    top = max(args.concurrency)
    results["two_gateways"] = with_platform(
        2,
        lambda p: loadgen(p.gateway_addresses, *base, "games", "--games", str(top), "--duration", str(args.duration)),
    )
    results["watchers"] = with_platform(
        1, lambda p: loadgen(p.gateway_addresses, "watchers", "--watchers", str(args.watchers), "--hold", "10")
    )
    if args.tournament:
        results["tournament"] = with_platform(
            1,
            lambda p: loadgen(
                p.gateway_addresses,
                "tournament",
                "--players",
                str(args.tournament_players),
                "--rounds",
                str(args.tournament_rounds),
            ),
        )
    OUT.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")
    one = next(r for r in results["games"] if r["concurrent_games"] == top)
    print(f"1 gateway: {one['moves_per_s']} moves/s; 2 gateways: {results['two_gateways']['moves_per_s']} moves/s")


if __name__ == "__main__":
    main()
