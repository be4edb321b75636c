"""What one connected, idle player costs the gateway: memory (RSS), file descriptors and, with
--tracemalloc, the Python allocations behind it by file and line.

    nice -n 19 .venv/bin/python -m tools.bench_connection_cost [--steps 0,250,500,1000] [--processes 4]
    nice -n 19 .venv/bin/python -m tools.bench_connection_cost --steps 0,1000 --tracemalloc

Starts a platform of its own (tools.platform: Redis, Connect Four's rules service, one gateway
with the per-source limits raised, as every player comes from 127.0.0.1), then adds players in
steps. Each player is connected as a person is: a TCP connection of its own, a guest session, its
account event stream (EventService.WatchMyEvents, as the web app and the terminal keep open) and
its Play stream (batched responses) on which it searched for a Connect Four game with a day a move
and watches it once matched; then it does nothing. After each step (every player matched or
waiting, a few seconds to settle) it prints the gateway's RSS and open fds, and the load
generator's own RSS (its processes together). KB a player is the RSS growth from the first step
over the players added.

With --tracemalloc the gateway runs with TAFEL_TRACEMALLOC=on (gateway/memtrace.py) and dumps a
snapshot after each step; the tool prints the traced growth per player and the lines that grew
most between the first and the last step, per player. Tracing makes the gateway larger and slower,
so its RSS figures are not the plain run's: take the table from a run without it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LIMITS = {  # every player comes from 127.0.0.1: the benchmark raises the per-source limits only
    "TAFEL_LIMIT_SIGN_INS_PER_PEER": "100000/100000",
    "TAFEL_LIMIT_CALLS_PER_PEER": "100000/100000",
    "TAFEL_LIMIT_CALLS_PER_PLAYER": "100000/100000",
}
DAY_S = 86_400  # a day a move: no clock fires while the players sit idle
OPENING_AT_ONCE = 50  # players a worker connects at the same time


def raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


# -- the players (a worker process: `--worker ADDRESS`, driven by lines on stdin) ------------------


@dataclass
class Players:
    address: str
    opened: int = 0
    ready: int = 0  # event stream ready and the search queued or matched
    matched: int = 0
    errors: list[str] = field(default_factory=list)
    keep: list[object] = field(default_factory=list)  # clients, calls and readers held open

    async def one(self) -> None:
        from tafel.client import TafelClient
        from tafel.play.v1 import challenges_pb2, play_pb2

        client = await TafelClient.connect(self.address, own_connection=True)
        self.keep.append(client)
        await client.sign_in_as_guest()
        events = client.events.WatchMyEvents(challenges_pb2.WatchMyEventsRequest(), metadata=client.metadata())
        self.keep.append(events)
        await events.read()  # EventStreamReady
        play = client.games.Play(metadata=client.metadata())
        self.keep.append(play)
        await play.write(play_pb2.PlayRequest(correlation_id=1, set_options=play_pb2.PlayOptions(batch_responses=True)))
        search = play_pb2.FindMatchRequest(game="connect4", watch=True)
        search.time_control.per_move.seconds = DAY_S
        await play.write(play_pb2.PlayRequest(correlation_id=2, find_match=search))
        queued = asyncio.get_running_loop().create_future()
        self.keep.append(asyncio.create_task(self.read(play, queued)))
        await queued

    async def read(self, play: object, queued: asyncio.Future[None]) -> None:
        from tafel.play.v1 import play_pb2

        async for response in play:  # type: ignore[attr-defined]
            assert isinstance(response, play_pb2.PlayResponse)
            for each in response.batch.responses if response.HasField("batch") else [response]:
                if each.HasField("refusal"):
                    self.errors.append(each.refusal.reason)
                if each.HasField("match_update"):
                    if not queued.done():
                        queued.set_result(None)
                    if each.match_update.HasField("matched"):
                        self.matched += 1

    async def add(self, count: int) -> None:
        gate = asyncio.Semaphore(OPENING_AT_ONCE)

        async def opened() -> None:
            async with gate:
                try:
                    await asyncio.wait_for(self.one(), 60)
                    self.ready += 1
                except Exception as error:  # counted and reported, never silent
                    self.errors.append(f"{type(error).__name__}: {error}"[:200])

        self.opened += count
        await asyncio.gather(*(opened() for _ in range(count)))

    def status(self) -> str:
        return json.dumps(
            {
                "opened": self.opened,
                "ready": self.ready,
                "matched": self.matched,
                "errors": self.errors[:5],
                "error_count": len(self.errors),
                "rss_kib": rss_kib(os.getpid()),
            }
        )


async def worker(address: str) -> None:
    import tafel.client  # noqa: F401  (before the first step's RSS: the SDK is not a player's cost)

    players = Players(address)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := (await reader.readline()).decode().split():
        if line[0] == "add":
            await players.add(int(line[1]))
        elif line[0] == "quit":
            break
        print(players.status(), flush=True)


# -- the floor: a bare grpc.aio server, the same connections and idle streams ------------------------


async def floor_server() -> None:
    """An echo stream on a bare grpc.aio server with the gateway's server options (kit/server.py):
    what gRPC itself keeps for a connection and its open streams, the gateway's code left out."""
    import kit.grpc_polling  # noqa: F401  (as the gateway: first, before grpc)

    # isort: split
    import grpc

    from kit.server import server_options
    from kit.settings import Env, ServerSettings

    async def echo(requests: Any, context: Any) -> Any:
        async for request in requests:
            yield request

    settings = ServerSettings.from_env(Env({"REDIS_URL": "redis://127.0.0.1:1/0"}), default_port=0)
    server = grpc.aio.server(options=server_options(settings))
    method = grpc.stream_stream_rpc_method_handler(echo)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("floor.Floor", {"Echo": method}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()


async def floor_clients(port: int, connections: int, streams: int) -> None:
    import grpc

    keep: list[object] = []
    for _ in range(connections):
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)])
        keep.append(channel)
        await channel.channel_ready()
        for _ in range(streams):
            call = channel.stream_stream("/floor.Floor/Echo")()
            await call.write(b"x" * 100)
            await call.read()
            keep.append(call)
    print("ready", flush=True)
    await asyncio.sleep(3600)


def floor(connections: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for streams in (0, 1, 2):
        command = [sys.executable, "-m", "tools.bench_connection_cost", "--floor-server"]
        server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        clients = None
        try:
            assert server.stdout is not None
            port = server.stdout.readline().strip()
            time.sleep(1)
            before = rss_kib(server.pid)
            command = [sys.executable, "-m", "tools.bench_connection_cost", "--floor-clients", port]
            clients = subprocess.Popen([*command, str(connections), str(streams)], cwd=ROOT, stdout=subprocess.PIPE)
            assert clients.stdout is not None
            clients.stdout.readline()
            time.sleep(2)
            grown = rss_kib(server.pid) - before
            rows.append(
                {
                    "connections": connections,
                    "streams_each": streams,
                    "kib_per_connection": round(grown / connections, 1),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
        finally:
            for process in (clients, server):
                if process is not None:
                    process.kill()
                    process.wait()
    return rows


# -- the parent ------------------------------------------------------------------------------------


@dataclass
class Worker:
    process: subprocess.Popen[str]

    def ask(self, line: str) -> dict[str, object]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError(f"a player process ended ({self.process.wait()})")
        return dict(json.loads(answer))


def start_workers(address: str, count: int) -> list[Worker]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return [
        Worker(
            subprocess.Popen(
                [sys.executable, "-m", "tools.bench_connection_cost", "--worker", address],
                cwd=ROOT,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
        for _ in range(count)
    ]


def snapshot(pid: int, path: Path, step_file: Path) -> None:
    before = path.stat().st_mtime_ns if path.exists() else 0
    os.kill(pid, signal.SIGUSR2)
    deadline = time.monotonic() + 120
    while not path.exists() or path.stat().st_mtime_ns == before:
        if time.monotonic() > deadline:
            raise RuntimeError("the gateway wrote no tracemalloc snapshot")
        time.sleep(0.2)
    os.replace(path, step_file)


def breakdown(first: Path, last: Path, players: int, top: int) -> list[dict[str, object]]:
    old, new = tracemalloc.Snapshot.load(str(first)), tracemalloc.Snapshot.load(str(last))
    keep = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen importlib._bootstrap>")]
    old, new = old.filter_traces(keep), new.filter_traces(keep)
    total = sum(s.size for s in new.statistics("filename")) - sum(s.size for s in old.statistics("filename"))
    rows: list[dict[str, object]] = [{"where": "all traced", "bytes_per_player": round(total / players)}]
    for stat in new.compare_to(old, "lineno")[:top]:
        frame = stat.traceback[0]
        name = os.path.relpath(frame.filename, ROOT) if frame.filename.startswith(str(ROOT)) else frame.filename
        where = f"{name}:{frame.lineno}"
        rows.append(
            {
                "where": where,
                "bytes_per_player": round(stat.size_diff / players),
                "blocks_per_player": round(stat.count_diff / players, 2),
            }
        )
    return rows


def run(args: argparse.Namespace) -> dict[str, object]:
    from tools.platform import Platform

    raise_fd_limit()
    folder = Path(tempfile.mkdtemp(prefix="tafel-connection-cost-"))
    trace_file = folder / "gateway.tracemalloc"
    env = dict(LIMITS, TAFEL_MAX_PENDING_CALLS="20000")
    env.update(item.split("=", 1) for item in args.env)
    if args.tracemalloc:
        env.update(TAFEL_TRACEMALLOC="on", TAFEL_TRACEMALLOC_FILE=str(trace_file))
    platform = Platform(fixed_ports=False, games=("connect4",), bot_pool=False, extra_env=env)
    platform.start()
    workers: list[Worker] = []
    rows: list[dict[str, object]] = []
    try:
        gateway = next(child for child in platform.children if child.name == "gateway-0")
        pid = gateway.process.pid
        workers = start_workers(platform.gateway_addresses[0], args.processes)
        players = 0
        for target in args.steps:
            add = target - players
            share = [add // len(workers) + (1 if i < add % len(workers) else 0) for i in range(len(workers))]
            began = time.monotonic()
            # Each worker opens its share at the same time as the others.
            for worker_, count in zip(workers, share, strict=True):
                assert worker_.process.stdin is not None
                worker_.process.stdin.write(f"add {count}\n")
                worker_.process.stdin.flush()
            answers = []
            for worker_ in workers:
                assert worker_.process.stdout is not None
                answers.append(json.loads(worker_.process.stdout.readline()))
            players = target
            deadline = time.monotonic() + 60
            while sum(int(a["matched"]) for a in answers) < sum(int(a["ready"]) for a in answers) - 1:
                if time.monotonic() > deadline:
                    break
                time.sleep(1)
                answers = [w.ask("status") for w in workers]
            time.sleep(args.settle_s)
            answers = [w.ask("status") for w in workers]
            row: dict[str, object] = {
                "players": players,
                "ready": sum(int(a["ready"]) for a in answers),
                "matched": sum(int(a["matched"]) for a in answers),
                "errors": sum(int(a["error_count"]) for a in answers),
                "gateway_rss_mib": round(rss_kib(pid) / 1024, 1),
                "gateway_fds": fds(pid),
                "loadgen_rss_mib": round(sum(int(a["rss_kib"]) for a in answers) / 1024, 1),
                "setup_s": round(time.monotonic() - began, 1),
            }
            if rows and players > int(rows[0]["players"]):  # type: ignore[call-overload]
                added = players - int(rows[0]["players"])  # type: ignore[call-overload]
                row["kib_per_player"] = round((rss_kib(pid) - float(rows[0]["gateway_rss_mib"]) * 1024) / added, 1)  # type: ignore[arg-type]
                loadgen_kib = sum(int(a["rss_kib"]) for a in answers) - float(rows[0]["loadgen_rss_mib"]) * 1024  # type: ignore[arg-type]
                row["loadgen_kib_per_player"] = round(loadgen_kib / added, 1)
            for answer in answers:
                if answer["errors"]:
                    row.setdefault("first_errors", answer["errors"])
            if args.tracemalloc:
                snapshot(pid, trace_file, folder / f"step-{players}.tracemalloc")
            rows.append(row)
            print(json.dumps(row), flush=True)
        result: dict[str, object] = {"steps": rows}
        if args.tracemalloc and len(rows) > 1:
            first, last = int(rows[0]["players"]), int(rows[-1]["players"])  # type: ignore[call-overload]
            result["breakdown"] = breakdown(
                folder / f"step-{first}.tracemalloc", folder / f"step-{last}.tracemalloc", last - first, args.top
            )
        return result
    finally:
        for worker_ in workers:
            if worker_.process.poll() is None:
                with_stdin = worker_.process.stdin
                try:
                    assert with_stdin is not None
                    with_stdin.write("quit\n")
                    with_stdin.flush()
                    worker_.process.wait(10)
                except (OSError, subprocess.TimeoutExpired):
                    worker_.process.kill()
                    worker_.process.wait()
        platform.stop()
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()


def print_table(result: dict[str, object]) -> None:
    print("\n| players | gateway RSS | KiB a player | gateway fds | load generator RSS (KiB a player) | errors |")
    print("|---|---|---|---|---|---|")
    for row in result["steps"]:  # type: ignore[attr-defined]
        print(
            f"| {row['players']:,} | {row['gateway_rss_mib']} MiB | {row.get('kib_per_player', '')} | "
            f"{row['gateway_fds']:,} | {row['loadgen_rss_mib']} MiB ({row.get('loadgen_kib_per_player', '')}) | "
            f"{row['errors']} |"
        )
    if "breakdown" in result:
        print("\n| Python allocations that grew (tracemalloc), per player | bytes | blocks |")
        print("|---|---|---|")
        for line in result["breakdown"]:  # type: ignore[attr-defined]
            print(f"| {line['where']} | {line['bytes_per_player']:,} | {line.get('blocks_per_player', '')} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", metavar="ADDRESS", help=argparse.SUPPRESS)
    parser.add_argument("--steps", default="0,250,500,1000", help="connected players after each step")
    parser.add_argument("--processes", type=int, default=4, help="load generator processes")
    parser.add_argument("--settle-s", type=float, default=3.0)
    parser.add_argument("--tracemalloc", action="store_true", help="the gateway's allocation breakdown too")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="more environment for the servers (A/B runs)"
    )
    parser.add_argument(
        "--floor",
        type=int,
        metavar="CONNECTIONS",
        help="instead: gRPC's own cost, a bare grpc.aio server (0-2 streams)",
    )
    parser.add_argument("--floor-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--floor-clients", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor_server:
        asyncio.run(floor_server())
        return
    if args.floor_clients:
        raise_fd_limit()
        asyncio.run(floor_clients(*args.floor_clients))
        return
    if args.floor:
        raise_fd_limit()
        floor(args.floor)
        return
    if args.worker:
        raise_fd_limit()
        asyncio.run(worker(args.worker))
        return
    args.steps = [int(step) for step in args.steps.split(",")]
    if args.steps != sorted(args.steps) or args.steps[0] < 0 or any(step % 2 for step in args.steps):
        parser.error("--steps: even numbers of players, ascending")
    result = run(args)
    print_table(result)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
