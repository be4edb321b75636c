"""The herd (docs/benchmarks.md, "The herd: a gateway killed under human-pace load"): two gateways
hold players at a person's pace; one is killed (SIGKILL), and every player it held must reconnect
and resume its game on the other within 30 s, with no move lost or applied twice and no clock
fired wrongly; then a gateway is stopped gracefully (SIGTERM) under the same load.

    python -m tools.bench_herd                                   # 6,000 players
    python -m tools.bench_herd --players 1000 --out herd.json    # a small one

`make bench-herd [BENCH_HERD_ARGS=...]` runs the first. The platform and the players are
tools.bench_capacity's (its own platform with the per-source limits raised, the Go players of
clients/loadgen/go/human.go, all on gRPC), with two gateways, the players spread over them. A
player whose stream fails opens one on the next gateway with the same session token and takes up
its search, its game (watched again from where it stands) and its move in flight (sent again with
its request id and expected version), as the Python SDK's PlayStream does.

Steps: the players connect and warm up; then for each event (the kill of gateway-1, which holds
the spectators, then, once it is started again, the graceful stop of gateway-0, which by then holds
every player):
`--before` seconds measured, the event, `--window` seconds (30: the issue's bound) measured from
it, `--after` seconds measured. Each event's figures: the players whose stream failed (by status;
RECONNECT: the gateway's own handover), the gateway's connections just before, the time from a
player's failure until it is back (its game's view on the new gateway for a player in a game, a
stream that answers otherwise; p50/p99/max), the players not back at the window's end, moves and
searches sent again, errors by kind, p99 move -> opponent before, during and after.

The checks, measured: at the end the players stop and hand over their ledger (every move each sent,
with its version and column, answered OK or never answered); every game they sat in is read as a
client would (GetGame, then GetGameRecord once over, or WatchGame from the start while running).
A move answered OK that is not in its game's record is lost; a move in a record that its player did
not send once (or a version twice) is doubled; a game ended by its clock while the players ran is
a clock fired wrongly (the players never think past their cap, `--per-move` * 3/4, so with an
outage shorter than the rest of the clock none may fire). Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any

import grpc
from tafel.play.v1 import play_pb2, play_pb2_grpc

from tools import bench_capacity
from tools.platform import Platform, raise_nofile

# gateway-1 is the one killed: it holds every spectator (player i spectates when i mod 10 is 9, an
# odd i, and odd players are on gateway-1 of two), so spectators' failover is measured too.
KILLED, STOPPED = "gateway-1", "gateway-0"
THINK_CAP_SHARE = 0.75  # the Go players' default --think-cap: 3/4 of the per-move clock
READERS = 32  # games read at once for the checks


class LedgerPlayers(bench_capacity.GoPlayers):
    """A Go players' process that also hands over its ledger ("ledger" line)."""

    def __init__(self, gateways: list[str], args: argparse.Namespace, seed: int) -> None:
        self.ledgers: queue.Queue[dict[str, Any]] = queue.Queue()
        super().__init__(gateways, [], args, seed, 0)
        self.say("ledger on")

    def other_line(self, kind: str, body: str) -> None:
        if kind == "ledger":
            self.ledgers.put(json.loads(body))


class HerdPlayers(bench_capacity.Players):
    def __init__(self, gateways: list[str], args: argparse.Namespace, processes: int) -> None:
        self.group: list[bench_capacity.GoPlayers] = [
            LedgerPlayers(gateways, args, args.seed * 100 + k) for k in range(processes)
        ]
        self.added = 0

    def lost_now(self) -> int:
        return sum(int(p.ticks[-1].get("lost", 0)) for p in self.group if p.ticks)

    def raw_reports(self) -> list[dict[str, Any]]:
        self.say("report")
        return [p.reports.get(timeout=60) for p in self.group]

    def ledger(self) -> dict[str, dict[str, dict[str, list[list[int]]]]]:
        """Every process's players stopped, their games' seats and moves together."""
        self.say("ledger")
        games: dict[str, dict[str, dict[str, list[list[int]]]]] = {}
        for p in self.group:
            assert isinstance(p, LedgerPlayers)
            for game_id, seats in p.ledgers.get(timeout=120)["games"].items():
                games.setdefault(game_id, {}).update(seats)
        return games


def spread(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else 0.0

    return {"p50": at(0.5), "p99": at(0.99), "max": at(1.0), "samples": len(ordered)}


def window(players: HerdPlayers) -> dict[str, Any]:
    """The window since the last "mark": bench_capacity's figures and the failovers'."""
    raw = players.raw_reports()
    merged = bench_capacity.merge_reports(raw)
    lost: dict[str, int] = {}
    for r in raw:
        for kind, count in r["streams_lost"].items():
            lost[kind] = lost.get(kind, 0) + count
    return {
        "seconds": max(r["seconds"] for r in raw),
        "connected": merged["connected"],
        "players": merged["players"],
        "moves_per_s": merged["moves_per_s"],
        "latency_ms": merged["latency_ms"],
        "errors": merged["errors"],
        "games_timed_out": merged["games_timed_out"],
        "streams_lost": lost,
        "lost_now": sum(r["lost_now"] for r in raw),
        "failovers": sum(r["failovers"] for r in raw),
        "back_samples_ms": [x for r in raw for x in r["back_samples_ms"] or ()],
        "resume_samples_ms": [x for r in raw for x in r["resume_samples_ms"] or ()],
        "moves_resent": sum(r["moves_resent"] for r in raw),
        "searches_resent": sum(r["searches_resent"] for r in raw),
    }


def summed(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in {*a, *b}}


def child(platform: Platform, name: str) -> Any:
    return next(c for c in reversed(platform.children) if c.name == name)


def herd(platform: Platform, players: HerdPlayers, args: argparse.Namespace, event: str) -> dict[str, Any]:
    """One event under load: `before` measured, the kill or the graceful stop, `window` and `after`."""
    name = KILLED if event == "kill" else STOPPED
    players.say("mark")
    time.sleep(args.before)
    before = window(players)
    victim = child(platform, name)
    fds_before = bench_capacity.open_fds(victim.process.pid)
    players.say("mark")
    began = time.monotonic()
    stopper = None
    if event == "kill":
        platform.kill(name)
    else:
        # In a thread: terminate() waits for the gateway to finish its stop while the clock runs.
        stopper = threading.Thread(target=platform.terminate, args=(name,), daemon=True)
        stopper.start()
    lost_curve = []  # [seconds since the event, players not back]
    while (elapsed := time.monotonic() - began) < args.window:
        time.sleep(min(1.0, args.window - elapsed))
        lost_curve.append([round(time.monotonic() - began, 1), players.lost_now()])
    during = window(players)
    if stopper is not None:
        stopper.join()
    players.say("mark")
    time.sleep(args.after)
    after = window(players)
    back = during["back_samples_ms"] + after["back_samples_ms"]
    resumed = during["resume_samples_ms"] + after["resume_samples_ms"]
    lost = summed(during["streams_lost"], after["streams_lost"])
    stream_errors = {k: v for k, v in lost.items() if k != "RECONNECT"}
    errors = summed(during["errors"], after["errors"])
    # A lost stream is counted among the errors by its status too: what is left is the rest.
    other = {k: v - stream_errors.get(k, 0) for k, v in errors.items() if v - stream_errors.get(k, 0) > 0}
    return {
        "event": event,
        "gateway": name,
        "gateway_connections_before": fds_before,
        "players_lost": sum(lost.values()),
        "streams_lost": lost,
        "back_ms": spread(back),
        "resume_ms": spread(resumed),
        "not_back_at_window_end": during["lost_now"],
        "not_back_at_end": after["lost_now"],
        "failovers": during["failovers"] + after["failovers"],
        "moves_resent": during["moves_resent"] + after["moves_resent"],
        "searches_resent": during["searches_resent"] + after["searches_resent"],
        "errors": errors,
        "errors_besides_lost_streams": other,
        "games_timed_out_seen": before["games_timed_out"] + during["games_timed_out"] + after["games_timed_out"],
        "connected_after": after["connected"],
        "players": after["players"],
        "p99_ms": {
            "before": before["latency_ms"]["p99"],
            "during": during["latency_ms"]["p99"],
            "after": after["latency_ms"]["p99"],
        },
        "moves_per_s": {
            "before": before["moves_per_s"],
            "during": during["moves_per_s"],
            "after": after["moves_per_s"],
        },
        "lost_per_second": lost_curve,
        "window_s": args.window,
    }


async def read_games(address: str, game_ids: list[str], deadline_s: float) -> dict[str, dict[str, Any]]:
    """Each game's moves ({version: [seat, column]}) and the times its clock fired, as a client reads
    them: a finished game's record, a running game's events from the start (WatchGame)."""
    async with grpc.aio.insecure_channel(address) as channel:
        accounts = play_pb2_grpc.AccountServiceStub(channel)
        games = play_pb2_grpc.GameServiceStub(channel)
        token = (await accounts.SignInAsGuest(play_pb2.SignInAsGuestRequest(), timeout=deadline_s)).session.token
        metadata = (("authorization", f"Bearer {token}"),)
        readers = asyncio.Semaphore(READERS)

        async def one(game_id: str) -> tuple[str, dict[str, Any]]:
            moves: list[tuple[int, int, int]] = []  # (version, seat, column)
            clocks: list[float] = []
            async with readers:
                got = await games.GetGame(
                    play_pb2.GetGameRequest(game_id=game_id), metadata=metadata, timeout=deadline_s
                )
                if got.summary.status.over:
                    request = play_pb2.GetGameRecordRequest(game_id=game_id)
                    record = (await games.GetGameRecord(request, metadata=metadata, timeout=deadline_s)).record
                    for action in record.actions:
                        kind = action.WhichOneof("action")
                        if kind == "move":
                            moves.append((action.version, action.seat, action.move.connect4.column))
                        elif kind == "timed_out":
                            clocks.append(action.at.ToMicroseconds() / 1e6)
                elif got.summary.status.version > 0:
                    watch = games.WatchGame(
                        play_pb2.WatchGameRequest(game_id=game_id), metadata=metadata, timeout=deadline_s
                    )
                    async for response in watch:
                        event = response.event
                        dropped = event.connect4.disc_dropped
                        if event.connect4.WhichOneof("kind") == "disc_dropped":
                            moves.append((event.version, dropped.seat, dropped.column))
                        if event.event_id == got.last_event_id:
                            break
                    watch.cancel()
            return game_id, {"moves": moves, "clocks": clocks}

        return dict(await asyncio.gather(*(one(game_id) for game_id in game_ids)))


def check(
    ledger: dict[str, dict[str, dict[str, list[list[int]]]]], games: dict[str, dict[str, Any]], halted_at: float
) -> dict[str, Any]:
    lost: list[str] = []
    doubled: list[str] = []
    acked = sum(len(seat["acked"]) for seats in ledger.values() for seat in seats.values())
    unanswered = sum(len(seat["unanswered"]) for seats in ledger.values() for seat in seats.values())
    for game_id, seats in ledger.items():
        moves = games[game_id]["moves"]
        at: dict[int, tuple[int, int]] = {}
        for version, seat, column in moves:
            if version in at:
                doubled.append(f"{game_id}: version {version} twice")
            at[version] = (seat, column)
        for seat_key, sent in seats.items():
            seat = int(seat_key)
            for version, column in sent["acked"]:
                if at.get(version) != (seat, column):
                    lost.append(f"{game_id}: seat {seat}'s column {column} at version {version}, answered OK")
            ours = {(version, column) for version, column in sent["acked"] + sent["unanswered"]}
            for version, (by, column) in at.items():
                if by == seat and (version, column) not in ours:
                    doubled.append(f"{game_id}: seat {seat}'s column {column} at version {version}, not sent then")
    clocks = [t for game in games.values() for t in game["clocks"] if t < halted_at]
    return {
        "games": len(ledger),
        "moves_answered_ok": acked,
        "moves_unanswered_at_stop": unanswered,
        "moves_in_records": sum(len(game["moves"]) for game in games.values()),
        "moves_lost": len(lost),
        "moves_doubled": len(doubled),
        "clocks_fired": len(clocks),
        "examples": (lost + doubled)[:10],
    }


def failures(report: dict[str, Any]) -> list[str]:
    out = []
    for event in report["events"]:
        name = event["event"]
        if event["players_lost"] == 0:
            out.append(f"{name}: no player lost its stream (the event did not happen)")
        if event["not_back_at_window_end"] or event["back_ms"]["max"] > event["window_s"] * 1000:
            out.append(f"{name}: players not back within {event['window_s']:g} s")
        if event["connected_after"] != event["players"]:
            out.append(f"{name}: {event['connected_after']} of {event['players']} connected after")
    checks = report["checks"]
    for key in ("moves_lost", "moves_doubled", "clocks_fired"):
        if checks[key]:
            out.append(f"{key}: {checks[key]}")
    if checks["moves_answered_ok"] == 0:
        out.append("no move was played")
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    args = argparse.Namespace(**{**vars(args), "web_share": 0.0})  # every player on gRPC: the Play stream's herd
    nofile = raise_nofile(at_least=2 * args.players + 4096)
    platform = Platform(
        gateways=2, fixed_ports=False, games=("connect4",), bot_pool=False, extra_env=bench_capacity.LIMITS
    ).start()
    think_cap = args.per_move * THINK_CAP_SHARE
    report: dict[str, Any] = {
        "players": args.players,
        "gateways": 2,
        "think_mean_s": args.think_mean,
        "think_sigma": args.think_sigma,
        "think_cap_s": think_cap,
        "per_move_s": args.per_move,
        "pause_s": args.pause,
        "spectators": args.spectators,
        "nofile_limit": nofile,
        "load_before": bench_capacity.loadavg(),
        "events": [],
    }
    players: HerdPlayers | None = None
    try:
        processes = max(1, math.ceil(args.players / max(1, nofile - 1024)))
        players = HerdPlayers(platform.gateway_addresses, args, processes)
        players.add(args.players)
        if not players.wait_connected(args.players, bench_capacity.CONNECT_TIMEOUT_S):
            raise RuntimeError(f"only {sum(p.connected() for p in players.group)} of {args.players} players connected")
        time.sleep(args.warmup)
        report["events"].append(herd(platform, players, args, "kill"))
        print(table(report["events"][-1]), flush=True)
        platform.restart(KILLED)
        time.sleep(args.settle)
        report["events"].append(herd(platform, players, args, "stop"))
        print(table(report["events"][-1]), flush=True)
        ledger = players.ledger()
        halted_at = time.time()
        games = asyncio.run(read_games(child(platform, KILLED).address, list(ledger), 60.0))
        report["checks"] = check(ledger, games, halted_at)
        # The clock could fire for a player that really did not move in time only past this margin.
        longest = max(event["back_ms"]["max"] for event in report["events"]) / 1000
        report["clock_margin_s"] = round(args.per_move - think_cap - longest, 3)
    finally:
        if players is not None:
            players.stop()
        platform.stop()
    report["load_after"] = bench_capacity.loadavg()
    report["failures"] = failures(report)
    return report


def table(event: dict[str, Any]) -> str:
    back, resume = event["back_ms"], event["resume_ms"]
    p99 = event["p99_ms"]
    return "\n".join([
        f"{event['event']} {event['gateway']} ({event['gateway_connections_before']} descriptors open before):",
        f"  players lost {event['players_lost']} {event['streams_lost']}, failovers {event['failovers']}",
        f"  back ms     p50 {back['p50']:.0f}  p99 {back['p99']:.0f}  max {back['max']:.0f}  ({back['samples']})",
        f"  in a game   p50 {resume['p50']:.0f}  p99 {resume['p99']:.0f}  max {resume['max']:.0f}"
        f"  ({resume['samples']})",
        f"  not back at {event['window_s']:g} s: {event['not_back_at_window_end']}, "
        f"at the end: {event['not_back_at_end']}",
        f"  resent: {event['moves_resent']} moves, {event['searches_resent']} searches; "
        f"other errors {event['errors_besides_lost_streams']}",
        f"  p99 move -> opponent ms: before {p99['before']:.0f}, during {p99['during']:.0f}, after {p99['after']:.0f}",
    ])  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=6_000, help="players (under a gateway's descriptor limit)")
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds after every player connected")
    parser.add_argument("--before", type=float, default=30.0, help="seconds measured before each event")
    parser.add_argument("--window", type=float, default=30.0, help="seconds the players have to be back")
    parser.add_argument("--after", type=float, default=30.0, help="seconds measured after that window")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds after the killed gateway restarts")
    bench_capacity.add_player_args(parser)
    parser.add_argument("--per-move", type=float, default=60.0, help="every game's per-move clock, seconds")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.players < 2 or min(args.warmup, args.before, args.after, args.settle) < 0 or args.window <= 0:
        parser.error("--players >= 2, --window > 0 and the other durations >= 0")
    report = run(args)
    for failure in report["failures"]:
        print(f"FAILED: {failure}", flush=True)
    checks = report["checks"]
    print(
        f"checks: {checks['games']} games, {checks['moves_answered_ok']} moves answered OK, "
        f"{checks['moves_lost']} lost, {checks['moves_doubled']} doubled, {checks['clocks_fired']} clocks fired "
        f"(per-move clock {args.per_move:g} s, think cap {report['think_cap_s']:g} s, margin "
        f"{report['clock_margin_s']} s)",
        flush=True,
    )
    line = json.dumps(report)
    print(line)
    if args.out:
        args.out.write_text(line + "\n")
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
