"""The kit's hand-written stand-ins against the library part each replaces, in one process,
alternated round by round: what each costs a use, and what that is per move.

    .venv/bin/python -m tools.bench_stand_ins [--ops 200000] [--rounds 5]

- kit/mailbox.py Mailbox against asyncio.Queue: one reader drains what producers queued, the way a
  rules stream's writer and a Play stream's writer do (put_nowait; the reader's get, then everything
  else queued: get_many, or get_nowait until empty for the Queue), in bursts of --burst items.
- kit/slots.py Slots against asyncio.Semaphore: one taker takes a slot per action, other tasks give
  them back (a rules stream's reader bounding what it has in flight).

Prints µs per use for each, its median over the rounds and the ratio library / stand-in; what a
move uses of each (--per-move) turns the difference into µs a move, to set beside the CPU a move
costs the gateway and the rules service together (tools/bench_gateway.py prints it).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

from kit.mailbox import Mailbox
from kit.slots import Slots


async def mailbox_drain(ops: int, burst: int) -> float:
    loop = asyncio.get_running_loop()
    box: Mailbox[int] = Mailbox(loop)
    got = 0

    async def reader() -> None:
        nonlocal got
        while got < ops:
            await box.get()
            got += 1 + len(box.get_many())

    task = loop.create_task(reader())
    start = time.perf_counter()
    for i in range(0, ops, burst):
        for j in range(burst):
            box.put_nowait(i + j)
        await asyncio.sleep(0)
    await task
    return time.perf_counter() - start


async def queue_drain(ops: int, burst: int) -> float:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[int] = asyncio.Queue()
    got = 0

    async def reader() -> None:
        nonlocal got
        while got < ops:
            await queue.get()
            got += 1
            while not queue.empty():
                queue.get_nowait()
                got += 1

    task = loop.create_task(reader())
    start = time.perf_counter()
    for i in range(0, ops, burst):
        for j in range(burst):
            queue.put_nowait(i + j)
        await asyncio.sleep(0)
    await task
    return time.perf_counter() - start


async def slots_take(ops: int, burst: int) -> float:
    slots = Slots(asyncio.get_running_loop(), burst)
    start = time.perf_counter()
    for _ in range(0, ops, burst):
        for _ in range(burst):
            if not slots.try_take():
                await slots.take()
        for _ in range(burst):
            slots.release()
    return time.perf_counter() - start


async def semaphore_take(ops: int, burst: int) -> float:
    semaphore = asyncio.Semaphore(burst)
    start = time.perf_counter()
    for _ in range(0, ops, burst):
        for _ in range(burst):
            await semaphore.acquire()
        for _ in range(burst):
            semaphore.release()
    return time.perf_counter() - start


Timed = Callable[[int, int], Awaitable[float]]
# (name, stand-in, library, uses a move makes of it: gateway and rules service together)
PAIRS: list[tuple[str, Timed, Timed, int]] = [
    ("queue (Mailbox / asyncio.Queue)", mailbox_drain, queue_drain, 4),
    ("slots (Slots / asyncio.Semaphore)", slots_take, semaphore_take, 1),
]


async def main(ops: int, rounds: int, burst: int) -> None:
    for name, stand_in, library, per_move in PAIRS:
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(rounds):
            ours.append(await stand_in(ops, burst) / ops * 1e6)
            theirs.append(await library(ops, burst) / ops * 1e6)
        a, b = statistics.median(ours), statistics.median(theirs)
        print(
            f"{name}: stand-in {a:.3f} µs, library {b:.3f} µs a use (medians of {rounds}), "
            f"library/stand-in {b / a:.2f}x; at {per_move} uses a move: {(b - a) * per_move:+.2f} µs a move"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--burst", type=int, default=8, help="items queued (slots taken) between the reader's turns")
    args = parser.parse_args()
    asyncio.run(main(args.ops, args.rounds, args.burst))
