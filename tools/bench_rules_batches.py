"""The rules service's own CPU per action, without gRPC: Connect Four's RulesServicer.ApplyMoves
driven in this process with batches as the gateway sends them (11 actions a message by default,
turn clock armed), against a fresh Redis. The games are played out beforehand, so this process's
CPU is the servicer's (checks, rules, encoding, the commit's RESP and the pipe's socket calls) and
little else; Redis runs in its own process.

    .venv/bin/python -m tools.bench_rules_batches [--games 330] [--batch 11] [--rounds 6]

Prints this process's CPU per action for each round (the first one warms up and is left out of
the median). Compare two commits from a clone of each, run the same way, interleaved (A/B/A/B).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import AsyncIterator
from typing import Any

from tafel.rules.v1 import rules_pb2
from tafel_rules.connect4 import RULES, Options

from kit.redis.keys import meta_key
from kit.redis.layer import RedisLayer
from kit.server import install_event_loop
from services.connect4.codec import CODEC
from services.host.metrics import RulesMetrics
from services.host.service import RulesServicer
from services.host.store import GameStore
from tools.redis_server import start_redis


class _Context:
    async def send_initial_metadata(self, metadata: Any) -> None:
        pass


def playout(rng: random.Random) -> list[tuple[int, int]]:
    """(seat, column) of one random game to its end."""
    state = RULES.new_game(Options(), 2, 0)
    moves = []
    while state.outcome is None:
        move = rng.choice(list(RULES.legal_moves(state, state.to_move)))
        moves.append((state.to_move, move.column))
        state, _ = RULES.apply_move(state, state.to_move, move)
    return moves


def waves(games: list[str], rng: random.Random, ids: Any) -> list[list[rules_pb2.ApplyMovesRequest]]:
    """Every game's k-th move in wave k, as the stream entries that ask for them."""
    plans = {game_id: playout(rng) for game_id in games}
    out = []
    for k in range(max(len(plan) for plan in plans.values())):
        wave = []
        for game_id, plan in plans.items():
            if k < len(plan):
                seat, column = plan[k]
                entry = rules_pb2.ApplyMovesRequest(correlation_id=next(ids))
                request = entry.request
                request.game_id, request.seat, request.expected_version = game_id, seat, k
                request.request_id = f"r{k}-{game_id}"
                request.move.connect4.column = column
                request.turn_clock.per_move_ms, request.turn_clock.ttl_s = 30_000, 3600
                request.turn_clock.keep_alive.append(meta_key(game_id))
                wave.append(entry)
        out.append(wave)
    return out


async def run(games: int, batch: int, rounds: int) -> list[float]:
    redis = start_redis()
    layer = RedisLayer.connect(redis.url)
    try:
        store = GameStore(layer, live_ttl_s=7 * 24 * 3600, finished_ttl_s=3600)
        servicer: RulesServicer[Any, Any, Any, Any, Any] = RulesServicer(RULES, CODEC, store, RulesMetrics("connect4"))
        inbox: asyncio.Queue[rules_pb2.ApplyMovesRequest | None] = asyncio.Queue()

        async def requests() -> AsyncIterator[rules_pb2.ApplyMovesRequest]:
            while (message := await inbox.get()) is not None:
                yield message

        left = 0
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        refused = 0

        async def read() -> None:
            nonlocal left, refused
            async for raw in servicer.ApplyMoves(requests(), _Context()):
                # What a caller gets: answers are bytes (or messages before they were).
                data = raw if isinstance(raw, bytes) else raw.SerializeToString()
                answer = rules_pb2.ApplyMovesResponse.FromString(data)
                for one in answer.batch or (answer,):
                    refused += one.WhichOneof("result") == "refusal"
                    left -= 1
                    if left == 0:
                        done.set_result(None)

        reader = asyncio.get_running_loop().create_task(read())

        async def send(entries: list[rules_pb2.ApplyMovesRequest]) -> None:
            nonlocal left, done
            left, done = len(entries), asyncio.get_running_loop().create_future()
            for start in range(0, len(entries), batch):
                inbox.put_nowait(rules_pb2.ApplyMovesRequest(batch=entries[start : start + batch]))
            await done

        rng, ids = random.Random(1), iter(range(1, 1 << 62))
        per_action = []
        for round_ in range(rounds):
            game_ids = [f"b{round_}-{index}" for index in range(games)]
            planned = waves(game_ids, rng, ids)
            creations = []
            for game_id in game_ids:
                entry = rules_pb2.ApplyMovesRequest(correlation_id=next(ids))
                entry.create.game_id, entry.create.seats, entry.create.request_id = game_id, 2, "c"
                creations.append(entry)
            await send(creations)
            cpu, actions = time.process_time(), 0
            for wave in planned:
                await send(wave)
                actions += len(wave)
            used = (time.process_time() - cpu) / actions * 1e6
            print(f"round {round_}: {actions} actions, {used:.1f} µs CPU per action (this process)", flush=True)
            if round_:
                per_action.append(used)
        if refused:
            raise RuntimeError(f"{refused} actions refused: the bench is broken")
        inbox.put_nowait(None)
        await reader
        return per_action
    finally:
        await layer.close()
        redis.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=330)
    parser.add_argument("--batch", type=int, default=11, help="actions per stream message")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    install_event_loop()  # as the servers run
    per_action = asyncio.run(run(args.games, args.batch, args.rounds))
    low, high = min(per_action), max(per_action)
    print(f"median {statistics.median(per_action):.1f} µs per action (range {low:.1f}-{high:.1f})")


if __name__ == "__main__":
    main()
