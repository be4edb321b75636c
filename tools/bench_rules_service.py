"""`make bench`: how fast Connect Four's rules run, alone and as a service with Redis.

Prints, in one run and one process layout (Redis and the rules service as separate processes,
this client in a third):
- the pure rules module's applied moves/s on one core;
- the service's moves/s and p50/p99 latency at 1 and 32 concurrent games, over unary ApplyMove
  and over one multiplexed ApplyMoves stream;
- the same server's empty unary and empty stream round trips/s (the floor);
- server CPU seconds per move (rules service + Redis, from /proc).
The machine is noisy: compare the ratios inside one run, not figures across runs.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import grpc
from tafel.connect4.v1 import connect4_pb2
from tafel.diagnostics.v1 import diagnostics_pb2, diagnostics_pb2_grpc
from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2, rules_pb2_grpc
from tafel_rules.connect4 import RULES, Options

from tools.redis_server import start_redis

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def bench_rules_module(seconds: float) -> float:
    """Applied moves/s of the pure module, replaying pre-drawn random games."""
    rng = random.Random(7)
    games = []
    for _ in range(200):
        state = RULES.new_game(Options(), 2, 0)
        moves = []
        while state.outcome is None:
            move = rng.choice(list(RULES.legal_moves(state, state.to_move)))
            moves.append(move)
            state, _ = RULES.apply_move(state, state.to_move, move)
        games.append(moves)
    applied = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for moves in games:
            state = RULES.new_game(Options(), 2, 0)
            for seat, move in zip(itertools.cycle((0, 1)), moves, strict=False):
                state, _ = RULES.apply_move(state, seat, move)
            applied += len(moves)
    return applied / (time.perf_counter() - start)


@dataclass
class Result:
    label: str
    moves: int
    seconds: float
    latencies: list[float]
    server_cpu: float

    def line(self) -> str:
        lat = sorted(self.latencies)
        p50 = lat[len(lat) // 2] * 1000 if lat else 0.0
        p99 = lat[int(len(lat) * 0.99)] * 1000 if lat else 0.0
        rate = self.moves / self.seconds
        cpu = self.server_cpu / self.moves * 1e6 if self.moves else 0.0
        return f"{self.label:<34} {rate:>9,.0f}/s   p50 {p50:6.2f} ms   p99 {p99:6.2f} ms   server CPU {cpu:6.1f} µs/op"

    def as_dict(self) -> dict[str, float | str]:
        lat = sorted(self.latencies)
        return {
            "label": self.label,
            "per_s": round(self.moves / self.seconds, 1),
            "p50_ms": round(lat[len(lat) // 2] * 1000, 3) if lat else 0.0,
            "p99_ms": round(lat[int(len(lat) * 0.99)] * 1000, 3) if lat else 0.0,
            "server_cpu_us_per_op": round(self.server_cpu / self.moves * 1e6, 1) if self.moves else 0.0,
        }


class StreamClient:
    """One ApplyMoves stream: a writer fed by a queue, a reader resolving futures by id. With
    `batch`, everything queued goes out in one message (and answers come back batched)."""

    def __init__(self, stub: rules_pb2_grpc.RulesServiceStub, batch: bool = False) -> None:
        self.batch = batch
        self.queue: asyncio.Queue[rules_pb2.ApplyMovesRequest] = asyncio.Queue()
        self.pending: dict[int, asyncio.Future[rules_pb2.ApplyMovesResponse]] = {}
        self.ids = itertools.count(1)
        self.call = stub.ApplyMoves(self._requests())
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _requests(self) -> AsyncIterator[rules_pb2.ApplyMovesRequest]:
        while True:
            first = await self.queue.get()
            if not self.batch or self.queue.empty():
                yield first
                continue
            items = [first]
            while not self.queue.empty():
                items.append(self.queue.get_nowait())
            yield rules_pb2.ApplyMovesRequest(batch=items)

    async def _read(self) -> None:
        async for answer in self.call:
            for one in answer.batch or (answer,):
                self.pending.pop(one.correlation_id).set_result(one)

    async def apply(self, request: rules_pb2.ApplyMoveRequest) -> rules_pb2.ApplyMovesResponse:
        correlation = next(self.ids)
        future = asyncio.get_running_loop().create_future()
        self.pending[correlation] = future
        self.queue.put_nowait(rules_pb2.ApplyMovesRequest(correlation_id=correlation, request=request))
        answer: rules_pb2.ApplyMovesResponse = await future
        return answer

    def close(self) -> None:
        self.call.cancel()
        self.reader.cancel()


async def play_games(
    stub: rules_pb2_grpc.RulesServiceStub,
    apply: Callable[[rules_pb2.ApplyMoveRequest], Awaitable[bool]],
    concurrency: int,
    seconds: float,
    pool: list[str],
) -> tuple[int, list[float]]:
    """`concurrency` players each play whole random games back to back for `seconds`."""
    latencies: list[float] = []
    moves = 0
    deadline = time.perf_counter() + seconds
    rng = random.Random(concurrency)

    async def player() -> None:
        nonlocal moves
        while time.perf_counter() < deadline:
            if not pool:  # the service outran the pool's estimate: one more game, inside the clock (rare)
                extra = f"bench-extra-{rng.getrandbits(64):x}"
                await stub.CreateGame(rules_pb2.CreateGameRequest(game_id=extra, seats=2, request_id="c"))
                pool.append(extra)
            game_id = pool.pop()
            heights = [0] * 7
            version = 0
            while time.perf_counter() < deadline:
                column = rng.choice([c for c in range(7) if heights[c] < 6])
                request = rules_pb2.ApplyMoveRequest(
                    game_id=game_id,
                    seat=version % 2,
                    expected_version=version,
                    request_id=f"r{version}",
                    move=games_pb2.GameMove(connect4=connect4_pb2.Move(column=column)),
                )
                started = time.perf_counter()
                over = await apply(request)
                latencies.append(time.perf_counter() - started)
                moves += 1
                heights[column] += 1
                version += 1
                if over:
                    break

    await asyncio.gather(*(player() for _ in range(concurrency)))
    return moves, latencies


async def run_service_bench(seconds: float, concurrencies: list[int]) -> list[Result]:
    redis = start_redis()
    env = dict(os.environ, REDIS_URL=redis.url, TAFEL_PORT="0", TAFEL_LOG_LEVEL="WARNING")
    service = subprocess.Popen([sys.executable, "-m", "services.connect4"], env=env, stdout=subprocess.PIPE, text=True)
    assert service.stdout is not None
    address = service.stdout.readline().split()[-1]
    results: list[Result] = []
    try:
        channel = grpc.aio.insecure_channel(address)
        stub = rules_pb2_grpc.RulesServiceStub(channel)
        diag = diagnostics_pb2_grpc.DiagnosticsServiceStub(channel)
        counter = itertools.count()

        async def make_pool(count: int) -> list[str]:
            ids = [f"bench-{next(counter)}" for _ in range(count)]
            sem = asyncio.Semaphore(64)

            async def create(game_id: str) -> None:
                async with sem:
                    await stub.CreateGame(rules_pb2.CreateGameRequest(game_id=game_id, seats=2, request_id="c"))

            await asyncio.gather(*(create(g) for g in ids))
            return ids

        async def measure(label: str, body: Callable[[], Awaitable[tuple[int, list[float]]]]) -> None:
            before = cpu_seconds(service.pid) + cpu_seconds(redis.process.pid)
            start = time.perf_counter()
            count, latencies = await body()
            elapsed = time.perf_counter() - start
            after = cpu_seconds(service.pid) + cpu_seconds(redis.process.pid)
            result = Result(label, count, elapsed, latencies, after - before)
            results.append(result)
            print(result.line(), flush=True)

        async def unary_apply(request: rules_pb2.ApplyMoveRequest) -> bool:
            response: rules_pb2.ApplyMoveResponse = await stub.ApplyMove(request)
            return bool(response.status.over)

        for concurrency in concurrencies:
            pool = await make_pool(int(concurrency * seconds * 30) + 100)
            await measure(
                f"unary ApplyMove, {concurrency} games",
                lambda: play_games(stub, unary_apply, concurrency, seconds, pool),  # noqa: B023
            )
        for concurrency, batch in [(c, False) for c in concurrencies] + [(max(concurrencies), True)]:
            stream = StreamClient(stub, batch=batch)

            async def stream_apply(request: rules_pb2.ApplyMoveRequest, stream: StreamClient = stream) -> bool:
                answer = await stream.apply(request)
                if answer.WhichOneof("result") != "applied":
                    raise RuntimeError(f"refused: {answer.refusal}")
                return bool(answer.applied.status.over)

            pool = await make_pool(int(concurrency * seconds * 60) + 100)
            await measure(
                f"stream ApplyMoves, {concurrency} games{', batched' if batch else ''}",
                lambda: play_games(stub, stream_apply, concurrency, seconds, pool),  # noqa: B023
            )
            stream.close()

        concurrency = max(concurrencies)

        async def empty_unary() -> tuple[int, list[float]]:
            latencies: list[float] = []
            deadline = time.perf_counter() + seconds

            async def caller() -> None:
                while time.perf_counter() < deadline:
                    started = time.perf_counter()
                    await diag.Echo(diagnostics_pb2.EchoRequest(nonce=1))
                    latencies.append(time.perf_counter() - started)

            await asyncio.gather(*(caller() for _ in range(concurrency)))
            return len(latencies), latencies

        async def empty_stream() -> tuple[int, list[float]]:
            latencies: list[float] = []
            deadline = time.perf_counter() + seconds
            queue: asyncio.Queue[diagnostics_pb2.EchoStreamRequest] = asyncio.Queue()
            waiting: dict[int, asyncio.Future[None]] = {}

            async def requests() -> AsyncIterator[diagnostics_pb2.EchoStreamRequest]:
                while True:
                    yield await queue.get()

            call = diag.EchoStream(requests())

            async def reader() -> None:
                async for answer in call:
                    waiting.pop(answer.nonce).set_result(None)

            read_task = asyncio.get_running_loop().create_task(reader())
            ids = itertools.count(1)

            async def caller() -> None:
                while time.perf_counter() < deadline:
                    nonce = next(ids)
                    future = asyncio.get_running_loop().create_future()
                    waiting[nonce] = future
                    started = time.perf_counter()
                    queue.put_nowait(diagnostics_pb2.EchoStreamRequest(nonce=nonce))
                    await future
                    latencies.append(time.perf_counter() - started)

            await asyncio.gather(*(caller() for _ in range(concurrency)))
            call.cancel()
            read_task.cancel()
            return len(latencies), latencies

        await measure(f"empty unary Echo, {concurrency} callers", empty_unary)
        await measure(f"empty stream EchoStream, {concurrency} callers", empty_stream)
        await channel.close()
    finally:
        service.terminate()
        service.wait()
        redis.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0, help="duration of each phase")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 32])
    args = parser.parse_args()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, grpcio {grpc.__version__}")
    module_rate = bench_rules_module(args.seconds)
    print(f"{'rules module apply_move, 1 core':<34} {module_rate:>9,.0f}/s")
    results = asyncio.run(run_service_bench(args.seconds, args.concurrency))
    by_label = {r.label: r for r in results}
    top = max(args.concurrency)
    unary = by_label[f"unary ApplyMove, {top} games"]
    stream = by_label[f"stream ApplyMoves, {top} games, batched"]
    ratio = (stream.moves / stream.seconds) / (unary.moves / unary.seconds)
    print(f"stream (batched) / unary at {top} games: {ratio:.2f}x")
    summary = {"rules_module_moves_per_s": round(module_rate), "stream_over_unary": round(ratio, 2)}
    print(json.dumps({**summary, "phases": [r.as_dict() for r in results]}))


if __name__ == "__main__":
    main()
