"""Redis's own cost of a move's commit: games created and played through services.host.store's
GameStore (the rules tier's scripts, kit/redis/lua/rules/) against a fresh Redis, with the turn
clock armed in the commit as the gateway asks for it. Prints Redis CPU per commit (INFO cpu), this
process's CPU per commit (the rules tier's side: building the script call, the pipelined
connection, parsing the reply), and the commands the scripts ran per commit (INFO commandstats) —
the count is exact, not noisy.

    .venv/bin/python -m tools.bench_commit [--games 200] [--moves 22] [--rounds 3]

Every round starts its own Redis. Compare two commits with a worktree of the older one, run the
same way, interleaved (A/B/A/B): the per-commit figures are what changes.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from kit.redis.keys import meta_key
from kit.redis.layer import RedisLayer
from kit.server import install_event_loop
from services.host.store import ClockArm, GameStore, NewEvent
from tools.redis_server import start_redis


async def redis_cpu(layer: RedisLayer) -> float:
    info: Any = await layer.client.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


async def play(store: GameStore, game_id: str, moves: int) -> None:
    await store.create(
        game_id=game_id,
        request_id=f"c-{game_id}",
        game="connect4",
        seats=2,
        options=b"",
        state=b"s" * 40,
        created=NewEvent("1-0", b"e" * 30),
        response=b"r" * 20,
        publish=b"p" * 40,
    )
    for version in range(moves):
        over = version == moves - 1
        await store.commit(
            game_id=game_id,
            expected_version=version,
            request_id=f"m{version}-{game_id}",
            state=b"s" * 40,
            events=(NewEvent(f"{version + 2}-0", b"e" * 30),),
            response=b"r" * 60,
            over=over,
            publish=b"p" * 80,
            action=b"a" * 12,
            status=b"t" * 10,
            digest=b"d" * 16,
            clock=ClockArm(
                to_act="" if over else str((version + 1) % 2),
                per_move_ms=30_000,
                now_ms=int(time.time() * 1000),
                ttl_s=3600,
                keep_meta=True,
            ),
        )


async def one_round(games: int, moves: int) -> tuple[float, float, dict[str, float]]:
    redis = start_redis()
    try:
        layer = RedisLayer.connect(redis.url)
        store = GameStore(layer, live_ttl_s=7 * 24 * 3600, finished_ttl_s=3600)
        for g in range(games):  # the gateway's metadata key, which the commit keeps alive
            await layer.call("HSET", meta_key(f"g{g}"), "g", "connect4")
        await play(store, "warm", 2)
        await layer.client.config_resetstat()
        before = await redis_cpu(layer)
        own = time.process_time()
        await asyncio.gather(*(play(store, f"g{g}", moves) for g in range(games)))
        own = time.process_time() - own
        used = await redis_cpu(layer) - before
        stats: Any = await layer.client.info("commandstats")
        commits = games * moves
        per = {name.removeprefix("cmdstat_"): int(row["calls"]) / commits for name, row in stats.items()}
        await layer.close()
        return used / commits * 1e6, own / commits * 1e6, per
    finally:
        redis.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--moves", type=int, default=22)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    costs, owns = [], []
    per: dict[str, float] = {}
    for _ in range(args.rounds):
        cost, own, per = await one_round(args.games, args.moves)
        costs.append(cost)
        owns.append(own)
        print(f"per commit: redis CPU {cost:.1f} µs, caller CPU {own:.1f} µs", flush=True)
    print(
        f"median per commit (create included): redis {statistics.median(costs):.1f} µs, "
        f"caller {statistics.median(owns):.1f} µs"
    )
    print("commands per commit: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(per.items()) if v >= 0.01))


if __name__ == "__main__":
    install_event_loop()  # as the servers run
    asyncio.run(main())
