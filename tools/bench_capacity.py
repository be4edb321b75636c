"""Capacity at human pace (docs/benchmarks.md, "Capacity at human pace"): how many people one
machine holds, connected and playing at a person's pace, while p99 move -> opponent stays within
the bar and nothing fails.

    python -m tools.bench_capacity                                   # ramp to 40,000 by 2,000, hold 10 min
    python -m tools.bench_capacity --gateways 2                      # players spread over two gateways
    python -m tools.bench_capacity --web-share 0                     # every player on gRPC, none on the web edge
    python -m tools.bench_capacity --target 1000 --step 500 --settle 20 --window 30 --hold 60   # a quick one

`make bench-capacity [BENCH_CAPACITY_ARGS=...]` runs the first. Steps: the platform of its own
(tools.platform: one Redis, Connect Four's rules service, `--gateways` gateways, no bot pool) with
the per-source limits raised (LIMITS: every player comes from 127.0.0.1, where a deployment's
per-address limits would refuse them; a deployment keeps the defaults), and RLIMIT_NOFILE raised
to its hard limit for this process and so for every process it starts (a connected player is a
socket, one descriptor, in the gateway and in the load generator). The Go players
(clients/loadgen/go, `--capacity`: human.go has the player model) in one process that keeps
every player connected; each step asks it for `--step` more players, waits until they are
connected, lets them settle, then measures a window. The ramp goes on while p99 move -> opponent
<= `--p99-ms` and errors stay 0, up to `--target`; then `--hold` seconds at the highest step that
met the bar (if the last step failed, the players are started again at that count: the model
never leaves a game, so they cannot be taken away one by one without failing their opponents).

`--web-share` of the players (default 0.25: the issue's 10,000 of 40,000) arrive as browsers do,
on the gateways' web edge (gateway/web, the Connect protocol over HTTP/1.1; clients/loadgen/go/
connect.go): FindMatch and WatchGame as server streams, SubmitMove and ListLiveGames as unary
calls, an HTTP client of its own each (up to WEB_SOCKETS sockets, a browser's 6 at most). The
edge serves the gateway's own handlers behind the same call limits, so LIMITS covers its players
too; they make more calls than a Play stream's players (a call a move, two a game page), well
within those limits. The players on each transport and each transport's p99 move -> opponent
(by the transport of the player who sees the move) are in every row; the bar holds for each.

Each step's row: connected players, live games, moves/s, latency p50/p99/max, errors, server CPU
(cores: gateways + rules + Redis, from /proc), the load generator's CPU, gateway RSS and RSS per
connected player above its RSS at rest, Redis used_memory and per live game above its memory at
rest, the gateways' open descriptors, the load average. A ramp that stops below the target says
which resource ran out first, from those numbers (`limit`). One JSON line at the end (`--out FILE`
writes it too); exit status 1 when no step met the bar.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import redis as redis_sync
from tafel_loadgen import go_client
from tafel_loadgen.stats import CLK_TCK, cpu_seconds

from tools.platform import Platform, raise_nofile

ROOT = Path(__file__).resolve().parents[1]
# Every player signs in and calls from 127.0.0.1; the gateway's per-address limits (gateway/settings.py,
# LimitSettings) are set for a deployment where an address is a household. Only here, never deployed.
LIMITS = {
    "TAFEL_LIMIT_SIGN_INS_PER_PEER": "100000/100000",
    "TAFEL_LIMIT_CALLS_PER_PEER": "1000000/1000000",
    "TAFEL_LIMIT_CALLS_PER_PLAYER": "100000/100000",
}
CONNECT_TIMEOUT_S = 300.0  # a step whose players are not all connected by then fails (NOT_CONNECTED)
# The most sockets a web edge player holds at once (connect.go): a server stream, a unary call, and
# a GetGame while a game page opens; a gRPC player holds one.
WEB_SOCKETS = 3
TRANSPORTS = ("grpc", "web")


def sockets_per_player(web_share: float) -> float:
    return 1 + (WEB_SOCKETS - 1) * web_share


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def nofile_limit(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    return 0


def machine_busy_s() -> float:
    """CPU seconds every core of the machine spent busy so far (/proc/stat: all but idle and iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / CLK_TCK


def mem_available_fraction() -> float:
    info = {line.split(":")[0]: int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()}
    return info["MemAvailable"] / info["MemTotal"]


class GoPlayers:
    """One Go players' process (`--capacity`): its tick lines kept, its reports handed over."""

    def __init__(
        self, gateways: list[str], web_urls: list[str], args: argparse.Namespace, seed: int, players: int
    ) -> None:
        command = [
            str(go_client.binary()), "--capacity",
            "--gateways", ",".join(gateways),
            "--players", str(players),
            "--think-mean", f"{args.think_mean}s",
            "--think-sigma", str(args.think_sigma),
            "--per-move", f"{args.per_move}s",
            "--pause", f"{args.pause}s",
            "--spectators", str(args.spectators),
            "--connect-rate", str(args.connect_rate),
            "--seed", str(seed),
        ]  # fmt: skip
        if args.web_share > 0:
            command += ["--web", ",".join(web_urls), "--web-share", str(args.web_share)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ticks: list[dict[str, Any]] = []
        self.reports: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            kind, _, body = line.partition(" ")
            if kind == "tick":
                self.ticks.append(json.loads(body))
            elif kind == "report":
                self.reports.put(json.loads(body))
            else:
                self.other_line(kind, body)

    def other_line(self, kind: str, body: str) -> None:
        """A line of another kind (a subclass's scenario adds some); ignored here."""

    def say(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def connected(self) -> int:
        return int(self.ticks[-1]["connected"]) if self.ticks else 0

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                self.say("stop")
                self.process.wait(30)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self._reader.join(5)


def merge_reports(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """The processes' windows as one: counts summed, percentiles of every sample together."""

    def spread(samples: list[float]) -> dict[str, float]:
        ordered = sorted(samples)

        def at(q: float) -> float:
            return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else 0.0

        return {"p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "max": at(1.0), "samples": len(ordered)}

    merged: dict[str, Any] = {
        key: sum(r[key] for r in reports)
        for key in (
            "players", "connected", "in_game", "watching", "live_games", "moves", "moves_per_s",
            "games_finished", "games_timed_out", "games_watched", "client_cpu_s",
        )
    }  # fmt: skip
    merged["moves_per_s"] = round(merged["moves_per_s"], 1)
    merged["latency_ms"] = spread([x for r in reports for x in r["latency_samples_ms"] or ()])
    merged["matchmaking_wait_ms"] = spread([x for r in reports for x in r["matchmaking_samples_ms"] or ()])
    errors: dict[str, int] = {}
    for r in reports:
        for code, count in r["errors"].items():
            errors[code] = errors.get(code, 0) + count
    merged["errors"] = errors
    # Every process reports every transport (0 players where it has none).
    merged["transports"] = {
        name: {
            "players": sum(r["transports"].get(name, {}).get("players", 0) for r in reports),
            "latency_ms": spread(
                [x for r in reports for x in r["transports"].get(name, {}).get("latency_samples_ms") or ()]
            ),
        }
        for name in TRANSPORTS
    }
    thinks = sum(r["think_s"]["count"] for r in reports)
    merged["think_s"] = {
        "mean": round(sum(r["think_s"]["mean"] * r["think_s"]["count"] for r in reports) / max(1, thinks), 3),
        "max": max(r["think_s"]["max"] for r in reports),
        "count": thinks,
    }
    return merged


class Players:
    """Every player, in as many Go processes as the descriptor limit needs (a descriptor each):
    an `add N` is split between them, their reports merged."""

    def __init__(
        self, gateways: list[str], web_urls: list[str], args: argparse.Namespace, processes: int, players: int = 0
    ) -> None:
        self.group = [
            GoPlayers(gateways, web_urls, args, args.seed * 100 + k, players // processes + (k < players % processes))
            for k in range(processes)
        ]
        self.added = 0

    def pids(self) -> list[int]:
        return [p.process.pid for p in self.group]

    def say(self, line: str) -> None:
        for p in self.group:
            p.say(line)

    def add(self, count: int) -> None:
        # Round-robin from where the last add stopped, so that the processes stay even.
        shares = [0] * len(self.group)
        for i in range(count):
            shares[(self.added + i) % len(self.group)] += 1
        self.added += count
        for p, share in zip(self.group, shares, strict=True):
            if share:
                p.say(f"add {share}")

    def report(self) -> dict[str, Any]:
        self.say("report")
        return merge_reports([p.reports.get(timeout=60) for p in self.group])

    def wait_connected(self, players: int, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(p.process.poll() is not None for p in self.group):
                return False
            if sum(p.connected() for p in self.group) >= players:
                return True
            time.sleep(0.5)
        return False

    def per_second(self) -> list[list[float]]:
        """[seconds, connected, live games, moves] each second, the processes' nth ticks together."""
        rows = []
        for ticks in zip(*(p.ticks for p in self.group), strict=False):
            rows.append([
                ticks[0]["t"],
                sum(t["connected"] for t in ticks),
                sum(t["live_games"] for t in ticks),
                sum(t["moves"] for t in ticks),
            ])  # fmt: skip
        return rows

    def stop(self) -> None:
        for p in self.group:
            p.stop()


class Servers:
    """The platform's processes as /proc shows them: gateways, the rules service, Redis."""

    def __init__(self, platform: Platform) -> None:
        self.gateways = [c.process.pid for c in platform.children if c.name.startswith("gateway-")]
        self.rules = [c.process.pid for c in platform.children if not c.name.startswith("gateway-")]
        assert platform.redis is not None
        self.redis_pid = platform.redis.process.pid
        self.redis = redis_sync.Redis(host="127.0.0.1", port=platform.redis.port, socket_timeout=5)

    def all(self) -> list[int]:
        return [*self.gateways, *self.rules, self.redis_pid]

    def cpu(self) -> dict[int, float]:
        return {pid: cpu_seconds(pid) for pid in self.all()}

    def used_memory(self) -> int:
        return int(self.redis.info("memory")["used_memory"])

    def gateway_rss_mib(self) -> float:
        return sum(rss_mib(pid) for pid in self.gateways)


class Step:
    """A measured window: CPU of every process over it, the rest read at its end."""

    def __init__(self, servers: Servers, players: Players) -> None:
        self.servers, self.players = servers, players
        self.began = time.monotonic()
        self.cpu = servers.cpu()
        self.client_cpu = sum(cpu_seconds(pid) for pid in players.pids())
        self.machine = machine_busy_s()

    def row(self, label: str, at_rest: dict[str, float]) -> dict[str, Any]:
        seconds = time.monotonic() - self.began
        cpu = self.servers.cpu()
        per_process = {pid: (cpu[pid] - self.cpu[pid]) / seconds for pid in cpu}
        report = self.players.report()
        connected, live = report["connected"], report["live_games"]
        gateway_rss = self.servers.gateway_rss_mib()
        used = self.servers.used_memory()
        gateway_busiest = max(per_process[pid] for pid in self.servers.gateways)
        return {
            "step": label,
            "players": report["players"],
            "connected": connected,
            "in_game": report["in_game"],
            "watching": report["watching"],
            "live_games": live,
            "moves_per_s": report["moves_per_s"],
            "latency_ms": {k: report["latency_ms"][k] for k in ("p50", "p90", "p99", "max", "samples")},
            "transports": report["transports"],
            "matchmaking_wait_ms": {k: report["matchmaking_wait_ms"][k] for k in ("p50", "p99")},
            "errors": report["errors"],
            "games_finished": report["games_finished"],
            "games_timed_out": report["games_timed_out"],
            "games_watched": report["games_watched"],
            "think_s": report["think_s"],
            "server_cores": round(sum(per_process.values()), 3),
            "gateway_cores": round(sum(per_process[pid] for pid in self.servers.gateways), 3),
            "gateway_cores_busiest": round(gateway_busiest, 3),
            "rules_cores": round(sum(per_process[pid] for pid in self.servers.rules), 3),
            "redis_cores": round(per_process[self.servers.redis_pid], 3),
            "loadgen_cores": round(
                (sum(cpu_seconds(pid) for pid in self.players.pids()) - self.client_cpu) / seconds, 3
            ),
            "loadgen_processes": len(self.players.pids()),
            "gateway_rss_mib": round(gateway_rss, 1),
            "gateway_kib_per_player": round((gateway_rss - at_rest["gateway_rss_mib"]) * 1024 / max(1, connected), 1),
            "redis_used_mib": round(used / 2**20, 1),
            "redis_kib_per_live_game": round((used - at_rest["redis_used"]) / 1024 / max(1, live), 1),
            "gateway_fds": sum(open_fds(pid) for pid in self.servers.gateways),
            "gateway_fd_limit": min(nofile_limit(pid) for pid in self.servers.gateways),
            "gateway_processes": len(self.servers.gateways),
            "loadgen_fds": sum(open_fds(pid) for pid in self.players.pids()),
            "machine_cores_busy": round((machine_busy_s() - self.machine) / seconds, 3),
            "load_avg": loadavg(),
            "mem_available": round(mem_available_fraction(), 3),
            "window_s": round(seconds, 1),
        }


def errors_of(row: dict[str, Any]) -> int:
    return sum(row["errors"].values())


def meets(row: dict[str, Any], p99_ms: float) -> bool:
    # Every transport's players within the bar, not only all of them together.
    transports = [t for t in row.get("transports", {}).values() if t["players"] > 0]
    return (
        errors_of(row) == 0
        and row["latency_ms"]["samples"] > 0
        and row["latency_ms"]["p99"] <= p99_ms
        and all(t["latency_ms"]["samples"] > 0 and t["latency_ms"]["p99"] <= p99_ms for t in transports)
        and row["connected"] == row["players"]
    )


def limit_of(row: dict[str, Any], p99_ms: float) -> str:
    """Which resource ran out first at a step that missed the bar, from its numbers."""
    cores = os.cpu_count() or 1
    used = row["server_cores"] + row["loadgen_cores"]
    by_transport = "".join(
        f" ({name} {t['latency_ms']['p99']} ms)" for name, t in row.get("transports", {}).items() if t["players"]
    )
    figures = (
        f"p99 {row['latency_ms']['p99']} ms{by_transport}, {errors_of(row)} errors, "
        f"servers {row['server_cores']} cores "
        f"(gateway {row['gateway_cores']}, busiest gateway process {row['gateway_cores_busiest']}, rules "
        f"{row['rules_cores']}, Redis {row['redis_cores']}), load generator {row['loadgen_cores']} of {cores} cores"
    )
    if row["gateway_fds"] >= 0.9 * row["gateway_fd_limit"] * row["gateway_processes"]:
        return f"file descriptors: gateways hold {row['gateway_fds']} of {row['gateway_fd_limit']} each; {figures}"
    if row["mem_available"] < 0.1:
        return f"memory: {row['mem_available']:.0%} of the machine's memory left; {figures}"
    machine = row["machine_cores_busy"]
    if used >= 0.9 * cores:
        return f"CPU saturated: {used:.2f} of {cores} cores busy; {figures}"
    if machine >= 0.9 * cores:
        return (
            f"CPU saturated by the machine's other work: {machine:.2f} of {cores} cores busy, "
            f"{used:.2f} of them this benchmark's; {figures}"
        )
    if row["gateway_cores_busiest"] >= 0.85:
        return f"a gateway process's one core (its event loop) saturated while the machine had cores left; {figures}"
    if row["load_avg"] > cores:
        return (
            f"CPU contended: load average {row['load_avg']} on {cores} cores ({machine:.2f} busy, "
            f"{used:.2f} of them this benchmark's); {figures}"
        )
    if row["connected"] < row["players"]:
        return f"connections: {row['connected']} of {row['players']} players connected; {figures}"
    if errors_of(row):
        return f"errors {row['errors']} before any resource ran out; {figures}"
    return f"latency with CPU to spare ({machine:.2f} of {cores} cores busy): p99 over {p99_ms} ms; {figures}"


HEADER = (
    f"{'step':>6} {'players':>8} {'conn':>7} {'games':>6} {'moves/s':>8} {'p50':>6} {'p99':>7} {'max':>7} "
    f"{'web':>6} {'webp99':>7} {'err':>4} {'srv':>5} {'gw':>5} {'lg':>5} {'gwMiB':>7} {'KiB/pl':>7} {'rdMiB':>6} "
    f"{'KiB/g':>6} {'fds':>6} {'load':>5}"
)


def table_line(row: dict[str, Any]) -> str:
    lat = row["latency_ms"]
    web = row["transports"]["web"]
    return (
        f"{row['step']:>6} {row['players']:>8} {row['connected']:>7} {row['live_games']:>6} {row['moves_per_s']:>8.1f} "
        f"{lat['p50']:>6.1f} {lat['p99']:>7.1f} {lat['max']:>7.1f} "
        f"{web['players']:>6} {web['latency_ms']['p99']:>7.1f} "
        f"{errors_of(row):>4} {row['server_cores']:>5.2f} "
        f"{row['gateway_cores']:>5.2f} {row['loadgen_cores']:>5.2f} {row['gateway_rss_mib']:>7.1f} "
        f"{row['gateway_kib_per_player']:>7.1f} {row['redis_used_mib']:>6.1f} {row['redis_kib_per_live_game']:>6.1f} "
        f"{row['gateway_fds']:>6} {row['load_avg']:>5.2f}"
    )


def measure(
    label: str, servers: Servers, players: Players, seconds: float, at_rest: dict[str, float]
) -> dict[str, Any]:
    players.say("mark")
    step = Step(servers, players)
    time.sleep(seconds)
    return step.row(label, at_rest)


def run(args: argparse.Namespace) -> dict[str, Any]:
    if not 0 <= args.web_share <= 1:
        raise ValueError(f"--web-share is a share of the players, 0 to 1, not {args.web_share}")
    # A descriptor per socket in the load generator and in its gateway, with room for the rest.
    sockets = sockets_per_player(args.web_share)
    nofile = raise_nofile(at_least=math.ceil(2 * args.target * sockets) + 4096)
    if nofile < args.target * sockets // args.gateways + 1024:
        # Not allowed higher (no CAP_SYS_RESOURCE): the load generator takes more processes, but
        # each gateway holds at most this many players; the ramp will say so when it gets there.
        print(
            f"note: RLIMIT_NOFILE is {nofile} (not allowed higher): a gateway holds fewer than "
            f"{nofile} players, {args.target // args.gateways} each would need more",
            flush=True,
        )
    platform = Platform(
        gateways=args.gateways,
        fixed_ports=False,
        games=("connect4",),
        bot_pool=False,
        extra_env=LIMITS,
    ).start()
    if args.web_share > 0 and len(platform.web_urls) != args.gateways:
        platform.stop()
        raise RuntimeError(f"--web-share {args.web_share}: the gateways started without their web edge")
    report: dict[str, Any] = {
        "target": args.target,
        "step_players": args.step,
        "gateways": args.gateways,
        "think_mean_s": args.think_mean,
        "think_sigma": args.think_sigma,
        "per_move_s": args.per_move,
        "pause_s": args.pause,
        "spectators": args.spectators,
        "web_share": args.web_share,
        "p99_bar_ms": args.p99_ms,
        "nofile_limit": nofile,
        "cores": os.cpu_count(),
        "load_before": loadavg(),
        "steps": [],
    }
    players: Players | None = None
    per_second: list[list[float]] = []  # of the players' processes stopped before the last
    try:
        servers = Servers(platform)
        at_rest = {"gateway_rss_mib": servers.gateway_rss_mib(), "redis_used": float(servers.used_memory())}
        report["at_rest"] = {
            "gateway_rss_mib": round(at_rest["gateway_rss_mib"], 1),
            "redis_used_mib": round(at_rest["redis_used"] / 2**20, 1),
        }
        # A descriptor per socket in a Go process: as many processes as that limit needs.
        processes = max(1, math.ceil(args.target * sockets / max(1, nofile - 1024)))
        report["loadgen_processes"] = processes
        players = Players(platform.gateway_addresses, platform.web_urls, args, processes)
        print(HEADER, flush=True)
        best: dict[str, Any] | None = None
        count = 0
        while count < args.target:
            add = min(args.step, args.target - count)
            count += add
            players.add(add)
            connected = players.wait_connected(count, CONNECT_TIMEOUT_S)
            time.sleep(args.settle)
            row = measure(str(count), servers, players, args.window, at_rest)
            if not connected:
                row["errors"]["NOT_CONNECTED"] = count - row["connected"]
            report["steps"].append(row)
            print(table_line(row), flush=True)
            if not meets(row, args.p99_ms):
                report["limit"] = limit_of(row, args.p99_ms)
                print(f"stopped at {count}: {report['limit']}", flush=True)
                break
            best = row
        report["highest_passing_players"] = best["players"] if best else 0
        if best is not None:
            if best is not report["steps"][-1]:
                # The players cannot leave one by one without their opponents' games running out of
                # time: start them again at the passing count, after every abandoned game's clock.
                players.stop()
                per_second.extend(players.per_second())
                time.sleep(args.per_move + 5)
                players = Players(platform.gateway_addresses, platform.web_urls, args, processes, best["players"])
                players.wait_connected(best["players"], CONNECT_TIMEOUT_S)
                time.sleep(args.settle)
            if args.hold > 0:
                row = measure("hold", servers, players, args.hold, at_rest)
                row["hold_s"] = args.hold
                report["hold"] = row
                report["hold_meets_bar"] = meets(row, args.p99_ms)
                print(table_line(row), flush=True)
    finally:
        if players is not None:
            players.stop()
            per_second.extend(players.per_second())
        platform.stop()
    # Each second of the run: [seconds since its players' process started, connected, live games, moves].
    report["per_second"] = per_second
    report["load_after"] = loadavg()
    return report


def add_model_args(parser: argparse.ArgumentParser) -> None:
    """The ramp's and the player model's flags, shared with tools/bench_capacity_peers.py (the same
    people against Colyseus): one place for their defaults, so both sides of a comparison agree."""
    parser.add_argument("--target", type=int, default=40_000, help="the most players the ramp goes to")
    parser.add_argument("--step", type=int, default=2_000, help="players added each step")
    parser.add_argument(
        "--settle", type=float, default=30.0, help="seconds after a step's players connect, before its window"
    )
    parser.add_argument("--window", type=float, default=60.0, help="each step's measured seconds")
    parser.add_argument("--hold", type=float, default=600.0, help="seconds held at the highest step that met the bar")
    parser.add_argument("--p99-ms", type=float, default=100.0, help="the bar: p99 move -> opponent")
    add_player_args(parser)
    parser.add_argument("--out", type=Path)


def add_player_args(parser: argparse.ArgumentParser) -> None:
    """The player model's flags alone (tools/bench_herd.py has no ramp)."""
    parser.add_argument("--think-mean", type=float, default=10.0, help="mean seconds a person thinks before a move")
    parser.add_argument(
        "--think-sigma", type=float, default=0.75, help="its log-normal sigma (clients/loadgen/go/main.go)"
    )
    parser.add_argument(
        "--pause", type=float, default=5.0, help="mean seconds between a game's end and the next search"
    )
    parser.add_argument("--spectators", type=float, default=0.1, help="share of the players spectating")
    parser.add_argument(
        "--connect-rate", type=int, default=500, help="players connected a second while a step adds them"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_args(parser)
    parser.add_argument("--gateways", type=int, default=1, help="gateways; players spread over them evenly")
    parser.add_argument("--per-move", type=float, default=60.0, help="the per-move clock of every game, seconds")
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument(
        "--web-share",
        type=float,
        default=0.25,
        help="share of the players arriving as browsers, on the gateways' web edge (0 to 1)",
    )
    args = parser.parse_args()
    if not 0 <= args.web_share <= 1:
        parser.error("--web-share is a share of the players, 0 to 1")
    report = run(args)
    line = json.dumps(report)
    print(line)
    if args.out:
        args.out.write_text(line + "\n")
    return 0 if report.get("highest_passing_players") else 1


if __name__ == "__main__":
    sys.exit(main())
