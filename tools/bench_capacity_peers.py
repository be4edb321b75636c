"""Colyseus at human pace (docs/benchmarks.md, "Colyseus at human pace"): the capacity benchmark's
player model (tools/bench_capacity.py) against Colyseus, so that both sides' most connected
players at p99 move -> opponent <= the bar with 0 errors make a ratio.

    python -m tools.bench_capacity_peers                     # ramp to 40,000 by 2,000, hold 10 min
    python -m tools.bench_capacity_peers --target 1000 --step 500 --settle 20 --window 30 --hold 60

The peers' harness (../shared/peers, TAFEL_PEERS) is copied with tools/peers_human.sh into
`--peers-dir` (made or refreshed; its Node dependencies from the peers' lock file), then its
server_human.js (the peers' Connect Four room plus spectators) runs on 127.0.0.1 and its
load_human.js ramps: every `--step` clients more, `--settle` s, a `--window` s measured; on while
p99 <= `--p99-ms` and errors stay 0, up to `--target`; then `--hold` s at the highest step that
met the bar (the failing step's clients stop first). The flags and their defaults are
tools/bench_capacity.py's: the same think time (log-normal, mean `--think-mean` of the capped
draws, `--think-sigma`, capped at `--think-cap`), pause between games, spectator share and
connect rate. Each step's row has tafel's row names where they mean the same (players,
connected, live games, moves/s, latency, matchmaking wait, errors, server and load generator
cores, server RSS and KiB per connected player above its RSS at rest, descriptors, load average);
the server is Colyseus' one Node process. One JSON line at the end (`--out FILE` writes it too);
exit status 1 when no step met the bar.

What differs from tafel's side, by the peer's nature: a Colyseus client is connected only
through a room, so a player holds no connection in its pause between games (`connected` counts
open room connections; tafel's players keep their stream through the pause); no clocks (the room
has none); spectators watch a random live game, not the newest (the room takes up to
`--spectators-per-room`; a game gone before a spectator got in is `spectate_missed`, not an error).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from tools.bench_capacity import add_model_args
from tools.platform import raise_nofile

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "peers_human.sh"
DEFAULT_DIR = Path(tempfile.gettempdir()) / "tafel-peers-human"


def prepare(peers_dir: Path) -> Path:
    """The harness copy with Colyseus' human-pace files, its dependencies installed; its colyseus/."""
    done = subprocess.run([str(SCRIPT), str(peers_dir)], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"tools/peers_human.sh failed: {done.stderr[-2000:]}")
    return peers_dir / "colyseus"


def load_args(args: argparse.Namespace, port: int, server_pid: int) -> list[str]:
    return [
        "--url", f"http://127.0.0.1:{port}", "--server-pid", str(server_pid),
        "--target", str(args.target), "--step", str(args.step),
        "--settle", str(args.settle), "--window", str(args.window), "--hold", str(args.hold),
        "--p99-ms", str(args.p99_ms),
        "--think-mean", str(args.think_mean), "--think-sigma", str(args.think_sigma),
        "--think-cap", str(args.think_cap),
        "--pause", str(args.pause), "--spectators", str(args.spectators), "--connect-rate", str(args.connect_rate),
    ]  # fmt: skip


def meets(row: dict[str, Any], p99_ms: float) -> bool:
    errors = sum(row["errors"].values())
    return bool(errors == 0 and row["latency_ms"]["samples"] > 0 and row["latency_ms"]["p99"] <= p99_ms)


def limit_of(row: dict[str, Any], p99_ms: float, fd_limit: int) -> str:
    """Which resource ran out first at a step that missed the bar, from its numbers."""
    cores = os.cpu_count() or 1
    used = (row["server_cores"] or 0.0) + row["loadgen_cores"]
    errors = sum(row["errors"].values())
    figures = (
        f"p99 {row['latency_ms']['p99']} ms, {errors} errors, server {row['server_cores']} cores, "
        f"load generator {row['loadgen_cores']} of {cores} cores"
    )
    if max(row["server_fds"] or 0, row["loadgen_fds"] or 0) >= 0.9 * fd_limit:
        return (
            f"file descriptors: the server holds {row['server_fds']}, the load client {row['loadgen_fds']}, "
            f"of {fd_limit} each; {figures}"
        )
    if row["mem_available"] is not None and row["mem_available"] < 0.1:
        return f"memory: {row['mem_available']:.0%} of the machine's memory left; {figures}"
    machine = row.get("machine_cores_busy") or 0.0
    if used >= 0.9 * cores:
        return f"CPU saturated: {used:.2f} of {cores} cores busy; {figures}"
    if machine >= 0.9 * cores:
        return (
            f"CPU saturated by the machine's other work: {machine:.2f} of {cores} cores busy, "
            f"{used:.2f} of them this benchmark's; {figures}"
        )
    if (row["server_cores"] or 0.0) >= 0.85:
        return f"the server's one core (Node's event loop) saturated while the machine had cores left; {figures}"
    if row["loadgen_cores"] >= 0.85:
        return f"the load generator's one core (Node's event loop) saturated; {figures}"
    if errors:
        return f"errors {row['errors']} before any resource ran out; {figures}"
    return f"latency while CPU was idle ({machine:.2f} of {cores} cores busy): p99 over {p99_ms} ms; {figures}"


def _port(log: Path, server: subprocess.Popen[bytes], timeout_s: float = 30.0) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the Colyseus server exited: {log.read_text()[-2000:]}")
        for line in log.read_text().splitlines():
            if line.startswith("LISTENING 127.0.0.1:"):
                return int(line.rsplit(":", 1)[1])
        time.sleep(0.1)
    raise RuntimeError(f"the Colyseus server gave no port in {timeout_s:.0f} s: {log.read_text()[-2000:]}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run(args: argparse.Namespace, progress: IO[str] | None = None) -> dict[str, Any]:
    """The ramp and hold against a fresh Colyseus server; the load client's report with this
    side's additions (limit, machine). Each step's row goes to `progress` as it comes."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH (the peers' harness needs Node 20)")
    # a client is a socket on each side: the server and the load client hold one each
    nofile = raise_nofile(at_least=2 * args.target + 4096)
    if nofile < args.target + 1024:
        print(
            f"note: RLIMIT_NOFILE is {nofile} (not allowed higher): too few for {args.target} clients", file=sys.stderr
        )
    here = prepare(args.peers_dir)
    env = {**os.environ, "NODE_ENV": "production", "PORT": "0"}
    env["COLYSEUS_SPECTATORS_PER_ROOM"] = str(args.spectators_per_room)
    with tempfile.TemporaryDirectory(prefix="tafel-capacity-colyseus-") as scratch:
        log = Path(scratch) / "server.log"
        with log.open("wb") as server_out:
            server = subprocess.Popen(
                [node, "server_human.js"], cwd=here, env=env, stdout=server_out, stderr=subprocess.STDOUT
            )
        try:
            port = _port(log, server)
            load_before = os.getloadavg()[0]
            steps_needed = -(-args.target // args.step)
            budget = steps_needed * (args.step / args.connect_rate + args.settle + args.window + 5) + args.hold + 120
            result = Path(scratch) / "load.json"
            with result.open("w") as out:
                load = subprocess.Popen(
                    [node, "load_human.js", *load_args(args, port, server.pid)],
                    cwd=here,
                    env=env,
                    stdout=out,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            tail: list[str] = []

            def read() -> None:  # each step's row as it is measured
                assert load.stderr is not None
                for line in load.stderr:
                    if line.startswith("STEP ") and progress is not None:
                        progress.write(line[5:])
                        progress.flush()
                    tail[:] = [*tail[-40:], line]

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            try:
                load.wait(budget)
            except subprocess.TimeoutExpired:
                load.kill()
                load.wait()
                raise RuntimeError(f"the Colyseus load client ran past {budget:.0f} s") from None
            reader.join(10)
            output = result.read_text()
            lines = [line for line in output.splitlines() if line.startswith("{")]
            if load.returncode != 0 or not lines:
                raise RuntimeError(f"the Colyseus load client failed ({load.returncode}): {''.join(tail)[-2000:]}")
            report: dict[str, Any] = json.loads(lines[-1])
        finally:
            _stop(server)
    report["nofile_limit"] = nofile
    report["cores"] = os.cpu_count()
    report["load_before"] = load_before
    report["load_after"] = os.getloadavg()[0]
    last = report["steps"][-1] if report["steps"] else None
    if last is not None and not meets(last, args.p99_ms):
        report["limit"] = limit_of(last, args.p99_ms, nofile)
    return report


def parser() -> argparse.ArgumentParser:
    """tools/bench_capacity.py's flags and defaults, where they mean the same."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_args(p)
    p.add_argument(
        "--think-cap", type=float, default=45.0, help="the longest think (tafel: 3/4 of its 60 s per-move clock)"
    )
    p.add_argument("--spectators-per-room", type=int, default=16, help="the most spectators a Colyseus room takes")
    p.add_argument(
        "--peers-dir", type=Path, default=DEFAULT_DIR, help="where the harness copy lives (made or refreshed)"
    )
    return p


def main() -> int:
    args = parser().parse_args()
    report = run(args, progress=sys.stderr)
    line = json.dumps(report)
    print(line)
    if args.out:
        args.out.write_text(line + "\n")
    return 0 if report.get("highest_passing_players") else 1


if __name__ == "__main__":
    sys.exit(main())
