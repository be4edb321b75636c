"""Builds the level-3 Connect Four bot's opening book (clients/python/tafel/bots/connect4_book.txt).

    make native && .venv/bin/python -m tools.build_connect4_book [--plies N] [--strong-seconds S]

The book holds the bot's move in every position it can reach with fewer than `--plies` discs on the
board: its own moves fixed (the ones the book chooses), every opponent reply, for the bot moving
first and moving second. Each position is solved with the compiled solver (connect4_solver.c): the
exact best score when that finishes within `--strong-seconds`, otherwise a move that keeps the
game's result (win, draw or loss), which is always searched to the end. Positions are keyed by
the smaller of a position and its mirror image, so a mirrored line shares its entries.

The walk is depth first (the solver's transposition table, shared by the whole run, then helps the
positions below), and the file is rewritten every `--save-every` new positions: an interrupted run
keeps its work, and the next run starts from the entries already in the file (`--fresh` ignores
them). Cost: the first positions are the hardest (a full solve of the game from the start); the
run prints each new position's time.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "clients" / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "clients" / "python"))

from tafel.bots.connect4 import Engine  # noqa: E402
from tafel.bots.connect4_book import BOOK_FILE, Book, canonical  # noqa: E402
from tafel.bots.connect4_native import Best, NativeSolver, load  # noqa: E402

HEURISTIC_NODES = 20_000  # the heuristic search's budget for a lost position's move
HEADER = """# Connect Four 7x6 opening book of the level-3 bot (tafel.bots.connect4_book).
# Made by tools/build_connect4_book.py {args}
# "plies F S": every position the bot reaches with fewer discs than F moving first, S moving second
# key(hex, canonical current+mask) column(0-6, for the keyed orientation) s|w score
"""


class Builder:
    def __init__(
        self, solver: NativeSolver, plies: int, strong_seconds: float, entries: dict[int, tuple[int, int, bool]]
    ):
        self.engine = Engine()
        self.solver = solver
        self.plies = plies
        self.strong_seconds = strong_seconds
        self.entries = entries
        self.new = 0
        self.weak = 0
        self.on_new: Callable[[], None] = lambda: None

    def book_move(self, current: int, mask: int) -> tuple[int, int] | None:
        """(column, score) of the entry for this position, the column as for this orientation."""
        key, flipped = canonical(current, mask)
        found = self.entries.get(key)
        if found is None:
            return None
        return (6 - found[0] if flipped else found[0]), found[1]

    def choose(self, current: int, mask: int, nb: int, line: str, lost: bool = False) -> int:
        """The bot's column here (from the book when known, else solved and recorded). `lost`: the
        position is known to be lost (the other seat's book wins by the move into it): every move
        keeps that result, so only the exact score is tried."""
        key, flipped = canonical(current, mask)
        found = self.entries.get(key)
        if found is None:
            started = time.perf_counter()
            # the result first (always to the end), then the exact score within its budget: the
            # first search leaves the table warm for the second
            weak: Best | None
            if lost:
                weak = Best(self.resisting_column(current, mask), -1, 0)
            else:
                weak = self.solver.best(current, mask, nb, weak=True)
            assert weak is not None  # unbounded
            best = self.solver.best(current, mask, nb, max_seconds=self.strong_seconds)
            exact = best is not None
            if best is None:
                best = weak
                self.weak += 1
                if weak.score < 0:
                    # lost, the length unknown: every move keeps the loss, so the heuristic's
                    # (node-bounded, so the same on every run) leaves a fallible opponent the
                    # most ways to go wrong; the bot then stays inside the book
                    h = self.engine.analyse_heuristic(current, mask, nb, max_nodes=HEURISTIC_NODES)
                    best = Best(h.column, -1, h.nodes)
            column = 6 - best.column if flipped else best.column
            found = (column, best.score, exact)
            self.entries[key] = found
            self.new += 1
            print(
                f"{len(self.entries):6d}  {line or '(empty)':<{self.plies}}  col {best.column + 1}"
                f"  {'score' if exact else 'result'} {best.score:+d}  {time.perf_counter() - started:7.2f} s",
                flush=True,
            )
            self.on_new()
        column, _, _ = found
        return 6 - column if flipped else column

    def walk(self, current: int, mask: int, nb: int, line: str, lost: bool = False) -> None:
        """Every position from here where the bot (to move) has fewer than `plies` discs placed."""
        e = self.engine
        if nb >= self.plies:
            return
        if e.winning_cells(current, mask) & (mask + e.bottom) & e.board:
            return  # it wins at once: the bot needs no book for that
        column = self.choose(current, mask, nb, line, lost)
        if e.is_win(current, mask, column):
            return
        current, mask = e.play(current, mask, column)
        line += str(column + 1)
        for reply in e.order:
            if not e.can_play(mask, reply) or e.is_win(current, mask, reply):
                continue
            if nb + 2 > e.size:
                continue
            after_current, after_mask = e.play(current, mask, reply)
            self.walk(after_current, after_mask, nb + 2, line + str(reply + 1), self.wins_by(current, mask, reply))

    def resisting_column(self, current: int, mask: int) -> int:
        """The most central move that does not lose at once (a block if one is forced)."""
        e = self.engine
        possible = (mask + e.bottom) & e.board
        threats = e.winning_cells(current ^ mask, mask)
        moves = (possible & threats) or (possible & ~(threats >> 1)) or possible
        return next(c for c in e.order if moves & e.column_masks[c])

    def wins_by(self, current: int, mask: int, column: int) -> bool:
        """Whether the book has `column` as a winning move here (the other seat's entry)."""
        found = self.book_move(current, mask)
        return found is not None and found[0] == column and found[1] > 0

    def run(self, sides: str = "both", after_pass: Callable[[int], None] = lambda plies: None) -> None:
        """One pass per disc count, shallowest first (each pass finds the positions of the last one
        in the book and adds one ply), so an interrupted run leaves whole plies covered."""
        e = self.engine
        target = self.plies
        for plies in range(1, target + 1):
            self.plies = plies
            if sides in ("both", "first"):
                self.walk(0, 0, 0, "")  # the bot moves first
            if sides in ("both", "second"):
                for first in e.order:  # the bot moves second (mirror images share their entries)
                    current, mask = e.play(0, 0, first)
                    self.walk(current, mask, 1, str(first + 1), self.wins_by(0, 0, first))
            after_pass(plies)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plies", type=int, default=8, help="book positions have fewer discs than this")
    parser.add_argument("--strong-seconds", type=float, default=5.0, help="time for the exact score")
    parser.add_argument("--out", type=Path, default=BOOK_FILE)
    parser.add_argument("--save-every", type=int, default=1)
    parser.add_argument("--fresh", action="store_true", help="ignore the entries already in --out")
    parser.add_argument(
        "--sides",
        choices=("both", "first", "second"),
        default="both",
        help="the bot's seat(s): two runs on two cores, then one `both` run merges with --merge",
    )
    parser.add_argument("--merge", type=Path, action="append", default=[], help="also take the entries of this book")
    args = parser.parse_args(argv)
    solver = load()
    if solver is None:
        print("the compiled solver is not built: run `make native` first", file=sys.stderr)
        return 2
    entries: dict[int, tuple[int, int, bool]] = {}
    covered = [0, 0]  # per seat (first, second): the plies finished runs vouched for
    if args.out.exists() and not args.fresh:
        earlier = Book.parse(args.out.read_text())
        entries, covered = earlier.entries(), list(earlier.plies)
    for other in args.merge:
        merged = Book.parse(other.read_text())
        entries.update(merged.entries())
        covered = [max(a, b) for a, b in zip(covered, merged.plies, strict=True)]
    builder = Builder(solver, args.plies, args.strong_seconds, entries)
    header = HEADER.format(args=f"--plies {args.plies} --strong-seconds {args.strong_seconds:g}")

    def save() -> None:
        args.out.write_text(header + Book(builder.entries, (covered[0], covered[1])).format())

    def after_pass(plies: int) -> None:
        for seat, name in enumerate(("first", "second")):
            if args.sides in ("both", name):
                covered[seat] = max(covered[seat], plies)
        print(f"every position below {plies} plies done (first, second: {covered})", flush=True)
        save()

    def every() -> None:
        if builder.new % args.save_every == 0:
            save()

    builder.on_new = every
    started = time.perf_counter()
    builder.run(args.sides, after_pass)
    print(
        f"{len(builder.entries)} positions ({builder.new} new, {builder.weak} of them result only)"
        f" in {time.perf_counter() - started:.0f} s -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
