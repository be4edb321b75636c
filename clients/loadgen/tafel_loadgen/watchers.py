"""Scenario `watchers`: W idle spectators on live games (measures a gateway's memory per watcher).

A few live games are started by pairs of players who then sit on their first move (long think
time); W WatchGame streams are spread over them and held open; every watcher must have received
the game's history (so it is really connected) and no stream may fail.

All W streams are opened at once: a burst of new calls that the gateway's server must queue until
its event loop picks them up (TAFEL_MAX_PENDING_CALLS, kit/server.py; gRPC's default
limit cancelled 10-25 % of a burst of a few thousand).
"""

from __future__ import annotations

import asyncio
import itertools
import time

import grpc
from tafel.client import TafelClient
from tafel.errors import TafelError
from tafel.play.v1 import play_pb2, play_pb2_grpc

from tafel_loadgen.stats import Stats

WATCHERS_PER_CHANNEL = 500  # HTTP/2 streams per client connection
WATCHERS_PER_SESSION = 50  # below the gateway's per-session stream cap


async def run_watchers(targets: list[str], watchers: int, live_games: int, hold_s: float) -> Stats:
    stats = Stats()
    players: list[TafelClient] = []
    game_ids: list[str] = []
    for _ in range(live_games):
        pair = [await TafelClient.connect(targets) for _ in range(2)]
        for client in pair:
            await client.sign_in_as_guest()
        matches = await asyncio.gather(*(client.find_match("connect4", per_move_s=3600) for client in pair))
        game_ids.append(matches[0].game_id)
        players.extend(pair)

    viewer = await TafelClient.connect(targets)
    # A gateway caps the streams one session holds open (TAFEL_MAX_STREAMS_PER_PLAYER, 64): the
    # spectators are people, a few sessions' worth of tabs each, not one token with 10,000 streams.
    tokens = []
    for _ in range((watchers + WATCHERS_PER_SESSION - 1) // WATCHERS_PER_SESSION):
        await viewer.sign_in_as_guest()
        tokens.append(viewer.metadata())
    channels = [
        # Each channel its own connection: grpc shares one connection between channels to one
        # address unless told not to, and a connection carries a bounded number of streams.
        grpc.aio.insecure_channel(targets[i % len(targets)], options=[("grpc.use_local_subchannel_pool", 1)])
        for i in range((watchers + WATCHERS_PER_CHANNEL - 1) // WATCHERS_PER_CHANNEL)
    ]
    connected = 0
    failed = 0
    ready = asyncio.Event()
    release = asyncio.Event()

    async def watch(index: int, game_id: str) -> None:
        nonlocal connected, failed
        stub = play_pb2_grpc.GameServiceStub(channels[index // WATCHERS_PER_CHANNEL])
        token = tokens[index // WATCHERS_PER_SESSION]
        call = stub.WatchGame(play_pb2.WatchGameRequest(game_id=game_id), metadata=token)
        try:
            await call.read()  # the game's first event: this watcher is connected
            connected += 1
            if connected + failed == watchers:
                ready.set()
            await release.wait()
        except grpc.aio.AioRpcError as error:
            if not release.is_set():  # a stream that fails while it should be held open
                stats.errors[error.code().name] += 1
                failed += 1
                if connected + failed == watchers:
                    ready.set()
        finally:
            call.cancel()

    cycle = itertools.cycle(game_ids)
    tasks = [asyncio.ensure_future(watch(i, next(cycle))) for i in range(watchers)]
    started = time.perf_counter()
    try:
        await asyncio.wait_for(ready.wait(), timeout=300)
    except TimeoutError:
        stats.errors["WATCHERS_NOT_CONNECTED"] += watchers - connected - failed
    print(f"  connecting took {time.perf_counter() - started:.1f} s", flush=True)
    print(f"  {connected} watchers connected on {len(game_ids)} live games; holding {hold_s} s", flush=True)
    await asyncio.sleep(hold_s)
    release.set()
    await asyncio.gather(*tasks)
    for game_id, client in zip(game_ids, players[::2], strict=True):
        try:
            await client.resign(game_id)
        except TafelError:
            pass
    for client in (*players, viewer):
        await client.close()
    for channel in channels:
        await channel.close()
    return stats
