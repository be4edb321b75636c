"""tafel-conformance: run the scenarios against a client program and print a report.

    tafel-conformance --client "python -m tafel.conformance.reference_client"
    tafel-conformance --client ./my-client --server 127.0.0.1:50051 --scenario resign --json report.json

Without --server it starts a platform of its own on loopback (Redis, the rules services, two
gateways; as `make run` does) and stops it at the end; gateway-restart needs that platform (it
kills a gateway mid-game), so against --server it runs only when asked for. Exit status 0 when every scenario passed."""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import shlex
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

from tafel.conformance.catalog import SCENARIOS, run_scenario
from tafel.conformance.scenarios import OWN_PLATFORM, Result, Settings

if TYPE_CHECKING:
    from tools.platform import Platform


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tafel-conformance", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--client", required=True, help="the client's command line (the kit appends its arguments)")
    parser.add_argument("--server", help="a running gateway, HOST:PORT (default: start a platform)")
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), help="run only these (repeatable)")
    parser.add_argument("--json", help="also write the report as JSON to this file ('-' = stdout)")
    parser.add_argument("--clock-s", type=float, default=None, help="per-move time of act-before-clock")
    parser.add_argument("--timeout-s", type=float, default=60.0, help="per scenario")
    return parser.parse_args(argv)


def report(results: Sequence[Result]) -> str:
    width = max(len(r.name) for r in results)
    lines = [f"{'PASS' if r.passed else 'FAIL'}  {r.name:<{width}}  {r.seconds:5.1f} s  {r.reason}" for r in results]
    passed = sum(r.passed for r in results)
    lines.append(f"{passed}/{len(results)} scenarios passed")
    return "\n".join(lines)


def as_json(results: Sequence[Result]) -> str:
    return json.dumps({"passed": all(r.passed for r in results), "scenarios": [asdict(r) for r in results]}, indent=2)


async def run_all(settings: Settings, names: Sequence[str]) -> list[Result]:
    # One at a time: a scenario's timing (clocks, simultaneous rounds) must not depend on another's load.
    return [await run_scenario(name, settings) for name in names]


class PlatformGateways:
    """The kit's own platform's gateways, killed and restarted by name (tools/platform.py)."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self.addresses = list(platform.gateway_addresses)

    def kill(self, index: int) -> None:
        self.platform.kill(f"gateway-{index}")

    def restart(self, index: int) -> None:
        self.platform.restart(f"gateway-{index}")


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    names = args.scenario or [n for n in SCENARIOS if args.server is None or n not in OWN_PLATFORM]
    platform = None
    server = args.server
    if server is None:
        from tools.platform import Platform  # the platform's own launcher: present in a tafel checkout

        env = {
            "TAFEL_TOKEN_SECRET": secrets.token_hex(32),
            "TAFEL_LOG_LEVEL": "WARNING",
            "TAFEL_GRACE_S": "1",
            "TAFEL_MIN_PER_MOVE_S": "0.5",  # lets act-before-clock use a short clock
        }
        # Two gateways: gateway-restart kills one mid-game while the other carries on.
        platform = Platform(gateways=2, fixed_ports=False, extra_env=env, bot_pool=False).start()
        server = platform.gateway_addresses[0]
    clock_s = args.clock_s if args.clock_s is not None else (2.0 if platform is not None else 5.0)
    settings = Settings(
        gateway=server,
        client=shlex.split(args.client),
        clock_s=clock_s,
        timeout_s=args.timeout_s,
        gateways=PlatformGateways(platform) if platform is not None else None,
    )
    try:
        results = asyncio.run(run_all(settings, names))
    finally:
        if platform is not None:
            platform.stop()
    print(report(results))
    if args.json == "-":
        print(as_json(results))
    elif args.json:
        with open(args.json, "w") as out:
            out.write(as_json(results) + "\n")
    sys.exit(0 if all(r.passed for r in results) else 1)


if __name__ == "__main__":
    main()
