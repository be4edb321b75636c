"""Single Redis versus the local 3-master cluster under the same load, in one run (docs/benchmarks.md,
"Redis Cluster").

    .venv/bin/python -m tools.bench_cluster [--pairs 3] [--games 200] [--duration 20] [--gateways 1]

Each pair is two fresh platforms as `make bench-load` starts them (tools/bench_load.py: every rules
service, no bot pool), one on one Redis and one on a 3+3 cluster (tools/redis_cluster.py), the load
generator's `games` scenario (Connect Four, think 0) against each; the order alternates inside the
pairs (single, cluster; cluster, single; ...) so a slow stretch of this shared machine does not
favour one side. Prints each run, then the medians and the cluster/single ratios. Server CPU is the
gateway(s), the rules services and every Redis process (on the cluster all six nodes: the replicas
apply every write too; their part is shown apart, from their INFO cpu).
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from tools.bench_load import loadgen, with_platform
from tools.platform import Platform

SIDES = ("single", "cluster")


def replicas_cpu_s(platform: Platform) -> float:
    """CPU the cluster's replicas used since they started (INFO cpu): their share of the Redis CPU."""
    total = 0.0
    for node in platform.cluster.nodes if platform.cluster is not None else []:
        with node.client() as client:
            if client.info("replication").get("role") == "slave":
                cpu = client.info("cpu")
                total += float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])
    return total


def run(side: str, args: argparse.Namespace) -> dict[str, Any]:
    def body(p: Platform) -> dict[str, Any]:
        summary = loadgen(p.gateway_addresses, "games", "--games", str(args.games), "--duration", str(args.duration))
        summary["replicas_cpu_s"] = replicas_cpu_s(p)
        return summary

    summary: dict[str, Any] = with_platform(args.gateways, body, redis_cluster=side == "cluster")
    moves = max(1, int(summary["moves"]))
    redis_cpu = sum(s["cpu_s"] for s in summary["servers"] if s["process"] == "redis")
    return {
        "moves_per_s": float(summary["moves_per_s"]),
        "p50_ms": float(summary["latency_ms"]["p50"]),
        "p99_ms": float(summary["latency_ms"]["p99"]),
        "moves_per_server_cpu_s": float(summary["moves_per_server_cpu_s"] or 0.0),
        "redis_cpu_us_per_move": redis_cpu / moves * 1e6,
        "of_it_replicas_us": summary["replicas_cpu_s"] / moves * 1e6,
        "redis_processes": sum(1 for s in summary["servers"] if s["process"] == "redis"),
        "errors": sum(summary["errors"].values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--games", type=int, default=200, help="concurrent games")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per run")
    parser.add_argument("--gateways", type=int, default=1)
    args = parser.parse_args()
    results: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    for pair in range(args.pairs):
        for side in SIDES if pair % 2 == 0 else SIDES[::-1]:
            figures = run(side, args)
            results[side].append(figures)
            print(f"pair {pair} {side:<7} " + "  ".join(f"{k} {v:,.1f}" for k, v in figures.items()), flush=True)
    print(f"\nmedians of {args.pairs} runs each, {args.games} games, {args.duration:g} s, {args.gateways} gateway(s):")
    keys = [k for k in results["single"][0] if k != "redis_processes"]
    widths = {k: len(k) + 2 for k in keys}
    print(f"{'':<8}" + "".join(f"{k:>{widths[k]}}" for k in keys))
    medians = {side: {k: statistics.median(r[k] for r in results[side]) for k in keys} for side in SIDES}
    for side in SIDES:
        print(f"{side:<8}" + "".join(f"{medians[side][k]:>{widths[k]},.1f}" for k in keys))
    ratios = "".join(
        f"{medians['cluster'][k] / medians['single'][k]:>{widths[k]}.2f}" if medians["single"][k] else " " * widths[k]
        for k in keys
    )
    print(f"{'ratio':<8}{ratios}   (cluster / single)")


if __name__ == "__main__":
    main()
