"""Correspondence games at scale (docs/benchmarks.md, "Correspondence games"): `--games`
live 3-day Connect Four games at once on a fresh single Redis, each made as the platform makes one
(the gateway's GameDirectory.start_game through a real Connect Four rules service, then one move
through Actions.apply with the correspondence follow-up: the rules commit arms the 3-day deadline,
the follow-up arms the 24 h and 1 h warnings), players in `--per-player` games each. Then:

- Redis memory per game: INFO used_memory after minus before, over the games (every key a live
  correspondence game has: the rules state and events, the gateway's metadata, the clock hash and
  its deadline member, the warnings, the live lists);
- the clock sweep's time per pass over every shard with nothing due (gateway/clocks.py
  sweep_once: wall time from this process, and Redis time from INFO commandstats' EVALSHA usec),
  and the warning sweep's (gateway/correspondence.py sweep_once), `--sweeps` passes each;
- then two days on (kit/timesource.py's moved clock, the bench's own offset file for itself and
  the rules service): every game's 24 h warning due at once, swept and sent (to a counting inbox:
  the inbox's own cost is gateway/notices').

    .venv/bin/python -m tools.bench_correspondence [--games 100000] [--per-player 10] [--sweeps 50]
"""

from __future__ import annotations

import os
import tempfile

if "TAFEL_TIME_OFFSET_FILE" not in os.environ:  # the moved clock for this process and its rules service
    _offset = os.path.join(tempfile.mkdtemp(prefix="tafel-bench-corr-"), "offset")
    with open(_offset, "w", encoding="ascii") as _handle:
        _handle.write("0")
    os.environ.update(TAFEL_TIME_OFFSET_FILE=_offset, TAFEL_TEST_TIME="on")

import argparse
import asyncio
import random
import subprocess
import sys
import time
from typing import Any

from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.play.v1 import notices_pb2, play_pb2

from gateway.actions import Actions
from gateway.clocks import Clocks, Due
from gateway.correspondence import Correspondence
from gateway.games import GameDirectory
from gateway.records import Records
from gateway.rules import RulesRouter
from gateway.vacation.store import VacationStore
from kit import timesource
from kit.redis.game_reads import GameReads
from kit.redis.keys import GAME_SHARDS, clock_key, game_keys, meta_key, warnings_key
from kit.redis.layer import RedisLayer
from kit.timesource import write_offset
from tools.redis_server import free_port, start_redis

DAY_S = 86_400


class CountingInbox:
    def __init__(self) -> None:
        self.notes = 0

    async def notify(self, player_id: str, note: notices_pb2.Notification, *, guest: bool = False) -> bool:
        self.notes += 1
        return True


def start_rules(redis_url: str) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, REDIS_URL=redis_url, TAFEL_PORT=str(free_port()), TAFEL_HOST="127.0.0.1")
    env.update(PYTHONUNBUFFERED="1", TAFEL_LOG_LEVEL="WARNING", TAFEL_LIVE_TTL_S=str(30 * DAY_S))
    env.pop("TAFEL_INTERNAL_SECRET", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "services.connect4"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("LISTENING "):
            return process, line.split()[-1]
    raise RuntimeError(f"the rules service exited with {process.wait()}")


async def evalsha_usec(layer: RedisLayer) -> int:
    info: Any = await layer.client.info("commandstats")
    return int(info.get("cmdstat_evalsha", {}).get("usec", 0))


async def used_memory(layer: RedisLayer) -> int:
    info: Any = await layer.client.info("memory")
    return int(info["used_memory"])


async def memory_by_key(layer: RedisLayer, game_ids: list[str]) -> None:
    """MEMORY USAGE of a sample of games' own keys, by kind (the rest of a game's share is its
    members in the shared sets: deadlines, warnings, live lists)."""
    sample = random.Random(7).sample(game_ids, min(200, len(game_ids)))
    kinds = {
        "rules state": lambda g: game_keys(g).state,
        "events": lambda g: game_keys(g).events,
        "metadata": meta_key,
        "clock": clock_key,
    }
    parts = []
    for name, key_of in kinds.items():
        sizes: Any = await layer.many([("MEMORY", "USAGE", key_of(g), "SAMPLES", "0") for g in sample])
        parts.append(f"{name} {sum(int(s or 0) for s in sizes) / len(sample):.0f}")
    print("bytes a game by key (MEMORY USAGE, 200 games): " + ", ".join(parts))


async def settled(_: Due) -> bool:
    return True


async def run(url: str, rules: str, games: int, per_player: int, sweeps: int) -> None:
    layer = RedisLayer.connect(url, max_connections=16)
    router = RulesRouter({"connect4": (rules,)})
    clocks = Clocks(layer, ttl_s=7 * DAY_S)
    directory = GameDirectory(layer, router, clocks, game_ttl_s=7 * DAY_S)
    actions = Actions(directory, router, clocks, Records(layer, GameReads(layer), ttl_s=0))
    inbox = CountingInbox()
    corr = Correspondence(layer, directory, VacationStore(layer, allowance_ms=30 * DAY_S * 1000), inbox)
    actions.correspondence = corr
    directory.started = corr.started
    players = [
        play_pb2.Player(player_id=f"bench-p{i}", username=f"bench{i}") for i in range(max(2, games * 2 // per_player))
    ]
    rng = random.Random(39)
    try:
        await layer.call("PING")
        before = await used_memory(layer)
        slots = asyncio.Semaphore(64)
        started = time.perf_counter()

        made_ids: list[str] = []

        async def one() -> None:
            async with slots:
                pair = rng.sample(players, 2)
                game_id = await directory.start_game(
                    game="connect4",
                    options=games_pb2.GameOptions(),
                    players=pair,
                    per_move_s=3.0 * DAY_S,
                    rated=False,
                    origin="bench",
                )
                made_ids.append(game_id)
                meta = await directory.meta(game_id)
                await actions.apply(
                    meta,
                    0,
                    expected_version=0,
                    request_id="s0-m1",
                    move=games_pb2.GameMove(connect4=connect4_pb2.Move(column=3)),
                )

        done = 0
        for first in range(0, games, 1000):
            await asyncio.gather(*(one() for _ in range(min(1000, games - first))))
            done = first + min(1000, games - first)
            if done % 10_000 == 0:
                print(f"{done} games, {time.perf_counter() - started:.0f} s", flush=True)
        made_s = time.perf_counter() - started
        after = await used_memory(layer)
        warnings = sum([int(n) for n in await layer.many([("ZCARD", warnings_key(k)) for k in range(GAME_SHARDS)])])
        print(f"made {games} games in {made_s:.0f} s ({inbox.notes} notices); warnings pending: {warnings}")
        print(f"Redis used_memory: {before} -> {after} bytes: {(after - before) / games:.0f} bytes a game")
        await memory_by_key(layer, made_ids)

        async def clock_pass() -> tuple[int, float | None]:
            return await clocks.sweep_once(settled)

        await clock_pass()
        await corr.sweep_once()
        for label, sweep in (("clock sweep", clock_pass), ("warning sweep", corr.sweep_once)):
            usec = await evalsha_usec(layer)
            t = time.perf_counter()
            for _ in range(sweeps):
                claimed, _ = await sweep()
                assert claimed == 0
            wall_ms = (time.perf_counter() - t) / sweeps * 1000
            redis_ms = (await evalsha_usec(layer) - usec) / sweeps / 1000
            print(f"{label}, nothing due, {games} games: {wall_ms:.2f} ms a pass (wall), {redis_ms:.2f} ms Redis time")

        if not timesource.moved():
            return
        # Two days on: every game's 24 h warning is due at once (games that all began together, a
        # tournament round's worst case); the sweeps claim them CLAIM_BATCH at a time and send each.
        write_offset(timesource.OFFSET_FILE, 2 * DAY_S * 1000 + 60_000)
        await asyncio.sleep(0.05)
        sent_before = inbox.notes
        t = time.perf_counter()
        claimed_total = passes = 0
        while True:
            claimed, _ = await corr.sweep_once()
            claimed_total += claimed
            passes += 1
            if claimed == 0:
                break
        wall_s = time.perf_counter() - t
        sent = inbox.notes - sent_before
        print(
            f"24 h warnings due at once: {claimed_total} claimed in {passes - 1} passes, {sent} sent, "
            f"{wall_s:.1f} s ({claimed_total / wall_s:.0f} a second; one process, each claimed batch of 100 at once)"
        )
    finally:
        await router.close()
        await layer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--per-player", type=int, default=10)
    parser.add_argument("--sweeps", type=int, default=50)
    options = parser.parse_args()
    redis = start_redis()
    rules, address = start_rules(redis.url)
    try:
        asyncio.run(run(redis.url, address, options.games, options.per_player, options.sweeps))
    finally:
        rules.terminate()
        rules.wait()
        redis.stop()


if __name__ == "__main__":
    main()
