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

With `--level3` it instead checks the level-3 bot (opening book, compiled solver, fallbacks as it
plays) against exact scores from the compiled solver: every reference position, and
`--per-count` random positions for each disc count in `--discs` (random legal moves that do not end
the game). Each move is timed from a cold transposition table (`--warm` keeps the table between
positions, as in a game). A move is optimal when it keeps the game's result (win, draw or loss);
"exact" counts the moves that also keep the exact score (checked within `--exact-seconds`).
Positions whose result solve runs past `--check-seconds` are counted as unchecked, not as optimal.
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

from tafel.bots.connect4 import EXACT_REMAINING, Connect4Bot, Engine, board_at, position_from_moves  # noqa: E402
from tafel.bots.connect4_native import NativeSolver, load  # noqa: E402

SETS = ("Test_L3_R1", "Test_L2_R1")
LINE = 46


def load_set(name: str) -> list[tuple[str, int]]:
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


def random_position(engine: Engine, rng: random.Random, discs: int) -> tuple[int, int] | None:
    """A position after `discs` random moves that do not end the game (None if play got stuck)."""
    current = mask = 0
    for _ in range(discs):
        options = [c for c in range(engine.width) if engine.can_play(mask, c) and not engine.is_win(current, mask, c)]
        if not options:
            return None
        current, mask = engine.play(current, mask, rng.choice(options))
    return current, mask


class Level3Check:
    """Times the level-3 bot's move and checks it against the compiled solver's exact scores."""

    def __init__(self, solver: NativeSolver, check_seconds: float, warm: bool, exact_seconds: float = 1.0) -> None:
        self.engine = Engine()
        self.solver = solver
        self.check_seconds = check_seconds
        self.exact_seconds = exact_seconds
        self.warm = warm
        self.bot = Connect4Bot(3)

    def value(self, current: int, mask: int, nb: int) -> tuple[int | None, int | None]:
        """(exact score, result sign) of a position that is not over; None where it ran too long
        (the result within `check_seconds`, then the exact score within `exact_seconds`)."""
        sign = self.solver.solve(current, mask, nb, weak=True, max_seconds=self.check_seconds)
        if sign is None:
            return None, None
        return self.solver.solve(current, mask, nb, max_seconds=self.exact_seconds), sign

    def check(self, current: int, mask: int, nb: int) -> tuple[float, str, int]:
        """The move's time, its verdict ("exact", "result" (keeps the result only), "book" (from
        the book, proven when it was built), "wrong" or "unchecked") and the column."""
        e = self.engine
        if not self.warm:
            self.solver.clear()
        started = time.perf_counter()
        column = self.bot.move_for(board_at(e, current, mask, nb))
        elapsed = time.perf_counter() - started
        if e.is_win(current, mask, column):
            # a win now is the best score there is (22 minus the disc count)
            return elapsed, "exact", column
        if self.bot.book is not None and self.bot.book.lookup(current, mask) is not None:
            # proven when the book was built (unbounded solves); re-solving the first plies here
            # would take minutes a position
            return elapsed, "book", column
        score, sign = self.value(current, mask, nb)
        child_current, child_mask = e.play(current, mask, column)
        if nb + 1 == e.size:
            child_score: int | None = 0
            child_sign: int | None = 0
        elif e.winning_cells(child_current, child_mask) & (child_mask + e.bottom) & e.board:
            child_score, child_sign = (e.size + 1 - nb - 1) >> 1, 1
        else:
            child_score, child_sign = self.value(child_current, child_mask, nb + 1)
        if score is not None and child_score is not None:
            if -child_score == score:
                return elapsed, "exact", column
        if sign is None or child_sign is None:
            return elapsed, "unchecked", column
        return elapsed, "result" if -child_sign == sign else "wrong", column


def level3_row(label: str, times: list[float], verdicts: list[str]) -> None:
    if not times:
        return
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    n = len(verdicts)
    exact, result, book, wrong, unchecked = (
        verdicts.count(v) for v in ("exact", "result", "book", "wrong", "unchecked")
    )
    good = exact + result + book
    print(
        f"{label:<14} n={n:5d}  optimal {good:5d} ({good / n:6.1%}, exact score {exact:5d}, book {book:4d})"
        f"  wrong {wrong:3d}  unchecked {unchecked:3d}  mean {statistics.mean(times) * 1e3:6.2f} ms"
        f"  p99 {p99 * 1e3:6.1f} ms  max {ordered[-1] * 1e3:6.1f} ms",
        flush=True,
    )


def games(checker: Level3Check, count: int, rng: random.Random, opponent: str) -> int:
    """Level 3 against random legal moves (or level 2), first and second in turn: every move of the bot
    is checked (book moves count as proven when the book was built, and are listed apart), each
    from a cold table as with the random positions (in a game the bot's table is warm from its
    earlier moves: the figures are pessimistic)."""
    e = checker.engine
    times: list[float] = []
    verdicts: list[str] = []
    other = Connect4Bot(2, seed=rng.randrange(1 << 30))
    for game in range(count):
        current = mask = nb = 0
        bot_turn = game % 2 == 0
        while nb < e.size:
            if bot_turn:
                elapsed, verdict, column = checker.check(current, mask, nb)
                times.append(elapsed)
                verdicts.append(verdict)
            elif opponent == "level2":
                column = other.move_for(board_at(e, current, mask, nb))
            else:
                column = rng.choice([c for c in range(e.width) if e.can_play(mask, c)])
            if e.is_win(current, mask, column):
                break
            current, mask = e.play(current, mask, column)
            nb += 1
            bot_turn = not bot_turn
    level3_row(f"{count} v {opponent}", times, verdicts)
    return verdicts.count("wrong")


def level3(args: argparse.Namespace) -> int:
    solver = load()
    if solver is None:
        print("the compiled solver is not built: run `make native`", file=sys.stderr)
        return 2
    checker = Level3Check(solver, args.check_seconds, args.warm, args.exact_seconds)
    engine = checker.engine
    print(
        f"Connect Four level 3, {'warm' if args.warm else 'cold'} table, checks up to {args.check_seconds:g} s"
        f" a solve, book of {len(checker.bot.book or ())} positions"
    )
    wrong = 0
    for name in SETS:
        times: list[float] = []
        verdicts: list[str] = []
        for moves, _ in load_set(name)[: args.limit]:
            elapsed, verdict, _ = checker.check(*position_from_moves(engine, moves))
            times.append(elapsed)
            verdicts.append(verdict)
        level3_row(name, times, verdicts)
        wrong += verdicts.count("wrong")
    if args.games:
        wrong += games(checker, args.games, random.Random(args.seed), args.opponent)
    low, _, high = args.discs.partition("-")
    rng = random.Random(args.seed)
    for discs in range(int(low), int(high or low) + 1):
        times, verdicts = [], []
        while len(times) < args.per_count:
            found = random_position(engine, rng, discs)
            if found is None:
                continue
            elapsed, verdict, _ = checker.check(found[0], found[1], discs)
            times.append(elapsed)
            verdicts.append(verdict)
        level3_row(f"{discs} discs", times, verdicts)
        wrong += verdicts.count("wrong")
    return 1 if wrong else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="positions per set (default: all)")
    parser.add_argument("--positions", type=int, default=300, help="generated positions 14 moves from the end")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--level3", action="store_true", help="check the level-3 bot's moves instead")
    parser.add_argument("--discs", default="0-30", help="disc counts for --level3, e.g. 0-30 or 12")
    parser.add_argument("--per-count", type=int, default=100, help="random positions per disc count")
    parser.add_argument("--check-seconds", type=float, default=20.0, help="limit of one checking result solve")
    parser.add_argument("--exact-seconds", type=float, default=1.0, help="limit of one checking exact solve")
    parser.add_argument("--warm", action="store_true", help="keep the table between positions")
    parser.add_argument("--games", type=int, default=0, help="also play this many games against --opponent")
    parser.add_argument("--opponent", choices=("random", "level2"), default="random")
    args = parser.parse_args(argv)
    if args.level3:
        return level3(args)

    engine = Engine()
    failures = 0
    near_end: list[str] = []
    print(f"Connect Four solver, Python {sys.version.split()[0]}, one core, cold table per position")
    for name in SETS:
        rows = load_set(name)[: args.limit]
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

    starts = [m for m, _ in load_set("Test_L2_R1") if len(m) < engine.size - EXACT_REMAINING]
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
