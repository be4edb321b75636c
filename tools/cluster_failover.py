"""Failover of a local Redis Cluster under a writing client, measured at the Redis layer.

    .venv/bin/python -m tools.cluster_failover [--runs 3] [--writers 20]

Each run starts a fresh 3+3 cluster (tools/redis_cluster.py), has `writers` tasks write in a loop
through one RedisLayer (ClusterPipe) to keys of every master, `kill -9`s one master (a different one
each run) and reports: how long until every writer of the killed master's slots succeeded again,
how many writes were refused meanwhile (the error reached the caller) and of which kind, whether
every acknowledged write of the killed master is on its promoted replica (acknowledged then lost),
and that the other masters' writers never failed. docs/cluster.md quotes the figures.

    .venv/bin/python -m tools.cluster_failover --games [--runs 2] [--aof]

`--games`: the same at the game level. A fresh cluster per run, the platform on it (tools/platform.py:
two gateways, one Connect Four rules service), the load generator's `games` scenario (`--load`
games) plus tools/chaos.py's audited players (`--audited` games, every acknowledged move noted)
against both gateways, every game on a turn clock; `kill -9` of one master `--kill-at` seconds in;
the run goes on to `--duration`, then the clocks end what is left and tools/chaos.py's audit runs
on the records (replayed through the rules; acknowledged moves missing; moves applied twice; games
stuck or lost). On top: the games on the killed master's slots that were live at the kill and
had an action after it (continued), their longest pause between two actions across the kill (recovery), errors
the clients saw by code, timeouts applied twice (two timeout actions in a record) and deadlines
never claimed (a due member left in a shard's clock set after the settle).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from redis.crc import key_slot
from tafel.play.v1 import play_pb2

from kit.redis.client import redis_client
from kit.redis.keys import (
    GAME_SHARDS,
    claimed_key,
    clock_key,
    clocks_key,
    game_keys,
    game_of_meta_key,
    game_shard,
    live_key,
    meta_pattern,
    record_key,
)
from kit.redis.layer import RedisLayer
from tools.chaos import GAME, Audit, ChaosSettings, Report, audit_all, audited_player, scan, settle
from tools.chaos import loadgen as chaos_loadgen
from tools.platform import Platform
from tools.redis_cluster import RedisClusterProcess, start_cluster


@dataclass
class Writer:
    key: str
    on_victim: bool
    acknowledged: int = 0  # the highest value Redis said OK to
    sent: int = 0  # the value of the write in flight (or the last one)
    refused: Counter[str] = field(default_factory=Counter)
    last_refusal: float = 0.0


def key_on(cluster: RedisClusterProcess, port: int, prefix: str) -> str:
    ranges = cluster.masters()[port]
    for index in range(100_000):
        key = f"failover:{{{prefix}{index}}}"
        if any(start <= key_slot(key.encode()) <= end for start, end in ranges):
            return key
    raise RuntimeError("no key found")


async def write(layer: RedisLayer, writer: Writer, stop: asyncio.Event) -> None:
    value = 0
    while not stop.is_set():
        value += 1
        writer.sent = value
        try:
            await layer.call("SET", writer.key, value)
            writer.acknowledged = value
        except Exception as error:  # every refusal is counted, by kind
            writer.refused[type(error).__name__] += 1
            writer.last_refusal = time.monotonic()
        await asyncio.sleep(0.005)


async def one_run(run: int, writers: int) -> str:
    cluster = await asyncio.to_thread(start_cluster)
    layer = RedisLayer.connect(cluster.url, timeout_s=10.0)
    try:
        masters = sorted(cluster.masters())
        victim = masters[run % len(masters)]
        crew = [
            Writer(key_on(cluster, masters[i % len(masters)], f"w{i}-"), masters[i % len(masters)] == victim)
            for i in range(writers)
        ]
        stop = asyncio.Event()
        tasks = [asyncio.create_task(write(layer, w, stop)) for w in crew]
        await asyncio.sleep(1.0)
        # Until every writer of the killed master's slots has had a write sent after the kill
        # acknowledged (a reply to one sent before it may still be read after the kill).
        marks = {w.key: w.sent for w in crew if w.on_victim}
        killed = time.monotonic()
        cluster.kill(victim)
        while any(w.acknowledged <= marks[w.key] for w in crew if w.on_victim):
            await asyncio.sleep(0.01)
            if time.monotonic() - killed > 30:
                raise RuntimeError("writers did not recover within 30 s")
        recovered = time.monotonic() - killed
        await asyncio.sleep(0.5)
        stop.set()
        await asyncio.gather(*tasks)
        lost = 0
        for w in crew:
            stored = await layer.call("GET", w.key)
            if int(stored or 0) < w.acknowledged:
                lost += 1
        refused = sum((w.refused for w in crew if w.on_victim), Counter())
        others = sum((w.refused for w in crew if not w.on_victim), Counter())
        return (
            f"run {run}: master {victim} killed; its writers all wrote again after {recovered:.2f} s; "
            f"refused meanwhile {sum(refused.values())} ({dict(refused)}); other masters' writers refused "
            f"{sum(others.values())}; keys whose acknowledged value was lost: {lost} of {len(crew)}"
        )
    finally:
        await layer.close()
        cluster.stop()


# -- the game level (--games) ---------------------------------------------------------------------


@dataclass(frozen=True)
class GamesSettings:
    load_games: int = 50
    audited_games: int = 5
    duration_s: float = 30.0
    kill_at_s: float = 10.0
    per_move_s: float = 3.0
    think_s: float = 0.05
    aof: bool = False


async def game_figures(redis: Any, victim_ranges: list[tuple[int, int]], killed_at: float) -> dict[str, Any]:
    """From every record and every shard's clock set: the games on the killed master's slots and
    what happened to them after the kill; timeouts twice or never."""
    on_victim = live_at_kill = continued = twice = 0
    stalls: list[float] = []
    for key in await scan(redis, meta_pattern()):
        game_id = game_of_meta_key(key.decode())
        slot = key_slot(game_keys(game_id).state.encode())
        raw: Any = await redis.get(record_key(game_id))
        if raw is None:
            continue  # stuck or lost: chaos's audit counts those
        record = play_pb2.GameRecord.FromString(bytes(raw))
        timeouts = sum(1 for a in record.actions if a.WhichOneof("action") == "timed_out")
        twice += timeouts > 1  # a timeout ends a Connect Four game: a second one is a clock fired twice
        if not any(start <= slot <= end for start, end in victim_ranges):
            continue
        on_victim += 1
        if record.started_at.ToNanoseconds() / 1e9 >= killed_at or record.ended_at.ToNanoseconds() / 1e9 < killed_at:
            continue
        live_at_kill += 1
        times = [a.at.ToNanoseconds() / 1e9 for a in record.actions]
        if any(t > killed_at for t in times):
            continued += 1
            # The longest pause between two actions across the kill. Not the first action after it:
            # an action stamped just after the kill may have been committed seconds later (the
            # ClusterPipe resends the commit until the replica has taken over).
            pauses = [b - a for a, b in zip([record.started_at.ToNanoseconds() / 1e9, *times], times, strict=False)
                      if b > killed_at and a < killed_at + 10]
            stalls.append(max(pauses))
    now_ms = time.time() * 1000
    never = 0
    for shard in range(GAME_SHARDS):
        # Due more than 2 s ago (a sweep runs at least every TAFEL_CLOCK_MAX_WAIT_S) and unclaimed.
        never += len(await redis.zrangebyscore(clocks_key(shard), "-inf", now_ms - 2000))
        never += len(await redis.zrangebyscore(claimed_key(shard), "-inf", now_ms - 2000))
    return {
        "games_on_killed_master": on_victim,
        "live_at_kill": live_at_kill,
        "continued_after_kill": continued,
        "longest_pause_across_kill_s": sorted(round(t, 2) for t in stalls),
        "timeouts_twice": twice,
        "deadlines_never_claimed": never,
    }


async def stuck_detail(redis: Any, game_id: str, victim_ranges: list[tuple[int, int]]) -> dict[str, Any]:
    """Why a game is not over after the settle: its keys on the killed master's slots? its clock (`d`
    0: over in its rules state), armed deadlines, actions, still listed live."""
    slot = key_slot(game_keys(game_id).state.encode())
    record_slot = key_slot(record_key(game_id).encode())
    member_due = [
        (m.decode(), score)
        for m, score in await redis.zrange(clocks_key(game_shard(game_id)), 0, -1, withscores=True)
        if m.decode().startswith(game_id + "|")
    ]
    return {
        "game": game_id,
        "on_killed_master": any(start <= slot <= end for start, end in victim_ranges),
        "record_on_killed_master": any(start <= record_slot <= end for start, end in victim_ranges),
        "listed_live": await redis.zscore(live_key(), game_id) is not None,
        "clock": {k.decode(): v.decode() for k, v in (await redis.hgetall(clock_key(game_id))).items()},
        "armed": member_due,
        "actions": int(await redis.hget(game_keys(game_id).state, "v") or 0),  # the version: one per action
    }


async def games_run(run: int, settings: GamesSettings) -> dict[str, Any]:
    cluster = await asyncio.to_thread(start_cluster, aof=settings.aof)
    chaos = ChaosSettings(
        duration_s=settings.duration_s, games=settings.load_games, audited_games=settings.audited_games,
        per_move_s=settings.per_move_s, think_s=settings.think_s, seed=run + 1,
    )
    env = {
        "TAFEL_LOG_LEVEL": "ERROR",
        "TAFEL_PER_MOVE_S": str(settings.per_move_s),
        "TAFEL_MIN_PER_MOVE_S": str(min(1.0, settings.per_move_s)),
        "TAFEL_CLOCK_MAX_WAIT_S": "0.25",
    }
    platform = Platform(redis_url=cluster.url, gateways=2, fixed_ports=False, bot_pool=False,
                        games=(GAME,), extra_env=env, quiet=False)
    redis = redis_client(cluster.url)
    report = Report()
    try:
        await asyncio.to_thread(platform.start)
        targets = platform.gateway_addresses
        began = time.monotonic()
        stop_at = began + settings.duration_s
        audit = Audit()
        load = asyncio.ensure_future(asyncio.to_thread(chaos_loadgen, targets, chaos))
        seeds = range(run * 1000, run * 1000 + 2 * chaos.audited_games)
        players = [audited_player(targets, audit, stop_at, chaos, seed) for seed in seeds]
        playing = asyncio.ensure_future(asyncio.gather(*players, return_exceptions=True))
        await asyncio.sleep(settings.kill_at_s)
        masters = cluster.masters()
        victim = sorted(masters)[run % len(masters)]
        replica = cluster.replica_of(victim)
        killed_at = time.time()
        cluster.kill(victim)
        promoted = None
        while promoted is None and time.time() - killed_at < 30:
            await asyncio.sleep(0.1)
            if replica in await asyncio.to_thread(cluster.masters):
                promoted = time.time() - killed_at
        margin = settings.per_move_s * 4 + 30
        for result in await asyncio.wait_for(playing, settings.duration_s + margin):
            if isinstance(result, BaseException):
                report.client_errors[type(result).__name__] += 1
        stats = await asyncio.wait_for(load, settings.duration_s + margin)
        report.loadgen_moves, report.loadgen_games = int(stats["moves"]), int(stats["games_finished"])
        loadgen_errors = dict(stats["errors"])
        audited_errors = dict(audit.errors)
        await settle(redis, settings.per_move_s * 3 + 15)
        await audit_all(redis, audit, report)
        figures = await game_figures(redis, masters[victim], killed_at)
        figures["stuck"] = [await stuck_detail(redis, game_id, masters[victim]) for game_id in report.stuck]
        return {
            "run": run, "aof": settings.aof, "killed_master": victim, "replica_master_after_s": promoted,
            **report.as_dict(), "loadgen_errors": loadgen_errors, "audited_errors": audited_errors,
            **figures,
        }
    finally:
        await redis.aclose()
        await asyncio.to_thread(platform.stop)
        cluster.stop()


async def main(runs: int, writers: int) -> None:
    for run in range(runs):
        print(await one_run(run, writers), flush=True)


async def main_games(runs: int, settings: GamesSettings) -> None:
    for run in range(runs):
        print(json.dumps(await games_run(run, settings)), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--writers", type=int, default=20)
    parser.add_argument("--games", action="store_true", help="the game-level run (platform, load, audit)")
    defaults = GamesSettings()
    parser.add_argument("--load", type=int, default=defaults.load_games, help="load generator games")
    parser.add_argument("--audited", type=int, default=defaults.audited_games, help="audited games")
    parser.add_argument("--duration", type=float, default=defaults.duration_s)
    parser.add_argument("--kill-at", type=float, default=defaults.kill_at_s)
    parser.add_argument("--per-move", type=float, default=defaults.per_move_s)
    parser.add_argument("--aof", action="store_true", help="AOF on every node (fsync every second)")
    args = parser.parse_args()
    if args.games:
        settings = GamesSettings(
            load_games=args.load, audited_games=args.audited, duration_s=args.duration, kill_at_s=args.kill_at,
            per_move_s=args.per_move, aof=args.aof,
        )
        asyncio.run(main_games(args.runs, settings))
    else:
        asyncio.run(main(args.runs, args.writers))
