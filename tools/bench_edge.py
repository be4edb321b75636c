"""The web edge's cost: the same Connect Four load over native gRPC and over the web edge
(Connect: unary SubmitMove + a WatchGame stream per player), then many browser-style watchers.

    .venv/bin/python -m tools.bench_edge [--seconds 10] [--games 50] [--codec proto|json] [--watchers 1000]

Starts Redis (or uses REDIS_URL), one Connect Four rules service and one gateway with its web edge
(in the gateway's process: TAFEL_WEB_PORT) as processes, the way `make run` does. The load is
tools/bench_gateway.py's unary scenario (a finished game is replaced at once; each move timed from
submit to the opponent's stream receiving it), once over grpc.aio channels and once over
tools/connect_channel.ConnectChannel (httpx, HTTP/1.1, a connection per open stream as a browser
has). Server CPU (gateway + rules, from /proc) per move is compared: the edge's target is at most
+30 % over native unary calls. Then `--watchers` WatchGame streams over the edge, one HTTP/1.1
connection each, on live games: the gateway's RSS before and while they are held, and how long a
move takes to reach every one of them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2, play_pb2_grpc

from gateway.games import GameDirectory
from kit.server import install_event_loop
from tools.bench_gateway import BenchPlatform, bench_platform, scenario
from tools.connect_channel import ConnectChannel


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def row(label: str, result: dict[str, Any]) -> str:
    return (
        f"{label:<14} {result['games']:>5} {result['moves']:>7} {result['moves_s']:>8.0f} {result['p50_ms']:>7.2f} "
        f"{result['p99_ms']:>7.2f} {result['cpu_server_ms_per_move']:>15.3f} "
        f"{result['cpu_gateway_ms_per_move']:>5.3f}+{result['cpu_rules_ms_per_move']:<5.3f} "
        f"{1000 * result['cpu_client_s'] / max(1, result['moves']):>14.3f} {result['refusals']:>7}"
    )


def move(game_id: str, version: int, column: int) -> play_pb2.SubmitMoveRequest:
    return play_pb2.SubmitMoveRequest(
        game_id=game_id, expected_version=version, request_id=f"w{version}",
        move=games_pb2.GameMove(connect4=connect4_pb2.Move(column=column)),
    )


async def watchers(url: str, directory: GameDirectory, gateway_pid: int, count: int, per_game: int = 50) -> None:
    """`count` WatchGame streams over the edge, `per_game` on each live game, one connection each."""
    async with ConnectChannel(url) as sign_in:
        accounts = play_pb2_grpc.AccountServiceStub(sign_in)
        sessions = [(await accounts.SignInAsGuest(play_pb2.SignInAsGuestRequest())).session for _ in range(3)]
        spectator = (("authorization", f"Bearer {sessions.pop().token}"),)
        by_seat = [(("authorization", f"Bearer {s.token}"),) for s in sessions]
        games = [
            await directory.start_game(
                game="connect4", options=games_pb2.GameOptions(), players=[s.player for s in sessions],
                per_move_s=600.0, rated=False, origin="bench",
            )
            for _ in range(max(1, count // per_game))
        ]
        mover = play_pb2_grpc.GameServiceStub(sign_in)
        # A first move, so that every stream's replay has a message: then it is known to be open.
        for game_id in games:
            await mover.SubmitMove(move(game_id, 0, 3), metadata=by_seat[0])
        before = rss_mib(gateway_pid)
        channels = [ConnectChannel(url, max_connections=per_game) for _ in games]
        calls: list[Any] = []
        seen: list[asyncio.Queue[int]] = []
        tasks = []
        started = time.perf_counter()
        for index in range(count):
            stub = play_pb2_grpc.GameServiceStub(channels[index % len(games)])
            call = stub.WatchGame(play_pb2.WatchGameRequest(game_id=games[index % len(games)]), metadata=spectator)
            queue: asyncio.Queue[int] = asyncio.Queue()

            async def read(call: Any = call, queue: asyncio.Queue[int] = queue) -> None:
                async for response in call:
                    queue.put_nowait(response.event.version)

            calls.append(call)
            seen.append(queue)
            tasks.append(asyncio.create_task(read()))
        await asyncio.wait_for(asyncio.gather(*(q.get() for q in seen)), 120)
        opened_s = time.perf_counter() - started
        held = rss_mib(gateway_pid)
        started = time.perf_counter()
        for game_id in games:
            await mover.SubmitMove(move(game_id, 1, 4), metadata=by_seat[1])
        await asyncio.wait_for(asyncio.gather(*(q.get() for q in seen)), 60)
        fanned_s = time.perf_counter() - started
        errors = sum(1 for t in tasks if t.done() and t.exception() is not None)
        print(
            f"watchers: {count} WatchGame streams over the edge (one HTTP/1.1 connection each) on {len(games)} games, "
            f"opened and replayed in {opened_s:.2f} s; gateway RSS {before:.0f} MiB -> {held:.0f} MiB while held "
            f"(+{(held - before) * 1024 / count:.0f} KiB per stream); a move on every game reached all {count} "
            f"in {fanned_s * 1000:.0f} ms; {errors} errors",
            flush=True,
        )
        for call in calls:
            call.cancel()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for channel in channels:
            await channel.close()


async def main_async(args: argparse.Namespace) -> None:
    async with bench_platform(
        TAFEL_WEB_PORT="0",
        # One spectator session holds every watcher here; the edge enforces the per-session cap now.
        TAFEL_MAX_STREAMS_PER_PLAYER="100000",
        TAFEL_LIMIT_CALLS_PER_PEER="100000/200000",
        TAFEL_LIMIT_CALLS_PER_PLAYER="100000/200000",
    ) as platform:
        await run_scenarios(args, platform)


async def run_scenarios(args: argparse.Namespace, platform: BenchPlatform) -> None:
    gateway, rules, directory, pids = platform.gateway, platform.rules, platform.directory, platform.pids
    edge_url = next(line.split()[-1] for line in gateway.output if line.startswith("WEB "))
    print(
        f"gateway {gateway.address} + web edge {edge_url} (pid {gateway.process.pid}), rules {rules.address}; "
        f"{os.cpu_count()} CPUs; {args.seconds:.0f} s per scenario, codec {args.codec}",
        flush=True,
    )
    print(
        f"{'transport':<14} {'games':>5} {'moves':>7} {'moves/s':>8} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'srv CPU ms/move':>15} {'(gw+rules)':>11} {'client ms/move':>14} {'refused':>7}",
        flush=True,
    )

    def edge_channel(_: str) -> ConnectChannel:
        return ConnectChannel(edge_url, codec=args.codec)

    results = {}
    for label, address, connect in (
        ("grpc unary", gateway.address, None),
        (f"edge connect+{args.codec}", edge_url, edge_channel),
    ):
        if label.split()[0] not in args.transports.split(","):
            continue
        result = await scenario(address, directory, "unary", args.games, args.seconds, pids, connect)
        results[label] = result
        print(row(label, result), flush=True)
    if len(results) == 2:
        native, edge = results.values()
        server = edge["cpu_server_ms_per_move"] / native["cpu_server_ms_per_move"]
        alone = edge["cpu_gateway_ms_per_move"] / native["cpu_gateway_ms_per_move"]
        print(f"edge / native server CPU per move: {server:.2f}x (gateway alone {alone:.2f}x); target <= 1.30x")
    if args.watchers:
        await watchers(edge_url, directory, gateway.process.pid, args.watchers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0, help="measured time per scenario")
    parser.add_argument("--games", type=int, default=50, help="concurrent games")
    parser.add_argument("--codec", default="proto", choices=("proto", "json"), help="Connect body encoding")
    parser.add_argument("--transports", default="grpc,edge", help="grpc, edge or both")
    parser.add_argument("--watchers", type=int, default=1000, help="watch streams to hold (0 = skip)")
    args = parser.parse_args()
    install_event_loop()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
