"""The floor under the gateway's Play stream: what grpc.aio alone costs per move in this process
layout, with no game, no Redis and no rules service behind it.

    .venv/bin/python -m tools.bench_grpc_floor [--games 200] [--duration 10] [--raw] [--threads]
        [--server-option NAME=VALUE ...] [--channel-option NAME=VALUE ...]

A relay server (this module with --serve, in its own process, uvloop and the servers' GC tuning)
takes one bidirectional stream per player, one channel per player as real clients have. Each move
is the Play stream's shape: one message in from the mover, its answer back to the mover and the
event to the opponent (two out), through a per-stream queue and one writer, as any server that
writes to a stream from another stream's reader must. Messages are PlayRequest/PlayResponse
protobufs of a move's size (--raw: bytes, no protobuf). The client here runs the same closed loop
as the load generator (the opponent moves once it has seen the event) and prints the relay's CPU
per move (from /proc), its own, moves/s and the submit -> opponent-sees latency.

What the gateway spends per move above this figure is this repository's own work, not gRPC's.
--rules adds the agreed layout's second hop: the relay answers a move only once a second process
(the rules service's place, no rules and no Redis) has answered it on one long-lived ApplyMoves
stream, everything queued in one batched message each way as the gateway's rules router and the
rules service do; the line then shows both processes' CPU and their sum, the floor under gateway +
rules service together.
--threads splits the relay's CPU and wake-ups by thread; --server-option / --channel-option set
gRPC channel arguments on the relay's server / the clients' channels, and GRPC_EXPERIMENTS in the
environment reaches both processes (docs/benchmarks.md, "The gateway's gRPC layer", for what each did).
All of its processes poll gRPC as the servers do (kit/grpc_polling.py; TAFEL_GRPC_EVENT_ENGINE=1:
gRPC's defaults).
"""

from __future__ import annotations

import kit.grpc_polling  # noqa: F401  (first: gRPC reads its experiments when imported)

# isort: split
import argparse
import asyncio
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
from tafel.play.v1 import play_pb2
from tafel.rules.v1 import rules_pb2

from kit.server import install_event_loop, tune_gc

SERVICE = "floor.Relay"
METHOD = f"/{SERVICE}/Play"
RULES_SERVICE = "floor.Rules"
RULES_METHOD = f"/{RULES_SERVICE}/ApplyMoves"


class Relay:
    """Streams by (game, seat); a move is answered on its own stream and copied to the other seat
    (with a rules hop: once the second process has answered it)."""

    def __init__(self, raw: bool, rules: RulesHop | None = None) -> None:
        self.raw = raw
        self.rules = rules
        self.streams: dict[tuple[str, int], asyncio.Queue[Any]] = {}

    async def play(
        self, requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Any]:
        out: asyncio.Queue[Any] = asyncio.Queue()
        reader = asyncio.get_running_loop().create_task(self._read(requests, out))
        try:
            while (message := await out.get()) is not None:
                yield message
        finally:
            reader.cancel()

    async def _read(self, requests: AsyncIterator[Any], out: asyncio.Queue[Any]) -> None:
        async for request in requests:
            if self.raw:
                game, seat, kind = request[:8].decode(), request[8], request[9]
                if kind == 0:
                    self.streams[(game, seat)] = out
                    continue
                answer, event = b"A" + request[10:], b"E" + request[10:]
            else:
                move = request.submit_move
                game, seat = move.game_id, int(request.correlation_id & 1)
                if not move.HasField("move"):  # the hello: which stream is which seat
                    self.streams[(game, seat)] = out
                    continue
                if self.rules is not None:
                    self.rules.send(request, out, self.streams.get((game, 1 - seat)))
                    continue
                answer = play_pb2.PlayResponse(correlation_id=request.correlation_id)
                answer.move_accepted.version = move.expected_version + 1
                event = play_pb2.PlayResponse()
                delivery = event.event
                delivery.game_id = game
                delivery.event.version = move.expected_version + 1
                delivery.event.event_id = f"{move.expected_version + 2}-0"
                dropped = delivery.event.connect4.disc_dropped
                dropped.seat = seat
                dropped.column = move.move.connect4.column
                delivery.status.version = move.expected_version + 1
                delivery.status.to_act.append(1 - seat)
            out.put_nowait(answer)
            other = self.streams.get((game, 1 - seat))
            if other is not None:
                other.put_nowait(event)
        out.put_nowait(None)


class RulesHop:
    """The relay's side of the second hop: one ApplyMoves stream, a writer that sends everything
    queued in one batched message, a reader that answers the mover and the opponent."""

    def __init__(self, port: int) -> None:
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        call = self.channel.stream_stream(
            RULES_METHOD,
            request_serializer=rules_pb2.ApplyMovesRequest.SerializeToString,
            response_deserializer=rules_pb2.ApplyMovesResponse.FromString,
        )
        self.call = call()
        self.queue: list[rules_pb2.ApplyMovesRequest] = []
        self.wake = asyncio.Event()
        self.pending: dict[int, tuple[int, asyncio.Queue[Any], asyncio.Queue[Any] | None, str]] = {}
        self.next_id = 0
        loop = asyncio.get_running_loop()
        self.tasks = (loop.create_task(self._write()), loop.create_task(self._read()))

    def send(
        self, request: play_pb2.PlayRequest, mover: asyncio.Queue[Any], opponent: asyncio.Queue[Any] | None
    ) -> None:
        move = request.submit_move
        self.next_id += 1
        entry = rules_pb2.ApplyMovesRequest(correlation_id=self.next_id)
        action = entry.request
        action.game_id = move.game_id
        action.expected_version = move.expected_version
        action.request_id = move.request_id
        action.seat = int(request.correlation_id & 1)
        action.move.connect4.column = move.move.connect4.column
        self.pending[self.next_id] = (request.correlation_id, mover, opponent, move.game_id)
        self.queue.append(entry)
        self.wake.set()

    async def _write(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            entries, self.queue = self.queue, []
            message = rules_pb2.ApplyMovesRequest()
            message.batch.extend(entries)
            await self.call.write(message)

    async def _read(self) -> None:
        async for response in self.call:
            for answered in response.batch:
                correlation, mover, opponent, game = self.pending.pop(answered.correlation_id)
                applied = answered.applied
                answer = play_pb2.PlayResponse(correlation_id=correlation)
                answer.move_accepted.version = applied.version
                answer.move_accepted.events.extend(applied.events)
                mover.put_nowait(answer)
                if opponent is not None:
                    event = play_pb2.PlayResponse()
                    delivery = event.event
                    delivery.game_id = game
                    delivery.event.CopyFrom(applied.events[0])
                    delivery.status.CopyFrom(applied.status)
                    opponent.put_nowait(event)


class Rules:
    """The second process: answers each action of a batch with its event and status, the answers
    to one message in one message (as the rules service does for a batching caller)."""

    async def apply_moves(
        self, requests: AsyncIterator[rules_pb2.ApplyMovesRequest], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[rules_pb2.ApplyMovesResponse]:
        out: asyncio.Queue[rules_pb2.ApplyMovesResponse | None] = asyncio.Queue()
        reader = asyncio.get_running_loop().create_task(self._read(requests, out))
        try:
            while (message := await out.get()) is not None:
                while not out.empty():  # answers waiting together leave together
                    more = out.get_nowait()
                    if more is None:
                        yield message
                        return
                    message.batch.extend(more.batch)
                yield message
        finally:
            reader.cancel()

    async def _read(
        self,
        requests: AsyncIterator[rules_pb2.ApplyMovesRequest],
        out: asyncio.Queue[rules_pb2.ApplyMovesResponse | None],
    ) -> None:
        async for message in requests:
            answers = rules_pb2.ApplyMovesResponse()
            for entry in message.batch:
                action = entry.request
                answer = answers.batch.add(correlation_id=entry.correlation_id)
                applied = answer.applied
                applied.version = action.expected_version + 1
                event = applied.events.add(event_id=f"{action.expected_version + 2}-0", version=applied.version)
                event.connect4.disc_dropped.seat = action.seat
                event.connect4.disc_dropped.column = action.move.connect4.column
                applied.status.version = applied.version
                applied.status.to_act.append(1 - action.seat)
            out.put_nowait(answers)
        out.put_nowait(None)


async def listen(handler: grpc.GenericRpcHandler, options: list[tuple[str, Any]]) -> None:
    """Serve `handler` on a free loopback port, told to the parent on stdout, until terminated."""
    server = grpc.aio.server(options=options)
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()


async def serve_rules(options: list[tuple[str, Any]]) -> None:
    rules = Rules()
    handler = grpc.method_handlers_generic_handler(
        RULES_SERVICE,
        {
            "ApplyMoves": grpc.stream_stream_rpc_method_handler(
                rules.apply_moves,
                request_deserializer=rules_pb2.ApplyMovesRequest.FromString,
                response_serializer=rules_pb2.ApplyMovesResponse.SerializeToString,
            )
        },
    )
    await listen(handler, options)


async def serve(raw: bool, options: list[tuple[str, Any]], rules_port: int | None = None) -> None:
    relay = Relay(raw, RulesHop(rules_port) if rules_port else None)
    codec: dict[str, Callable[..., Any] | None] = (
        {"request_deserializer": None, "response_serializer": None}
        if raw
        else {
            "request_deserializer": play_pb2.PlayRequest.FromString,
            "response_serializer": play_pb2.PlayResponse.SerializeToString,
        }
    )
    handler = grpc.method_handlers_generic_handler(
        SERVICE, {"Play": grpc.stream_stream_rpc_method_handler(relay.play, **codec)}
    )
    await listen(handler, options)


def process_cpu_s(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_counters(pid: int) -> dict[str, tuple[float, int, int]]:
    """Per thread name: CPU seconds, voluntary and involuntary context switches (summed over
    threads of one name): where the relay's CPU goes between the event loop ("loop"), grpc.aio's
    completion-queue poller ("python": the one other Python thread) and the core's event-engine
    threads ("event_engine": socket reads), and how often each is woken."""
    totals: dict[str, tuple[float, int, int]] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        switches = dict(line.split(":\t") for line in status.splitlines() if "ctxt_switches" in line)
        voluntary, involuntary = int(switches["voluntary_ctxt_switches"]), int(switches["nonvoluntary_ctxt_switches"])
        if tid == str(pid):
            name = "loop"
        before = totals.get(name, (0.0, 0, 0))
        totals[name] = (before[0] + cpu, before[1] + voluntary, before[2] + involuntary)
    return totals


def hello(raw: bool, game: str, seat: int) -> Any:
    if raw:
        return game.encode() + bytes([seat, 0])
    request = play_pb2.PlayRequest(correlation_id=seat)
    request.submit_move.game_id = game
    return request


def move(raw: bool, game: str, seat: int, version: int) -> Any:
    if raw:
        return game.encode() + bytes([seat, 1]) + b"m" * 40
    request = play_pb2.PlayRequest(correlation_id=(version << 1) | seat)
    submit = request.submit_move
    submit.game_id = game
    submit.expected_version = version
    submit.request_id = f"r{version}-{game}"
    submit.move.connect4.column = 3
    return request


async def drive(
    port: int,
    server_pid: int,
    games: int,
    duration_s: float,
    raw: bool,
    channel_options: list[tuple[str, Any]],
    rules_pid: int | None = None,
) -> tuple[dict[str, float], dict[str, tuple[float, float, float]]]:
    codec: dict[str, Any] = (
        {}
        if raw
        else {
            "request_serializer": play_pb2.PlayRequest.SerializeToString,
            "response_deserializer": play_pb2.PlayResponse.FromString,
        }
    )
    latencies: list[float] = []
    measuring = False
    stopping = asyncio.Event()
    ready = 0
    all_ready = asyncio.Event()

    async def game(index: int) -> None:
        nonlocal ready
        name = f"{index:08d}"
        channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=channel_options) for _ in range(2)]
        calls = [channel.stream_stream(METHOD, **codec)() for channel in channels]
        try:
            for seat, call in enumerate(calls):
                await call.write(hello(raw, name, seat))
            await asyncio.sleep(0.2)  # both hellos in before the first move is relayed
            ready += 1
            if ready == games:
                all_ready.set()
            version, turn = 0, 0
            while not stopping.is_set():
                mover, opponent = calls[turn], calls[1 - turn]
                started = time.perf_counter()
                await mover.write(move(raw, name, turn, version))
                await mover.read()
                await opponent.read()
                if measuring:
                    latencies.append(time.perf_counter() - started)
                version, turn = version + 1, 1 - turn
            for call in calls:
                await call.done_writing()
        finally:
            for channel in channels:
                await channel.close()

    tasks = [asyncio.get_running_loop().create_task(game(index)) for index in range(games)]
    await asyncio.wait_for(all_ready.wait(), 60)
    await asyncio.sleep(1.0)  # warm
    threads_before = thread_counters(server_pid)
    rules_before = process_cpu_s(rules_pid) if rules_pid else 0.0
    server_before, own_before, wall_before = process_cpu_s(server_pid), time.process_time(), time.perf_counter()
    measuring = True
    await asyncio.sleep(duration_s)
    measuring = False
    server_after, own_after, wall_after = process_cpu_s(server_pid), time.process_time(), time.perf_counter()
    rules_after = process_cpu_s(rules_pid) if rules_pid else 0.0
    threads_after = thread_counters(server_pid)
    stopping.set()
    await asyncio.wait(tasks, timeout=10)
    moves = len(latencies)
    latencies.sort()
    server_s = server_after - server_before
    row = {
        "games": games,
        "moves_per_s": moves / (wall_after - wall_before),
        "server_us_per_move": server_s / moves * 1e6,
        "rules_us_per_move": (rules_after - rules_before) / moves * 1e6,
        "moves_per_server_cpu_s": moves / server_s,
        "client_us_per_move": (own_after - own_before) / moves * 1e6,
        "p50_ms": latencies[moves // 2] * 1e3,
        "p99_ms": latencies[int(moves * 0.99)] * 1e3,
    }
    per_move: dict[str, tuple[float, float, float]] = {}
    for name, (cpu, voluntary, involuntary) in threads_after.items():
        cpu_0, voluntary_0, involuntary_0 = threads_before.get(name, (0.0, 0, 0))
        cpu_us = (cpu - cpu_0) / moves * 1e6
        per_move[name] = (cpu_us, (voluntary - voluntary_0) / moves, (involuntary - involuntary_0) / moves)
    return row, per_move


def option(text: str) -> tuple[str, Any]:
    """NAME=VALUE, the value an int when it reads as one (gRPC's channel arguments are ints or strings)."""
    name, _, value = text.partition("=")
    return (name, int(value)) if value.lstrip("-").isdigit() else (name, value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, nargs="+", default=[200])
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--raw", action="store_true", help="bytes messages, no protobuf")
    for flag, what in (("--server-option", "the relay server's"), ("--channel-option", "the clients' channels'")):
        parser.add_argument(flag, type=option, action="append", default=[], metavar="NAME=VALUE", help=f"{what} arg")
    parser.add_argument("--threads", action="store_true", help="the relay's CPU and wake-ups per move, by thread")
    parser.add_argument("--rules", action="store_true", help="a second hop, batched ApplyMoves to a second process")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-rules", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rules-port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rules and args.raw:
        parser.error("--rules relays protobufs (drop --raw)")
    install_event_loop()
    tune_gc()
    if args.serve_rules:
        asyncio.run(serve_rules(args.server_option))
        return
    if args.serve:
        asyncio.run(serve(args.raw, args.server_option, args.rules_port))
        return
    options = [f"--server-option={name}={value}" for name, value in args.server_option]
    started: list[subprocess.Popen[str]] = []

    def start(*flags: str) -> tuple[subprocess.Popen[str], int]:
        process = subprocess.Popen(
            [sys.executable, "-m", "tools.bench_grpc_floor", *flags, *options], stdout=subprocess.PIPE, text=True
        )
        started.append(process)
        assert process.stdout is not None
        return process, int(process.stdout.readline())

    try:
        rules = start("--serve-rules") if args.rules else None
        hop = [f"--rules-port={rules[1]}"] if rules else []
        server, port = start("--serve", *(["--raw"] if args.raw else []), *hop)
        shape = "raw bytes" if args.raw else "PlayRequest/PlayResponse"
        print(f"relay ({shape}{', then a rules hop' if rules else ''}), {args.duration:.0f} s a run")
        for games in args.games:
            row, threads = asyncio.run(
                drive(port, server.pid, games, args.duration, args.raw, args.channel_option, rules and rules[0].pid)
            )
            total = row["server_us_per_move"] + row["rules_us_per_move"]
            both = (
                f" + rules hop {row['rules_us_per_move']:5.1f} = {total:5.1f} us/move"
                f" ({1e6 / total:7,.0f} moves per server CPU-s)"
                if rules
                else f" ({row['moves_per_server_cpu_s']:7,.0f} moves per server CPU-s)"
            )
            print(
                f"  {games:4d} games: {row['moves_per_s']:7,.0f} moves/s"
                f"  relay {row['server_us_per_move']:5.1f} us/move{both}  client"
                f" {row['client_us_per_move']:5.1f} us/move  p50 {row['p50_ms']:.1f} ms  p99 {row['p99_ms']:.1f} ms",
                flush=True,
            )
            if args.threads:
                for name, (cpu_us, voluntary, involuntary) in sorted(threads.items(), key=lambda item: -item[1][0]):
                    print(f"    {name:16s} {cpu_us:5.1f} us/move  {voluntary:5.2f} wake-ups/move", end="")
                    print(f"  {involuntary:5.2f} preempted/move")
    finally:
        for process in started:
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    main()
