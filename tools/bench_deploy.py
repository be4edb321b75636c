"""`make bench-deploy` (python -m tools.bench_deploy): the deploy's figures (docs/deploy.md).

- image sizes, and how long `make images` takes warm (bases and pip's cache there) and, with
  --cold, from nothing (the debootstrap bases removed first);
- compose up to the first game: `docker compose up --wait` from stopped, then two players matched
  and a first move acknowledged through the published port;
- the same load against the platform in containers (deploy/compose.yaml: 2 gateways, 1 replica of
  each rules service, Redis) and against `make run`'s processes in the same layout, interleaved
  in one run (this machine is noisy: compare the ratio, not the absolute figures): the load
  generator's Connect Four `games` scenario, --games concurrent games for --duration seconds,
  moves/s and p99.
Prints the figures and a JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tafel.client import TafelClient

from tools import images
from tools.bench_load import loadgen
from tools.platform import ROOT, Platform

COMPOSE = ["docker", "compose", "-f", str(ROOT / "deploy" / "compose.yaml")]
GATEWAYS = ["127.0.0.1:50051", "127.0.0.1:50052"]


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    began = time.monotonic()
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, timeout=1800)
    return round(time.monotonic() - began, 1)


def image_sizes() -> dict[str, int]:
    sizes = {}
    for tag in (images.TAFEL_IMAGE, images.REDIS_IMAGE):
        out = subprocess.run(
            ["docker", "image", "inspect", "--format", "{{.Size}}", f"{tag}:latest"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        sizes[tag] = round(int(out) / 2**20)
    return sizes


async def first_game(targets: list[str]) -> float:
    """Seconds until two players are matched and the first move is acknowledged."""
    began = time.monotonic()
    a, b = await TafelClient.connect(targets[0]), await TafelClient.connect(targets[-1])
    try:
        while True:
            try:
                await a.sign_in_as_guest()
                await b.sign_in_as_guest()
                break
            except Exception:
                if time.monotonic() - began > 120:
                    raise
                await asyncio.sleep(0.2)
        matches = await asyncio.gather(a.find_match("connect4"), b.find_match("connect4"))
        first = next(m for m in matches if m.seat == 0)
        mover = a if matches[0].seat == 0 else b
        from tafel.connect4.v1 import connect4_pb2

        await mover.wait_for_game(first.game_id)
        await mover.submit_move(first.game_id, connect4_pb2.Move(column=3), expected_version=0)
        return round(time.monotonic() - began, 2)
    finally:
        await a.close()
        await b.close()


@contextmanager
def compose_up(env: dict[str, str]) -> Iterator[float]:
    """The compose platform up; yields seconds from `up` to the first game."""
    began = time.monotonic()
    subprocess.run([*COMPOSE, "up", "--detach", "--wait"], env=env, check=True, capture_output=True, timeout=600)
    up_s = time.monotonic() - began
    try:
        yield round(up_s + asyncio.run(first_game(GATEWAYS)), 2)
    finally:
        subprocess.run([*COMPOSE, "down", "--volumes"], env=env, check=False, capture_output=True, timeout=300)


def load(targets: list[str], games: int, duration_s: float) -> dict[str, Any]:
    summary = loadgen(targets, "games", "--games", str(games), "--duration", str(duration_s))
    return {"moves_per_s": summary["moves_per_s"], "p99_ms": summary["latency_ms"]["p99"], "errors": summary["errors"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cold", action="store_true", help="also time `make images` from no base image")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds of containers / processes")
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {"games": args.games, "duration_s": args.duration}
    if args.cold:
        for base in (images.TAFEL_BASE, images.REDIS_BASE):
            subprocess.run(["docker", "image", "rm", "--force", base.tag], capture_output=True, check=False)
        figures["images_cold_s"] = timed([sys.executable, "-m", "tools.images"])
    figures["images_warm_s"] = timed([sys.executable, "-m", "tools.images"])
    figures["image_mib"] = image_sizes()
    env = {
        **os.environ,
        "COMPOSE_PROJECT_NAME": "tafel-bench",
        "TAFEL_TOKEN_SECRET": secrets.token_urlsafe(32),
        "TAFEL_INTERNAL_SECRET": secrets.token_urlsafe(32),
    }
    rounds: list[dict[str, Any]] = []
    for index in range(args.rounds):
        with compose_up(env) as first_s:
            figures.setdefault("compose_up_to_first_game_s", []).append(first_s)
            containers = load(GATEWAYS, args.games, args.duration)
        running = Platform(gateways=2, fixed_ports=False, bot_pool=False).start()
        try:
            time.sleep(1.0)
            processes = load(running.gateway_addresses, args.games, args.duration)
        finally:
            running.stop()
        ratio = (containers["moves_per_s"] or 0) / max(1e-9, processes["moves_per_s"] or 0)
        rounds.append({"containers": containers, "processes": processes, "moves_ratio": round(ratio, 2)})
        print(
            f"round {index + 1}: containers {containers}, make run {processes}, moves/s ratio {ratio:.2f}", flush=True
        )
    figures["rounds"] = rounds
    print(
        f"images: {figures['image_mib']} MiB; make images warm {figures['images_warm_s']} s"
        + (f", cold {figures['images_cold_s']} s" if args.cold else "")
    )
    print(f"compose up to the first game: {figures['compose_up_to_first_game_s']} s")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
