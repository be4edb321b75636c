"""The body of one load-generator client process (importable, so `spawn` can start it)."""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any


def child(args: argparse.Namespace, index: int, share: int, queue: Any, board: Any = None) -> None:
    import gc

    gc.freeze()  # as the servers do (kit/server.py tune_gc): the collector was the latency tail
    gc.set_threshold(50_000, 50, 20)
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    from tafel_loadgen.games import run_games, run_pings

    if getattr(args, "client", "python") == "go":
        from tafel_loadgen.go_client import run_go_games

        queue.put(run_go_games(args, index, share, board).as_dict())
        return
    targets = args.gateways.split(",")
    cpu_before = time.process_time()
    if args.scenario == "games":
        # Its own CPU inside the measured window (run_games notes it), beside the servers'.
        stats = asyncio.run(
            run_games(
                targets,
                args.game,
                share,
                args.think,
                args.duration,
                args.seed + index,
                args.seats,
                board,
                own_connections=not args.shared_connection,
            )
        )
    else:
        stats = asyncio.run(run_pings(targets, share, args.duration, own_connections=not args.shared_connection))
        # Its own CPU, printed beside the servers': it shares the machine's cores with them.
        stats.client_cpu_s = time.process_time() - cpu_before
    queue.put(stats.as_dict())
