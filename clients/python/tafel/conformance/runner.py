"""tafel-conformance: run the scenarios against a client program and print a report.

    tafel-conformance --client ./my-client --server 127.0.0.1:50051
    tafel-conformance --client ./my-client --server 127.0.0.1:50051 --scenario resign --json report.json

--server names a running platform's gateway. In a tafel checkout, `.venv/bin/tafel-conformance`
(tools/conformance.py) may also leave it out: it then starts a platform of its own on loopback
(Redis, the rules services, two gateways) through `main(start_platform=...)` and stops it at the
end. gateway-restart needs such a platform (it kills a gateway mid-game), so against --server it
runs only when asked for. Exit status 0 when every scenario passed."""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Protocol

from tafel.conformance.catalog import SCENARIOS, run_scenario
from tafel.conformance.scenarios import OWN_PLATFORM, Gateways, Result, Settings


class OwnPlatform(Gateways, Protocol):
    """A platform the kit started for this run (two gateways or more), stopped at the end."""

    def stop(self) -> None: ...


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tafel-conformance", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--client", required=True, help="the client's command line (the kit appends its arguments)")
    parser.add_argument(
        "--server", help="a running gateway, HOST:PORT (a checkout's kit: default, a platform of its own)"
    )
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


def main(argv: Sequence[str] | None = None, start_platform: Callable[[], OwnPlatform] | None = None) -> None:
    """The console script. `start_platform` (given by a checkout's launcher, tools/conformance.py)
    starts a platform when --server is left out; the SDK alone needs --server."""
    args = parse(argv)
    if args.server is None and start_platform is None:
        sys.exit("tafel-conformance: --server HOST:PORT names the platform's gateway to check against")
    names = args.scenario or [n for n in SCENARIOS if args.server is None or n not in OWN_PLATFORM]
    platform = start_platform() if args.server is None and start_platform is not None else None
    server = args.server or (platform.addresses[0] if platform is not None else "")
    clock_s = args.clock_s if args.clock_s is not None else (2.0 if platform is not None else 5.0)
    settings = Settings(
        gateway=server,
        client=shlex.split(args.client),
        clock_s=clock_s,
        timeout_s=args.timeout_s,
        gateways=platform,
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
