"""gRPC's socket reads and writes on the thread that waits for its completions, not on a pool.

grpcio 1.85 reads and writes a server's and a channel's sockets on EventEngine's own threads (its
experiments ``event_engine_listener`` and ``event_engine_client``, on by default), and grpc.aio
then hands each completion from its poller thread to the event loop: a message crosses two threads
before the loop sees it. With the two experiments off, gRPC's iomgr does the socket work on the
poller thread itself, while it waits for completions: one hand-over fewer a message, and fewer
context switches on a busy machine. Measured (docs/benchmarks.md, "gRPC's sockets on its own poller thread"): the Play
relay's floor 147-159 -> 111-122 µs a move; in the whole platform the gateway's context switches
4.3-5.5 -> 1.0-2.1 a move, its CPU a move 1-10 % lower (most of it is its own Python), the load
generator's 7-35 % lower.

gRPC reads GRPC_EXPERIMENTS once, when it is first imported, so this module does its work on import
and imports nothing but os: every entry point imports it before anything else (the gateway, the
rules services; the SDK's own copy, tafel/grpc_polling.py, serves the clients). A GRPC_EXPERIMENTS
that already names either experiment is left as it is; ``TAFEL_GRPC_EVENT_ENGINE=1`` keeps gRPC's
defaults (to compare: tools/bench_grpc_floor.py, tools/bench_load.py).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

EXPERIMENTS = "GRPC_EXPERIMENTS"
OPT_OUT = "TAFEL_GRPC_EVENT_ENGINE"
TURNED_OFF = ("event_engine_listener", "event_engine_client")


def experiments(current: str) -> str:
    """GRPC_EXPERIMENTS with TURNED_OFF turned off, unless it already says something about them."""
    named = {item.strip().lstrip("-") for item in current.split(",") if item.strip()}
    added = [f"-{name}" for name in TURNED_OFF if name not in named]
    return ",".join(item for item in (current.strip().strip(","), *added) if item)


def configure(environ: MutableMapping[str, str]) -> None:
    if environ.get(OPT_OUT, "") == "1":
        return
    environ[EXPERIMENTS] = experiments(environ.get(EXPERIMENTS, ""))


configure(os.environ)
