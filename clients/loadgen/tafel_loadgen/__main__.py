"""python -m tafel_loadgen {games,watchers,social,chat,presence,tournament} ... (see README.md)."""

from __future__ import annotations

import tafel.grpc_polling  # noqa: F401  (first: gRPC reads its experiments when imported)

# isort: split
import argparse
import asyncio
import json
import multiprocessing
import queue
import sys
import time
from collections.abc import Sequence
from typing import Any

from tafel.by_game import GAMES

from tafel_loadgen.progress import run_progress
from tafel_loadgen.runner import child as _child
from tafel_loadgen.stats import ServerProcess, Stats, percentile, server_processes
from tafel_loadgen.window import Board


def run_split(args: argparse.Namespace, total: int, servers: Sequence[ServerProcess] = ()) -> Stats:
    """Run `total` units (games or ping streams) over `--processes` client processes, showing the
    time played and sampling the servers meanwhile (a server that exits keeps its last figures)."""
    processes = max(1, min(args.processes, total))
    shares = [total // processes + (1 if i < total % processes else 0) for i in range(processes)]
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    # games: the measured window opens once every player has its first match (window.py); the
    # servers' CPU is noted as it opens and as it closes.
    board = Board(args.seats * total, context) if args.scenario == "games" else None
    children = [context.Process(target=_child, args=(args, i, n, results, board)) for i, n in enumerate(shares)]
    for child in children:
        child.start()
    stats = Stats()
    reported = 0
    opened = closed = 0.0
    with run_progress() as progress:
        task = progress.add_task(f"{args.scenario}: {total} over {processes} process(es)", total=args.duration)
        started = time.monotonic()
        while reported < len(children):
            try:
                stats.merge(results.get(timeout=0.05 if board is not None and not closed else 0.5))
                reported += 1
            except queue.Empty:
                if not any(child.is_alive() for child in children) and results.empty():
                    stats.errors["CLIENT_PROCESS_DIED"] += len(children) - reported
                    break
            if board is not None:
                if not opened and board.started():
                    opened = board.started()
                    for server in servers:
                        server.mark_window()
                if opened and not closed and time.monotonic() >= opened + args.duration:
                    closed = time.monotonic()
                    for server in servers:
                        server.mark_window(end=True)
                played = time.monotonic() - opened if opened else 0.0
            else:
                played = time.monotonic() - started
            progress.update(task, completed=min(args.duration, played))
            for server in servers:
                server.sample()
    for child in children:
        child.join()
    return stats


def summarize(args: argparse.Namespace, stats: Stats, elapsed: float, servers: list[Any]) -> dict[str, Any]:
    lat = stats.latencies
    summary: dict[str, Any] = {
        "scenario": args.scenario,
        "game": getattr(args, "game", None),
        "concurrent_games": getattr(args, "games", None),
        "think_s": getattr(args, "think", None),
        # A TCP connection per player (as on players' own machines), or all of them on one.
        "connections": (
            ("shared" if getattr(args, "shared_connection", False) else "one per player")
            if args.scenario == "games"
            else None
        ),
        # Whose players: the Python SDK's, or the Go players' (--client go).
        "client": getattr(args, "client", None),
        "duration_s": round(elapsed, 2),
        "games_finished": stats.games_finished,
        "moves": stats.moves,
        "moves_whole_run": stats.moves_whole_run,
        "moves_per_s": round(stats.moves / elapsed, 1) if elapsed else 0.0,
        "latency_ms": {
            "p50": round(percentile(lat, 0.50) * 1000, 2),
            "p90": round(percentile(lat, 0.90) * 1000, 2),
            "p99": round(percentile(lat, 0.99) * 1000, 2),
            "max": round(max(lat) * 1000, 2) if lat else 0.0,
            "samples": len(lat),
        },
        "matchmaking_wait_ms": {
            "p50": round(percentile(stats.matchmaking, 0.50) * 1000, 1),
            "p99": round(percentile(stats.matchmaking, 0.99) * 1000, 1),
        },
        # Before the window: every player's first search, all at once (games).
        "setup_s": round(stats.setup_s, 2),
        "first_matchmaking_wait_ms": {
            "p50": round(percentile(stats.first_matchmaking, 0.50) * 1000, 1),
            "p99": round(percentile(stats.first_matchmaking, 0.99) * 1000, 1),
        },
        "errors": dict(stats.errors),
        "retried": dict(stats.retried),
        **({"tournament_id": stats.tournament_id, "tournament": stats.tournament} if stats.tournament else {}),
        "servers": [
            {
                "pid": s.pid,
                "process": s.name,
                "cpu_s": round(s.cpu(), 2),  # inside the measured window (games), else the whole run
                "whole_run_cpu_s": round(s.whole_cpu(), 2),
                "peak_rss_mib": round(s.peak_rss_mib(), 1),
                "context_switches": s.switches(),  # inside the measured window (games), else None
                "exited": s.exited,  # during the run: its figures are from its last sample
            }
            for s in servers
        ],
    }
    server_cpu = sum(s["cpu_s"] for s in summary["servers"])
    summary["server_cpu_s"] = round(server_cpu, 2)
    summary["moves_per_server_cpu_s"] = round(stats.moves / server_cpu, 1) if server_cpu else None
    summary["client_cpu_s"] = round(stats.client_cpu_s, 2)
    summary["client_cpu_us_per_move"] = round(stats.client_cpu_s / stats.moves * 1e6, 1) if stats.moves else None
    if stats.pings:
        summary["pings_per_s"] = round(stats.pings / elapsed, 1)
    return summary


def print_summary(summary: dict[str, Any]) -> None:
    lat = summary["latency_ms"]
    connections = f", connections: {summary['connections']}" if summary["connections"] else ""
    print(f"scenario {summary['scenario']}: {summary['duration_s']} s{connections}")
    if summary.get("pings_per_s"):
        print(f"  floor: {summary['pings_per_s']:,.0f} empty ping round trips/s on the play stream")
    if summary["moves"]:
        print(
            f"  {summary['moves']:,} moves, {summary['moves_per_s']:,.0f} moves/s, "
            f"{summary['games_finished']} games finished"
        )
        print(
            f"  move latency (submit -> opponent's stream): p50 {lat['p50']} ms  p90 {lat['p90']} ms  "
            f"p99 {lat['p99']} ms  max {lat['max']} ms"
        )
        mm, first = summary["matchmaking_wait_ms"], summary["first_matchmaking_wait_ms"]
        print(f"  matchmaking wait: p50 {mm['p50']} ms  p99 {mm['p99']} ms")
        if summary["setup_s"]:
            print(
                f"  setup (not measured): {summary['setup_s']} s until every player had its first match"
                f" (first searches p50 {first['p50']} ms, p99 {first['p99']} ms)"
            )
        print(
            f"  server CPU {summary['server_cpu_s']} s in the window -> "
            f"{summary['moves_per_server_cpu_s']} moves per server CPU-second"
        )
        print(
            f"  load generator CPU {summary['client_cpu_s']} s -> "
            f"{summary['client_cpu_us_per_move']} µs per move (on the same cores as the servers)"
        )
    arena = summary.get("tournament", {}).get("arena")
    if arena:
        first, again = arena["paired_to_first_move_ms"], arena["free_to_paired_again_ms"]
        print(
            f"  arena: {arena['games']} games; paired -> first move possible p50 {first['p50']} ms, p99 "
            f"{first['p99']} ms; free -> paired again p50 {again['p50']} ms, p99 {again['p99']} ms; "
            f"same opponent twice in a row: {arena['same_opponent_twice_in_a_row']}"
        )
    for row in summary.get("tournament", {}).get("rounds", ()):
        print(
            f"  round {row['round']}: pairing {row['pairing_ms']} ms, {row['games']} games, every game's first "
            f"move possible after p50 {row['round_start_p50_ms']} ms, max {row['round_start_max_ms']} ms "
            f"(games created after p50 {row.get('created_p50_ms')} ms, max {row.get('created_max_ms')} ms)"
        )
    print(f"  errors: {summary['errors'] or 'none'}")
    if summary.get("retried"):
        print(f"  moves refused UNAVAILABLE and sent again: {summary['retried']}")
    for server in summary["servers"]:
        switches, moves = server["context_switches"], summary["moves"]
        per_move = ""
        if switches is not None and moves:
            per_move = f"  {1e6 * server['cpu_s'] / moves:>6.0f} µs, {switches / moves:.2f} context switches a move"
        print(
            f"  {server['process']:<14} pid {server['pid']:<7} cpu {server['cpu_s']:>7.2f} s  "
            f"peak RSS {server['peak_rss_mib']:>7.1f} MiB{per_move}"
            + ("  (exited during the run)" if server["exited"] else "")
        )
    print(json.dumps({k: v for k, v in summary.items()}))


def parser() -> argparse.ArgumentParser:
    """The command line; tools that run the load generator in-process (tools/chaos.py) parse their
    arguments with it too, so a new option's default reaches them."""
    root = argparse.ArgumentParser(prog="tafel_loadgen", description=__doc__)
    root.add_argument("--gateways", default="127.0.0.1:50051", help="comma-separated gateway addresses")
    root.add_argument("--processes", type=int, default=1, help="client processes")
    root.add_argument("--seed", type=int, default=1)
    scenarios = root.add_subparsers(dest="scenario", required=True)
    games = scenarios.add_parser("games")
    games.add_argument("--game", default="connect4", choices=GAMES)
    games.add_argument("--games", type=int, default=20, help="concurrent games")
    games.add_argument("--think", type=float, default=0.0, help="seconds a bot thinks before each move")
    games.add_argument("--seats", type=int, default=2, help="players per game (Colour Square tables: 1-6)")
    games.add_argument("--duration", type=float, default=10.0)
    games.add_argument("--floor", action="store_true", help="also measure empty pings on the same layout")
    games.add_argument(
        "--shared-connection",
        action="store_true",
        help="every player of a process on one TCP connection (gRPC's default), not one each",
    )
    games.add_argument(
        "--client",
        default="python",
        choices=("python", "go"),
        help="the players: the Python SDK's (default) or clients/loadgen/go's (`make loadgen-go`;"
        " Connect Four, two seats, a connection each), which leave the servers more of the cores",
    )
    watchers = scenarios.add_parser("watchers")
    watchers.add_argument("--watchers", type=int, default=1000)
    watchers.add_argument("--live-games", type=int, default=10)
    watchers.add_argument("--hold", type=float, default=5.0, help="seconds to hold the watchers connected")
    social = scenarios.add_parser("social", help="account event streams held, challenges answered at a rate")
    social.add_argument("--streams", type=int, default=1000, help="account event streams to hold open")
    social.add_argument("--pairs", type=int, default=200, help="registered pairs that challenge each other")
    social.add_argument("--rate", type=float, default=500.0, help="challenges a second, in all")
    social.add_argument("--duration", type=float, default=20.0)
    chat = scenarios.add_parser("chat", help="a game's spectators chatting: delivery to every spectator")
    chat.add_argument("--spectators", type=int, default=1000, help="WatchChat streams on the spectators' channel")
    chat.add_argument(
        "--senders", type=int, default=250, help="spectators who write (registered; at most 0.5 lines/s each)"
    )
    chat.add_argument("--rate", type=float, default=100.0, help="lines a second, in all")
    chat.add_argument("--duration", type=float, default=20.0)
    presence = scenarios.add_parser("presence", help="followed accounts online then offline, followers told")
    presence.add_argument("--followed", type=int, default=10000, help="accounts that come online and go offline")
    presence.add_argument("--followers", type=int, default=1000, help="accounts following them, streams open")
    presence.add_argument("--follows", type=int, default=20, help="accounts each follower follows")
    presence.add_argument("--rate", type=float, default=0.0, help="accounts changing a second (0: all at once)")
    presence.add_argument("--settle", type=float, default=10.0, help="s without a new receipt that ends a wave")
    presence.add_argument("--accounts", default=None, help="JSON file keeping the accounts for the next run")
    tournament = scenarios.add_parser("tournament")
    tournament.add_argument("--players", type=int, default=16)
    tournament.add_argument("--rounds", type=int, default=4)
    tournament.add_argument("--format", default="swiss", choices=("swiss", "round_robin", "knockout", "arena"))
    tournament.add_argument("--minutes", type=float, default=10.0, help="arena: its duration")
    tournament.add_argument("--game", default="connect4", choices=GAMES)
    # Bots thinking like people: a log-normal pause before each move (tournament.py), median seconds.
    tournament.add_argument("--think", type=float, default=0.0)
    tournament.add_argument("--think-sigma", type=float, default=0.5)
    return root


def main(argv: list[str] | None = None) -> int:
    root = parser()
    args = root.parse_args(argv)
    if getattr(args, "client", "python") == "go":
        if args.game != "connect4" or args.seats != 2 or args.shared_connection or args.floor:
            root.error("--client go plays Connect Four, two seats, a connection each (no --floor)")
        from tafel_loadgen.go_client import binary

        try:
            binary()
        except FileNotFoundError as error:
            root.error(str(error))

    servers = server_processes(args.gateways.split(","))
    started = time.perf_counter()
    if args.scenario == "games":
        if args.floor:
            floor = run_split(argparse.Namespace(**{**vars(args), "scenario": "pings"}), 2 * args.games)
            print(
                f"floor: {floor.pings / args.duration:,.0f} empty ping round trips/s on {2 * args.games} play streams"
            )
            servers = server_processes(args.gateways.split(","))
            started = time.perf_counter()
        stats = run_split(args, args.games, servers)
    elif args.scenario == "watchers":
        from tafel_loadgen.watchers import run_watchers

        stats = asyncio.run(run_watchers(args.gateways.split(","), args.watchers, args.live_games, args.hold))
    elif args.scenario == "social":
        from tafel_loadgen.social import run_social

        stats = asyncio.run(run_social(args.gateways.split(","), args.streams, args.pairs, args.rate, args.duration))
    elif args.scenario == "chat":
        from tafel_loadgen.chat import run_chat

        targets = args.gateways.split(",")
        stats = asyncio.run(run_chat(targets, args.spectators, args.senders, args.rate, args.duration, args.processes))
    elif args.scenario == "presence":
        from tafel_loadgen.presence import run_presence

        stats = asyncio.run(
            run_presence(
                args.gateways.split(","),
                args.followed,
                args.followers,
                args.follows,
                args.rate,
                args.settle,
                args.accounts,
            )
        )
    else:
        from tafel_loadgen.tournament import run_tournament

        stats = asyncio.run(run_tournament(args.gateways.split(","), args))
    elapsed = time.perf_counter() - started
    if args.scenario == "games":
        elapsed = args.duration  # the players' own clock: process start-up is not play time
    summary = summarize(args, stats, elapsed, servers)
    print_summary(summary)
    return 1 if summary["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
