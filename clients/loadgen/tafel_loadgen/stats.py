"""Measurements: latency samples, error counts, and server processes' CPU and memory from /proc."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLK_TCK = os.sysconf("SC_CLK_TCK")
SERVER_MARKERS = (("-m services.", "rules"), ("-m gateway", "gateway"), ("redis-server", "redis"))


@dataclass
class Stats:
    moves: int = 0  # inside the measured window (games: window.py)
    moves_whole_run: int = 0  # setup and the run's end included (per-move counts of the whole run)
    games_finished: int = 0
    latencies: list[float] = field(default_factory=list)
    matchmaking: list[float] = field(default_factory=list)  # searches inside the window
    first_matchmaking: list[float] = field(default_factory=list)  # each player's first search (setup)
    setup_s: float = 0.0  # until every player had its first match (games: the window opens then)
    errors: Counter[str] = field(default_factory=Counter)
    # Moves refused UNAVAILABLE and sent again as the refusal says (by reason): not errors, since
    # the contract asks for the retry, but counted, since each is a player kept waiting.
    retried: Counter[str] = field(default_factory=Counter)
    pings: int = 0
    client_cpu_s: float = 0.0  # the load generator's own CPU (its client processes), over their runs
    tournament_id: str = ""  # the tournament scenario's tournament
    tournament: dict[str, Any] = field(default_factory=dict)  # its rounds' figures (tournament.py)
    join_retries: int = 0  # tournament joins refused as unavailable and sent again

    def count_move(self, _answer: object = None) -> None:
        self.moves += 1

    def merge(self, other: dict[str, Any]) -> None:
        self.moves += int(other["moves"])
        self.moves_whole_run += int(other.get("moves_whole_run", 0))
        self.games_finished += int(other["games_finished"])
        self.latencies.extend(other["latencies"])
        self.matchmaking.extend(other["matchmaking"])
        self.first_matchmaking.extend(other.get("first_matchmaking", ()))
        self.setup_s = max(self.setup_s, float(other.get("setup_s", 0.0)))
        self.errors.update(other["errors"])
        self.retried.update(other.get("retried", {}))
        self.pings += int(other.get("pings", 0))
        self.client_cpu_s += float(other.get("client_cpu_s", 0.0))

    def as_dict(self) -> dict[str, Any]:
        return {
            "moves": self.moves,
            "moves_whole_run": self.moves_whole_run,
            "games_finished": self.games_finished,
            "latencies": self.latencies,
            "matchmaking": self.matchmaking,
            "first_matchmaking": self.first_matchmaking,
            "setup_s": self.setup_s,
            "errors": dict(self.errors),
            "retried": dict(self.retried),
            "pings": self.pings,
            "client_cpu_s": self.client_cpu_s,
        }


def percentile(samples: list[float], q: float) -> float:
    if not samples:
        return 0.0
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


@dataclass
class ServerProcess:
    """A server process measured from /proc. One that exits during a run (a chaos kill, a crash)
    keeps the figures of its last sample instead of failing the whole run's summary."""

    pid: int
    kind: str
    name: str
    cpu_start: float
    last_cpu: float = -1.0
    last_rss_mib: float = 0.0
    exited: bool = False
    window_from: float | None = None  # its CPU when the measured window opened (games: window.py)
    window_to: float | None = None  # and when it closed
    # Its threads' context switches then: a count that moves less with the machine than CPU does
    # (what the servers' gRPC polling changed: kit/grpc_polling.py).
    switches_from: int | None = None
    switches_to: int | None = None

    def sample(self) -> None:
        """Reads the process's CPU time and peak RSS now; call it during a run to keep them fresh."""
        if self.exited:
            return
        try:
            cpu = cpu_seconds(self.pid)
            status = Path(f"/proc/{self.pid}/status").read_text().splitlines()
        except (OSError, IndexError, ValueError):  # gone (FileNotFoundError, ProcessLookupError) or half-written
            self.exited = True
            return
        self.last_cpu = cpu
        if any(line.startswith("State:") and line.split()[1] in ("Z", "X") for line in status):
            self.exited = True  # dead, not yet reaped: its memory lines are gone
            return
        for line in status:
            if line.startswith("VmHWM:"):
                self.last_rss_mib = int(line.split()[1]) / 1024

    def mark_window(self, end: bool = False) -> None:
        """Note its CPU as the measured window opens (or, `end`, closes)."""
        self.sample()
        switches = None if self.exited else context_switches(self.pid)
        if end:
            self.window_to = self.last_cpu
            self.switches_to = switches
        else:
            self.window_from = self.last_cpu
            self.switches_from = switches

    def switches(self) -> int | None:
        """Context switches of its threads inside the measured window (None: no window, or it
        exited; a thread that ended inside the window takes its count with it)."""
        if self.switches_from is None or self.switches_to is None:
            return None
        return max(0, self.switches_to - self.switches_from)

    def cpu(self) -> float:
        """CPU seconds inside the measured window when one was marked, else since it was found."""
        self.sample()
        if self.last_cpu < 0:
            return 0.0
        if self.window_from is not None:
            return max(0.0, (self.window_to if self.window_to is not None else self.last_cpu) - self.window_from)
        return self.whole_cpu()

    def whole_cpu(self) -> float:
        """CPU seconds since it was found (setup and teardown included)."""
        self.sample()
        return max(0.0, self.last_cpu - self.cpu_start) if self.last_cpu >= 0 else 0.0

    def peak_rss_mib(self) -> float:
        self.sample()
        return self.last_rss_mib


def context_switches(pid: int) -> int | None:
    """Voluntary and involuntary context switches of all of a process's threads so far."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            for line in (task / "status").read_text().splitlines():
                if "ctxt_switches:" in line:  # voluntary_ and nonvoluntary_
                    total += int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return total


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def _listening_inodes(ports: set[int]) -> set[str]:
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            port = int(fields[1].rsplit(":", 1)[1], 16)
            if port in ports and fields[3] == "0A":  # LISTEN
                inodes.add(fields[9])
    return inodes


def _pids_owning(inodes: set[str]) -> set[int]:
    owners = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    owners.add(int(entry.name))
                    break
        except OSError:
            continue
    return owners


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def server_processes(gateways: list[str] | None = None) -> list[ServerProcess]:
    """The tafel server processes on this machine. With `gateways`, only the platform those
    gateways belong to: the processes listening on their ports and their siblings (the other
    children of the process that started them, as `make run` does)."""
    wanted: set[int] | None = None
    if gateways:
        ports = {int(address.rsplit(":", 1)[1]) for address in gateways}
        owners = _pids_owning(_listening_inodes(ports))
        parents = {_parent(pid) for pid in owners}
        wanted = set(owners)
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if _parent(int(entry.name)) in parents:
                        wanted.add(int(entry.name))
                except (OSError, IndexError):
                    continue
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        if wanted is not None and int(entry.name) not in wanted:
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            for marker, kind in SERVER_MARKERS:
                if marker in cmdline:
                    name = cmdline.split(marker, 1)[1].split()[0] if kind == "rules" else kind
                    found.append(ServerProcess(int(entry.name), kind, name, cpu_seconds(int(entry.name))))
                    break
        except (OSError, IndexError):
            continue
    return found
