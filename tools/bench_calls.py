"""`python -m tools.bench_calls`: how many Python-level calls the gateway and the Connect Four rules
service make per move under load — a count, where CPU seconds on this shared machine move ±10 %.

Starts the platform as `tools.bench_load` does, has the load generator play G games, and after a
warm-up profiles the gateway's and the rules service's event-loop threads with cProfile for a
window (tools/callcensus/sitecustomize.py, signalled). A move is counted where each process
handles one action exactly once (the gateway's `Actions.apply`, the rules store's `commit_args`).
Printed per process: calls per move in all, those of this repository's own functions, and the
functions called most often a move.

cProfile counts every call of a Python function, every resumption of a coroutine or generator
(a coroutine that awaits once counts twice) and every call of a builtin or C method; its own cost
makes the times it reports useless (a call costs ~1 µs under it, ~0.05-0.3 µs without), so only
the counts are printed. They are exact for the window and move little between runs: compare two
commits' counts to see what a change removed from the move path.
"""

from __future__ import annotations

import argparse
import os
import pstats
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tools.bench_load import load_in_background, window_arguments
from tools.platform import ROOT, Platform

CENSUS_SITE = ROOT / "tools" / "callcensus"
# (process name prefix, (file suffix, function) called once per move)
ANCHORS = {
    "gateway": ("gateway/actions.py", "apply"),
    "connect4": ("services/host/store.py", "commit_args"),
}
OWN_ROOTS = ("gateway/", "services/", "kit/", "clients/")


@dataclass
class Census:
    moves: int
    calls: int
    own: int
    rows: list[tuple[int, str]]  # (calls, "file:line function"), most first


def census(path: Path, anchor: tuple[str, str]) -> Census:
    stats = pstats.Stats(str(path))
    rows: list[tuple[int, str]] = []
    moves = 0
    own = 0
    root = str(ROOT) + os.sep
    for (file, line, function), (_, calls, _, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        name = file.removeprefix(root)
        if "site-packages/" in name:
            name = name.split("site-packages/", 1)[1]
        if name.endswith(anchor[0]) and function == anchor[1]:
            moves = calls
        if name.startswith(OWN_ROOTS):
            own += calls
        rows.append((calls, f"{name}:{line} {function}" if line else function))
    rows.sort(reverse=True)
    return Census(moves=moves, calls=sum(calls for calls, _ in rows), own=own, rows=rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    window_arguments(parser, games=100, warm_up_s=8.0, window_s=6.0)
    parser.add_argument("--top", type=int, default=30, help="functions listed per process")
    parser.add_argument(
        "--keep", type=Path, help="copy each process's cProfile dump here (<name>.prof: pstats' callers and callees)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tafel-census-") as out:
        path = os.pathsep.join(filter(None, [str(CENSUS_SITE), os.environ.get("PYTHONPATH")]))
        extra = {"PYTHONPATH": path, "TAFEL_CALL_CENSUS": out}
        platform = Platform(gateways=1, fixed_ports=False, bot_pool=False, games=("connect4",), extra_env=extra)
        platform.start()
        try:
            targets = {
                prefix: child for child in platform.children for prefix in ANCHORS if child.name.startswith(prefix)
            }
            duration = args.warm_up + args.window + 5.0
            with load_in_background(platform.gateway_addresses[0], args.games, duration):
                time.sleep(args.warm_up)
                for child in targets.values():
                    os.kill(child.process.pid, signal.SIGUSR1)
                time.sleep(args.window)
                for child in targets.values():
                    os.kill(child.process.pid, signal.SIGUSR2)
                time.sleep(1.0)  # the dumps are written on the processes' main threads
        finally:
            platform.stop()
        print(f"{args.games} games, a {args.window:.0f} s window after {args.warm_up:.0f} s of play")
        for prefix, child in targets.items():
            dump = Path(out) / f"{child.process.pid}.prof"
            if not dump.exists():
                print(f"{prefix}: no profile written")
                continue
            if args.keep is not None:
                args.keep.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(dump, args.keep / f"{prefix}.prof")
            found = census(dump, ANCHORS[prefix])
            if not found.moves:
                print(f"{prefix}: no move in the window")
                continue
            per = found.moves
            print(
                f"{prefix}: {found.moves:,} moves; {found.calls / per:.1f} Python-level calls a move, "
                f"{found.own / per:.1f} of them this repository's functions"
            )
            for calls, name in found.rows[: args.top]:
                print(f"  {calls / per:7.2f}  {name}")


if __name__ == "__main__":
    main()
