"""End-to-end figures through the gateway: Connect Four games played by client bots over the public
API, on the Play stream and on unary calls (SubmitMove + WatchGame).

    .venv/bin/python -m tools.bench_gateway [--seconds 10] [--games 100] [--transport play,unary]

Starts Redis (or uses REDIS_URL), one Connect Four rules service and one gateway as processes, the
way `make run` does, then for each transport runs two scenarios: one game move after move, and
--games concurrent games (a finished game is replaced at once). Each move is timed from the moment
the mover submits it to the moment the *opponent's* stream receives its event. Server CPU is read
from /proc for the gateway and rules processes (Redis shown apart), over the measured window.
The client bots run in this process, on the same machine, so they compete for the same cores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2, play_pb2_grpc

from gateway.clocks import Clocks
from gateway.games import GameDirectory
from gateway.rules import RulesRouter
from kit.redis.layer import RedisLayer
from kit.server import install_event_loop
from tools.redis_server import free_port, start_redis

ROWS, COLUMNS = 6, 7
CHANNELS = 8
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    moves: int = 0
    games: int = 0
    refusals: int = 0


@dataclass
class Game:
    game_id: str
    players: list[Any]  # per seat
    heights: list[int] = field(default_factory=lambda: [0] * COLUMNS)
    sent: dict[int, float] = field(default_factory=dict)  # version -> submit time
    ended: bool = False
    rng: random.Random = field(default_factory=random.Random)

    def pick(self) -> int:
        return self.rng.choice([c for c in range(COLUMNS) if self.heights[c] < ROWS])


class Bench:
    def __init__(
        self, address: str, directory: GameDirectory, transport: str, connect: Callable[[str], Any] | None = None
    ) -> None:
        self.address = address
        self.directory = directory
        self.transport = transport
        # `connect`: another channel kind with grpc.aio's stub interface (tools/bench_edge.py: the web edge).
        self.channels = [(connect or grpc.aio.insecure_channel)(address) for _ in range(CHANNELS)]
        self.stats = Stats()
        self.measuring = False
        self.stopping = False
        self.done: asyncio.Event = asyncio.Event()
        self.active = 0

    async def guest(self, index: int) -> tuple[play_pb2.Session, play_pb2_grpc.GameServiceStub]:
        channel = self.channels[index % CHANNELS]
        session = (
            await play_pb2_grpc.AccountServiceStub(channel).SignInAsGuest(play_pb2.SignInAsGuestRequest())
        ).session
        return session, play_pb2_grpc.GameServiceStub(channel)

    def on_event(self, game: Game, seat: int, event: games_pb2.GameEvent) -> None:
        """`seat`'s stream received `event`. The opponent of the mover times it and answers."""
        kind = event.WhichOneof("kind")
        if kind == "ended":
            if not game.ended:
                game.ended = True
                if self.measuring:
                    self.stats.games += 1
                asyncio.get_running_loop().create_task(self.next_game(game.players))
            return
        if kind != "connect4":
            return
        version = event.version
        if seat == (version - 1) % 2:
            return  # the mover's own move
        dropped = event.connect4.disc_dropped
        game.heights[dropped.column] += 1
        sent = game.sent.pop(version, None)
        if sent is not None and self.measuring:
            self.stats.latencies.append(time.perf_counter() - sent)
            self.stats.moves += 1
        if dropped.winning_cells or all(h == ROWS for h in game.heights):
            return  # that move ended the game
        if not self.stopping:
            asyncio.get_running_loop().create_task(self.move(game, seat, version))

    async def move(self, game: Game, seat: int, version: int) -> None:
        column = game.pick()
        game.sent[version + 1] = time.perf_counter()
        ok = await game.players[seat].submit(game.game_id, version, column)
        if not ok:
            self.stats.refusals += 1

    async def next_game(self, players: list[Any]) -> None:
        if self.stopping:
            self.active -= 1
            if self.active == 0:
                self.done.set()
            return
        game_id = await self.directory.start_game(
            game="connect4", options=games_pb2.GameOptions(), players=[p.session.player for p in players],
            per_move_s=60.0, rated=False, origin="bench",
        )
        game = Game(game_id, players)
        await asyncio.gather(*(p.watch(game, seat) for seat, p in enumerate(players)))
        await self.move(game, 0, 0)


class PlayPlayer:
    """One bot with one Play stream."""

    def __init__(self, bench: Bench, session: play_pb2.Session, stub: play_pb2_grpc.GameServiceStub) -> None:
        self.bench = bench
        self.session = session
        self.call = stub.Play(metadata=(("authorization", f"Bearer {session.token}"),))
        self.queue: asyncio.Queue[play_pb2.PlayRequest] = asyncio.Queue()
        self.pending: dict[int, asyncio.Future[play_pb2.PlayResponse]] = {}
        self.games: dict[str, tuple[Game, int]] = {}
        self.next = 0
        loop = asyncio.get_running_loop()
        self.tasks = [loop.create_task(self._write()), loop.create_task(self._read())]

    async def _write(self) -> None:
        while True:
            await self.call.write(await self.queue.get())

    async def _read(self) -> None:
        with_event: Callable[[Game, int, games_pb2.GameEvent], None] = self.bench.on_event
        async for response in self.call:
            if response.WhichOneof("kind") == "event":
                entry = self.games.get(response.event.game_id)
                if entry is not None:
                    with_event(entry[0], entry[1], response.event.event)
            else:
                future = self.pending.pop(response.correlation_id, None)
                if future is not None and not future.done():
                    future.set_result(response)

    def _request(self, **action: Any) -> asyncio.Future[play_pb2.PlayResponse]:
        self.next += 1
        future: asyncio.Future[play_pb2.PlayResponse] = asyncio.get_running_loop().create_future()
        self.pending[self.next] = future
        self.queue.put_nowait(play_pb2.PlayRequest(correlation_id=self.next, **action))
        return future

    async def watch(self, game: Game, seat: int) -> None:
        self.games[game.game_id] = (game, seat)
        await self._request(watch=play_pb2.WatchGameRequest(game_id=game.game_id, after_event_id="0-1"))

    async def submit(self, game_id: str, version: int, column: int) -> bool:
        answer = await self._request(
            submit_move=play_pb2.SubmitMoveRequest(
                game_id=game_id, expected_version=version, request_id=f"m{version}",
                move=games_pb2.GameMove(connect4=connect4_pb2.Move(column=column)),
            )
        )
        return answer.WhichOneof("kind") == "move_accepted"

    def close(self) -> None:
        self.call.cancel()
        for task in self.tasks:
            task.cancel()


class UnaryPlayer:
    """One bot using SubmitMove and one WatchGame stream per game."""

    def __init__(self, bench: Bench, session: play_pb2.Session, stub: play_pb2_grpc.GameServiceStub) -> None:
        self.bench = bench
        self.session = session
        self.stub = stub
        self.md = (("authorization", f"Bearer {session.token}"),)
        self.tasks: set[asyncio.Task[None]] = set()

    async def watch(self, game: Game, seat: int) -> None:
        request = play_pb2.WatchGameRequest(game_id=game.game_id, after_event_id="0-1")
        call = self.stub.WatchGame(request, metadata=self.md)
        await call.wait_for_connection()

        async def read() -> None:
            async for response in call:
                self.bench.on_event(game, seat, response.event)

        task = asyncio.get_running_loop().create_task(read())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def submit(self, game_id: str, version: int, column: int) -> bool:
        try:
            await self.stub.SubmitMove(
                play_pb2.SubmitMoveRequest(
                    game_id=game_id, expected_version=version, request_id=f"m{version}",
                    move=games_pb2.GameMove(connect4=connect4_pb2.Move(column=column)),
                ),
                metadata=self.md,
            )
            return True
        except grpc.aio.AioRpcError:
            return False

    def close(self) -> None:
        for task in tuple(self.tasks):
            task.cancel()


async def scenario(
    address: str, directory: GameDirectory, transport: str, games: int, seconds: float, pids: dict[str, int],
    connect: Callable[[str], Any] | None = None,
) -> dict[str, Any]:
    bench = Bench(address, directory, transport, connect)
    kind = PlayPlayer if transport == "play" else UnaryPlayer
    players = []
    for index in range(games * 2):
        session, stub = await bench.guest(index)
        players.append(kind(bench, session, stub))
    bench.active = games
    await directory.layer.client.config_resetstat()
    cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    started = time.perf_counter()
    bench.measuring = True
    for index in range(games):
        asyncio.get_running_loop().create_task(bench.next_game(players[2 * index: 2 * index + 2]))
    await asyncio.sleep(seconds)
    bench.measuring = False
    elapsed = time.perf_counter() - started
    cpu_after = {name: cpu_seconds(pid) for name, pid in pids.items()}
    commands: Any = await directory.layer.client.info("commandstats")
    bench.stopping = True
    try:
        await asyncio.wait_for(bench.done.wait(), 30)
    except TimeoutError:
        pass
    for player in players:
        player.close()
    for channel in bench.channels:
        await channel.close()
    stats = bench.stats
    cpu = {name: cpu_after[name] - cpu_before[name] for name in pids}
    server_cpu = cpu["gateway"] + cpu["rules"]
    lat = sorted(stats.latencies)

    def pct(p: float) -> float:
        return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")

    return {
        "transport": transport,
        "games": games,
        "moves": stats.moves,
        "moves_s": stats.moves / elapsed,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "mean_ms": statistics.fmean(lat) * 1000 if lat else float("nan"),
        "finished_games": stats.games,
        "refusals": stats.refusals,
        "cpu_gateway_ms_per_move": 1000 * cpu["gateway"] / max(1, stats.moves),
        "cpu_rules_ms_per_move": 1000 * cpu["rules"] / max(1, stats.moves),
        "cpu_server_ms_per_move": 1000 * server_cpu / max(1, stats.moves),
        "moves_per_server_cpu_s": stats.moves / server_cpu if server_cpu else float("nan"),
        "cpu_redis_ms_per_move": 1000 * cpu.get("redis", 0.0) / max(1, stats.moves),
        "cpu_client_s": cpu["client"],
        "seconds": elapsed,
        "redis_calls_per_move": {
            name.removeprefix("cmdstat_"): round(value["calls"] / max(1, stats.moves), 2)
            for name, value in commands.items()
            if value["calls"] / max(1, stats.moves) >= 0.05
        },
    }


@dataclass
class BenchPlatform:
    """Redis (or REDIS_URL), one Connect Four rules service and one gateway as processes, and a game
    directory in this process to start games on them; `pids` are the processes whose CPU is read."""

    url: str
    rules: Any
    gateway: Any
    directory: GameDirectory
    pids: dict[str, int]


@asynccontextmanager
async def bench_platform(python_args: tuple[str, ...] = (), **gateway_env: str) -> AsyncIterator[BenchPlatform]:
    from redis.asyncio import Redis

    from tests.gateway.harness import spawn_gateway, spawn_rules

    redis_proc = None
    url = os.environ.get("REDIS_URL")
    if not url:
        redis_proc = start_redis(free_port())
        url = redis_proc.url
    rules = spawn_rules(url)
    gateway = spawn_gateway(
        url, {"connect4": rules.address}, python_args=python_args,
        TAFEL_LOG_LEVEL="WARNING", TAFEL_MAX_CONCURRENT_STREAMS="10000", **gateway_env,
    )
    redis = Redis.from_url(url)
    router = RulesRouter({"connect4": (rules.address,)})
    layer = RedisLayer.around(redis)
    directory = GameDirectory(layer, router, Clocks(layer, ttl_s=3600), game_ttl_s=3600)
    pids = {"gateway": gateway.process.pid, "rules": rules.process.pid, "client": os.getpid()}
    if redis_proc is not None:
        pids["redis"] = redis_proc.process.pid
    try:
        yield BenchPlatform(url, rules, gateway, directory, pids)
    finally:
        await router.close()
        await layer.close()
        await redis.aclose()
        gateway.stop()
        rules.stop()
        if redis_proc is not None:
            redis_proc.stop()


async def main_async(args: argparse.Namespace) -> None:
    profile = ("-m", "cProfile", "-o", args.profile_gateway) if args.profile_gateway else ()
    async with bench_platform(python_args=profile) as platform:
        await run_scenarios(args, platform)


async def run_scenarios(args: argparse.Namespace, platform: BenchPlatform) -> None:
    gateway, rules = platform.gateway, platform.rules
    print(
        f"gateway {gateway.address} (pid {gateway.process.pid}), rules {rules.address} "
        f"(pid {rules.process.pid}), redis {platform.url}; {os.cpu_count()} CPUs",
        flush=True,
    )
    header = (
        f"{'transport':<9} {'games':>5} {'moves':>7} {'moves/s':>8} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'srv CPU ms/move':>15} {'(gw+rules)':>11} {'moves/srv CPU s':>15} {'redis ms/move':>13} "
        f"{'client ms/move':>14} {'refused':>7}"
    )
    print(header, flush=True)
    for transport in args.transport.split(","):
        for games in (1, args.games):
            result = await scenario(gateway.address, platform.directory, transport, games, args.seconds, platform.pids)
            print(
                f"{result['transport']:<9} {result['games']:>5} {result['moves']:>7} {result['moves_s']:>8.0f} "
                f"{result['p50_ms']:>7.2f} {result['p99_ms']:>7.2f} {result['cpu_server_ms_per_move']:>15.3f} "
                f"{result['cpu_gateway_ms_per_move']:>5.3f}+{result['cpu_rules_ms_per_move']:<5.3f} "
                f"{result['moves_per_server_cpu_s']:>15.0f} {result['cpu_redis_ms_per_move']:>13.3f} "
                f"{1000 * result['cpu_client_s'] / max(1, result['moves']):>14.3f} "
                f"{result['refusals']:>7}",
                flush=True,
            )
            if args.verbose:
                print(f"          redis calls per move: {result['redis_calls_per_move']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0, help="measured time per scenario")
    parser.add_argument("--games", type=int, default=100, help="concurrent games in the second scenario")
    parser.add_argument("--transport", default="play,unary", help="play, unary or both")
    parser.add_argument("--verbose", action="store_true", help="also print Redis commands per move")
    parser.add_argument("--profile-gateway", default="", help="run the gateway under cProfile, stats to this file")
    args = parser.parse_args()
    sys.path.insert(0, os.getcwd())
    install_event_loop()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
