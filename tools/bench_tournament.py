"""Tournaments at an organiser's size (docs/benchmarks.md, "Tournaments at an
organiser's size"): a platform of its own, a Swiss played to the end by bots thinking like people,
the figures, and the standings checked against the games' records.

    python -m tools.bench_tournament                                  # 10,000 players, 7 rounds, one Redis
    python -m tools.bench_tournament --cluster --gateways 2 --kill-round 4   # Redis Cluster, a gateway -9'd
    python -m tools.bench_tournament --players 64 --rounds 3 --think 0.2     # a quick one
    python -m tools.bench_tournament --engine-only                   # the pure engine's steps alone, no platform
    python -m tools.bench_tournament --arena 10 --players 2000       # a 10-minute arena of 2,000

`make bench-tournament [BENCH_TOURNAMENT_ARGS=...]` runs the first. Steps: the platform (Connect
Four's rules service, `--gateways` gateways, one Redis or the 3-master local cluster; no bot pool)
with the per-source limits raised (every bot comes from 127.0.0.1: LIMITS below; a deployment keeps
the defaults); the load generator in a process of its own (`tafel_loadgen tournament`: sign-ins,
joins, the tournament, its figures: pairing time and round-start latency per round, move latency,
errors, the servers' peak RSS); meanwhile Redis's used_memory sampled every second (the masters'
sum on the cluster) and the machine's load average; with `--kill-round N` the last gateway SIGKILLed
when round N is paired (its players' calls go to the others); at the end tools.check_tournament
(every record read back, the standings recomputed with the pure engine and compared with
GetStandings). One JSON line at the end (`--out FILE` writes it too); exit status 1 on a load
generator error, an unfinished tournament or a failed check.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import redis as redis_sync

from gateway.tournaments import engine
from gateway.tournaments.model import Config, Entrant, Format, Result, from_json, to_json
from tools.check_tournament import _main as check
from tools.platform import Platform

ROOT = Path(__file__).resolve().parents[1]
LIMITS = {
    "TAFEL_LIMIT_SIGN_INS_PER_PEER": "100000/100000",
    "TAFEL_LIMIT_CALLS_PER_PEER": "100000/100000",
    "TAFEL_LIMIT_CALLS_PER_PLAYER": "100000/100000",
}


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


class Sampler:
    """Redis's used_memory (peak, last) and the load average, once a second, in a thread."""

    def __init__(self, platform: Platform) -> None:
        if platform.cluster is not None:
            self.ports = [node.port for node in platform.cluster.nodes]
        else:
            assert platform.redis is not None
            self.ports = [platform.redis.port]
        self.peak_used = 0
        self.last_used = 0
        self.loads: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def used_memory(self) -> int:
        total = 0
        for port in self.ports:
            try:
                client = redis_sync.Redis(host="127.0.0.1", port=port, socket_timeout=2, socket_connect_timeout=1)
                info = client.info()
                client.close()
            except redis_sync.RedisError:
                continue
            if info.get("role", "master") == "master":
                total += int(info["used_memory"])
        return total

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            used = self.used_memory()
            self.last_used = used or self.last_used
            self.peak_used = max(self.peak_used, used)
            self.loads.append(loadavg()[0])

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def engine_only(players: int, rounds: int, seed: int) -> dict[str, Any]:
    """What a gateway computes for each round of a Swiss of `players`, with no I/O: the pairing,
    recording every result, the standings, and the state's JSON both ways (it is stored whole)."""
    rng = random.Random(seed)
    entrants = [Entrant(f"p{i:05d}", f"player{i}") for i in range(players)]
    state = engine.start(Config(Format.SWISS, rounds=rounds), entrants)
    out = []
    for _ in range(rounds):
        began = time.process_time()
        state = engine.next_round(state)
        paired = time.process_time() - began
        rnd = state.current
        assert rnd is not None
        began = time.process_time()
        for game in rnd.games:
            if not game.bye:
                x = rng.random()
                ranks = (0, 1) if x < 0.45 else (1, 0) if x < 0.9 else (0, 0)
                state = engine.record(state, rnd.number, game.board, game.decider, Result(ranks=ranks))
        recorded = time.process_time() - began
        began = time.process_time()
        engine.standings(state)
        standings = time.process_time() - began
        began = time.process_time()
        text = to_json(state)
        from_json(text)
        stored = time.process_time() - began
        out.append(
            {
                "round": rnd.number,
                "pairing_ms": round(paired * 1000, 1),
                "record_each_us": round(recorded / max(1, len(rnd.games)) * 1e6, 1),
                "standings_ms": round(standings * 1000, 1),
                "json_both_ways_ms": round(stored * 1000, 1),
                "state_kib": round(len(text) / 1024),
            }
        )
    return {"players": players, "rounds": out}


def run(args: argparse.Namespace) -> dict[str, Any]:
    load_before = loadavg()
    # The servers' own lines (a refusal's cause, a slow step) beside the figures, when asked.
    log_file = open(args.log, "a", encoding="utf-8") if args.log else None  # closed in the finally below

    def log(name: str, line: str) -> None:
        if log_file is not None:
            log_file.write(f"{time.strftime('%H:%M:%S')} {name}: {line}\n")

    platform = Platform(
        log=log,
        gateways=args.gateways,
        redis_cluster=args.cluster,
        fixed_ports=False,
        games=("connect4",),
        bot_pool=False,
        # Arenas shorter than the platform's 5 minutes for the smoke test only.
        extra_env={**LIMITS, "TAFEL_TOURNAMENT_SWEEP_S": "5", "TAFEL_ARENA_MIN_S": "1"},
    ).start()
    report: dict[str, Any] = {
        "players": args.players,
        "rounds": 0 if args.arena else args.rounds,
        "arena_minutes": args.arena,
        "think_median_s": args.think,
        "think_sigma": args.think_sigma,
        "gateways": args.gateways,
        "redis": "cluster (3 masters, 3 replicas)" if args.cluster else "one",
        "load_before": load_before,
    }
    try:
        with Sampler(platform) as sampler:
            report["redis_used_memory_mib_at_rest"] = round(sampler.used_memory() / 2**20, 1)
            command = [
                sys.executable, "-m", "tafel_loadgen",
                "--gateways", ",".join(platform.gateway_addresses),
                "--seed", str(args.seed),
                "tournament",
                "--players", str(args.players),
                "--rounds", str(args.rounds),
                *(["--format", "arena", "--minutes", str(args.arena)] if args.arena else []),
                "--think", str(args.think),
                "--think-sigma", str(args.think_sigma),
            ]  # fmt: skip
            loadgen = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True, env=os.environ.copy())
            assert loadgen.stdout is not None
            summary: dict[str, Any] = {}
            for line in loadgen.stdout:
                print(line, end="", flush=True)
                if line.startswith("ROUND ") and args.kill_round and line.split()[1] == str(args.kill_round):
                    victim = f"gateway-{args.gateways - 1}"
                    time.sleep(args.kill_after_s)  # into the round: its games being played
                    platform.kill(victim)
                    report["killed"] = {
                        "process": victim,
                        "round": args.kill_round,
                        "after_paired_s": args.kill_after_s,
                    }
                    print(f"KILLED {victim} (SIGKILL) in round {args.kill_round}", flush=True)
                if line.startswith("{"):
                    summary = json.loads(line)
            report["loadgen_exit"] = loadgen.wait()
            report["redis_used_memory_mib_peak"] = round(sampler.peak_used / 2**20, 1)
            report["redis_used_memory_mib_end"] = round(sampler.last_used / 2**20, 1)
            report["load_during_max"] = max(sampler.loads, default=0.0)
            report["load_during_mean"] = round(sum(sampler.loads) / len(sampler.loads), 2) if sampler.loads else 0.0
        report["load_after"] = loadavg()
        report["loadgen"] = {
            k: v for k, v in summary.items() if k not in ("matchmaking_wait_ms", "first_matchmaking_wait_ms")
        }
        alive = platform.gateway_addresses[0]
        if summary.get("tournament_id") and not args.arena:
            report["check"] = asyncio.run(check(alive, summary["tournament_id"]))
    finally:
        platform.stop()
        if log_file is not None:
            log_file.close()
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--think", type=float, default=2.0, help="median seconds before a move (log-normal)")
    parser.add_argument("--think-sigma", type=float, default=0.5)
    parser.add_argument("--gateways", type=int, default=1)
    parser.add_argument("--cluster", action="store_true", help="the local Redis Cluster instead of one Redis")
    parser.add_argument("--kill-round", type=int, default=0, help="SIGKILL the last gateway in this round")
    parser.add_argument("--kill-after-s", type=float, default=10.0, help="that long after the round is paired")
    parser.add_argument("--arena", type=float, default=0.0, help="an arena of this many minutes instead")
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--log", default="", help="append the servers' output lines to this file")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--engine-only", action="store_true", help="time the pure engine's steps, no platform")
    args = parser.parse_args()
    if args.engine_only:
        print(json.dumps(engine_only(args.players, args.rounds, args.seed)))
        return 0
    if args.kill_round and args.gateways < 2:
        parser.error("--kill-round needs --gateways 2 or more (the others carry on)")
    report = run(args)
    line = json.dumps(report)
    print(line)
    if args.out:
        args.out.write_text(line + "\n")
    if args.arena:  # the standings check is the Swiss's (an arena's points have streaks)
        arena = report.get("loadgen", {}).get("tournament", {}).get("arena", {})
        return 0 if report.get("loadgen_exit") == 0 and arena.get("same_opponent_twice_in_a_row") == 0 else 1
    check_ok = bool(report.get("check", {}).get("ok")) and report["check"].get("missed_games") == 0
    finished = report.get("check", {}).get("final") is True
    return 0 if report.get("loadgen_exit") == 0 and check_ok and finished else 1


if __name__ == "__main__":
    sys.exit(main())
