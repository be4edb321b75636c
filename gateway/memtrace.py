"""A benchmark-only view of the gateway's Python allocations (tools/bench_connection_cost.py).

With TAFEL_TRACEMALLOC=on the gateway starts `tracemalloc` before it builds anything and writes a
snapshot to TAFEL_TRACEMALLOC_FILE each time it gets SIGUSR2 (written beside and renamed, so a
reader never sees half a file). Off by default: tracing every allocation costs CPU and memory of
its own, so a deployment never turns it on."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import tracemalloc

log = logging.getLogger("tafel.gateway")
FRAMES = 1  # the allocating line only: enough for a per-line breakdown, and the cheapest to trace


def start(path: str) -> None:
    """Trace allocations from now on; dump a snapshot to `path` on every SIGUSR2 (the running loop's)."""
    tracemalloc.start(FRAMES)
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR2, dump, path)
    log.info("tracemalloc on", extra={"file": path})


def dump(path: str) -> None:
    partial = f"{path}.partial"
    tracemalloc.take_snapshot().dump(partial)
    os.replace(partial, path)
