"""`python -m tools.bench_storm`: how fast a gateway takes a burst of new clients in, idle and
while games run (a reconnect storm: a gateway stopped, its players moving to another).

N clients, each with a TCP connection of its own, sign in as guests at once: first on an idle
platform, then while the load generator plays G games on it. Prints when the last and the median
one were in. Compare runs of one invocation only (the machine is shared); TAFEL_ACCEPTORS in the
environment sets the gateway's servers on its port (kit/server.py ServerGroup)."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time

from tafel.client import TafelClient

from tools.platform import ROOT, Platform


async def storm(address: str, clients: int) -> tuple[float, float]:
    """Seconds until every client, and the median one, had signed in."""
    started = time.monotonic()
    done: list[float] = []
    connected: list[TafelClient] = []

    async def one() -> None:
        client = await TafelClient.connect(address, own_connection=True)
        connected.append(client)
        await client.sign_in_as_guest()
        done.append(time.monotonic() - started)

    try:
        await asyncio.gather(*(one() for _ in range(clients)))
    finally:
        await asyncio.gather(*(client.close() for client in connected))
    done.sort()
    return done[-1], done[len(done) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=300, help="clients signing in at once")
    parser.add_argument("--games", type=int, default=200, help="games running during the second storm")
    parser.add_argument("--warm-up", type=float, default=12.0, help="seconds of play before the second storm")
    args = parser.parse_args()
    platform = Platform(gateways=1, fixed_ports=False, bot_pool=False).start()
    try:
        address = platform.gateway_addresses[0]
        time.sleep(1.0)
        last, median = asyncio.run(storm(address, args.clients))
        print(f"idle: {args.clients} sign-ins at once, all in {last:.2f} s (median {median:.2f} s)", flush=True)
        duration = args.warm_up + 30.0  # outlasts the storm
        command = [sys.executable, "-m", "tafel_loadgen", "--gateways", address, "games"]
        command += ["--games", str(args.games), "--duration", str(duration)]
        load = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(args.warm_up)
            last, median = asyncio.run(storm(address, args.clients))
            print(
                f"{args.games} games running: {args.clients} sign-ins at once, all in {last:.2f} s "
                f"(median {median:.2f} s)",
                flush=True,
            )
        finally:
            load.terminate()
            load.wait(timeout=30)
    finally:
        platform.stop()


if __name__ == "__main__":
    main()
