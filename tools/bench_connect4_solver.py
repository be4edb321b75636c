"""Benchmark of the Connect Four solver in tafel.bots.connect4 (the level-3 bot's engine).

    .venv/bin/python -m tools.bench_connect4_solver [--limit N] [--positions N] [--seed S]

For each of Pascal Pons' reference sets in tests/data/connect4/ (Test_L3_R1: end game, Test_L2_R1:
middle game; 1,000 positions each) it solves every position from an empty transposition table, checks
the published score and prints the mean, median, 99th-percentile and worst time per position and the
nodes searched. Then it times what the bot does with at most 14 moves to go, a perfect move (the
score, then the check of the chosen move), on every such reference position and on `--positions`
positions with exactly 14 moves to go, reached from the middle-game set by perfect play and by
random play. One process,
one thread: the figures are per core. Exit status 1 if any score differs.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "connect4"
if str(ROOT / "clients" / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "clients" / "python"))

from tafel.bots.connect4 import EXACT_REMAINING, Engine, position_from_moves  # noqa: E402

SETS = ("Test_L3_R1", "Test_L2_R1")
LINE = 46


def load(name: str) -> list[tuple[str, int]]:
    rows = []
    for line in (DATA / name).read_text().splitlines():
        if line.strip():
            moves, score = line.split()
            rows.append((moves, int(score)))
    return rows


def summary(label: str, times: list[float], nodes: list[int]) -> None:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(
        f"{label:<{LINE}} n={len(times):5d}  mean {statistics.mean(times) * 1e3:7.2f} ms"
        f"  median {statistics.median(times) * 1e3:6.2f} ms  p99 {p99 * 1e3:7.1f} ms"
        f"  worst {ordered[-1] * 1e3:7.1f} ms  nodes/pos {statistics.mean(nodes):8.0f}"
    )


def endgames(engine: Engine, starts: list[str], count: int, seed: int, perfect: bool) -> list[str]:
    """Positions with exactly EXACT_REMAINING moves to go, reached from middle-game positions by
    perfect play (the solver's own moves) or by random play that does not end the game."""
    rng = random.Random(seed)
    out: list[str] = []
    target = engine.size - EXACT_REMAINING
    tries = 0
    while len(out) < count and tries < count * 50:
        tries += 1
        moves = rng.choice(starts)
        current, mask, nb = position_from_moves(engine, moves)
        while nb < target:
            options = [c for c in range(engine.width) if engine.can_play(mask, c)]
            options = [c for c in options if not engine.is_win(current, mask, c)]
            if not options:
                break
            c = engine.analyse_exact(current, mask, nb).column if perfect else rng.choice(options)
            if c not in options:
                break
            current, mask = engine.play(current, mask, c)
            moves += str(c + 1)
            nb += 1
        if nb == target:
            out.append(moves)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="positions per set (default: all)")
    parser.add_argument("--positions", type=int, default=300, help="generated positions 14 moves from the end")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    engine = Engine()
    failures = 0
    near_end: list[str] = []
    print(f"Connect Four solver, Python {sys.version.split()[0]}, one core, cold table per position")
    for name in SETS:
        rows = load(name)[: args.limit]
        times: list[float] = []
        nodes: list[int] = []
        for moves, expected in rows:
            engine.reset()
            current, mask, nb = position_from_moves(engine, moves)
            started = time.perf_counter()
            score = engine.solve(current, mask, nb)
            times.append(time.perf_counter() - started)
            nodes.append(engine.nodes)
            if score != expected:
                failures += 1
                print(f"  WRONG {name} {moves}: published {expected}, solver {score}")
            if engine.size - nb <= EXACT_REMAINING:
                near_end.append(moves)
        summary(f"solve {name}", times, nodes)

    starts = [m for m, _ in load("Test_L2_R1") if len(m) < engine.size - EXACT_REMAINING]
    played = endgames(engine, starts, args.positions, args.seed, perfect=True)
    randoms = endgames(engine, starts, args.positions, args.seed, perfect=False)
    for label, positions in (
        (f"perfect move, reference, <= {EXACT_REMAINING} to go", near_end),
        (f"perfect move, after perfect play, {EXACT_REMAINING} to go", played),
        (f"perfect move, after random play, {EXACT_REMAINING} to go", randoms),
    ):
        if not positions:
            continue
        times, nodes = [], []
        for moves in positions:
            engine.reset()
            current, mask, nb = position_from_moves(engine, moves)
            started = time.perf_counter()
            engine.analyse_exact(current, mask, nb)
            times.append(time.perf_counter() - started)
            nodes.append(engine.nodes)
        summary(label, times, nodes)
        over = sum(1 for t in times if t > 0.1)
        print(f"{'':{LINE}} moves over 100 ms: {over}")
    if failures:
        print(f"{failures} scores differ from the published ones")
        return 1
    print("every score matches the published one")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
