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
    moves: int = 0
    games_finished: int = 0
    latencies: list[float] = field(default_factory=list)
    matchmaking: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    pings: int = 0
    client_cpu_s: float = 0.0  # the load generator's own CPU (its client processes), over their runs
    tournament_id: str = ""  # the tournament scenario's tournament

    def count_move(self, _answer: object = None) -> None:
        self.moves += 1

    def merge(self, other: dict[str, Any]) -> None:
        self.moves += int(other["moves"])
        self.games_finished += int(other["games_finished"])
        self.latencies.extend(other["latencies"])
        self.matchmaking.extend(other["matchmaking"])
        self.errors.update(other["errors"])
        self.pings += int(other.get("pings", 0))
        self.client_cpu_s += float(other.get("client_cpu_s", 0.0))

    def as_dict(self) -> dict[str, Any]:
        return {
            "moves": self.moves,
            "games_finished": self.games_finished,
            "latencies": self.latencies,
            "matchmaking": self.matchmaking,
            "errors": dict(self.errors),
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

    def cpu(self) -> float:
        self.sample()
        return max(0.0, self.last_cpu - self.cpu_start) if self.last_cpu >= 0 else 0.0

    def peak_rss_mib(self) -> float:
        self.sample()
        return self.last_rss_mib


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
