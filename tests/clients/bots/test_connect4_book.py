"""The level-3 Connect Four opening book (connect4_book.txt, tools/build_connect4_book.py): it
covers every position the bot can reach in its plies, its moves are legal and keep the result,
and lookups see through mirror images."""

from __future__ import annotations

import random

import pytest
from tafel.bots.connect4 import Connect4Bot, Engine, board_at, position_from_moves
from tafel.bots.connect4_book import Book, canonical, load_book, mirror
from tafel.bots.connect4_native import load

from tools.build_connect4_book import HEURISTIC_NODES


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


def reachable(book: Book) -> list[tuple[int, int, int, str]]:
    """Every position with fewer discs than `book.plies` (for its seat) that the bot reaches playing
    the book's moves against every reply, moving first and second, where it cannot win at once; a
    position the book lacks is listed and not followed further."""
    engine = Engine()
    seen: list[tuple[int, int, int, str]] = []

    def walk(current: int, mask: int, nb: int, line: str) -> None:
        if nb >= book.plies[nb % 2] or engine.winning_cells(current, mask) & (mask + engine.bottom) & engine.board:
            return
        seen.append((current, mask, nb, line))
        entry = book.lookup(current, mask)
        if entry is None or engine.is_win(current, mask, entry.column):
            return
        current, mask = engine.play(current, mask, entry.column)
        for reply in range(engine.width):
            if engine.can_play(mask, reply) and not engine.is_win(current, mask, reply):
                walk(*engine.play(current, mask, reply), nb + 2, line + str(entry.column + 1) + str(reply + 1))

    walk(0, 0, 0, "")
    for first in range(engine.width):
        walk(*engine.play(0, 0, first), 1, str(first + 1))
    return seen


@pytest.fixture(scope="module")
def book() -> Book:
    shipped = load_book()
    assert shipped.plies[0] >= 14 and shipped.plies[1] >= 12, shipped.plies
    return shipped


def test_mirror_and_canonical_keys() -> None:
    engine = Engine()
    rng = random.Random(5)
    for _ in range(50):
        moves = "".join(str(rng.randrange(1, 8)) for _ in range(6))
        mirrored = "".join(str(8 - int(ch)) for ch in moves)
        try:
            a = position_from_moves(engine, moves)
        except ValueError:
            continue
        b = position_from_moves(engine, mirrored)
        assert mirror(mirror(a[1])) == a[1]
        assert (mirror(a[0]), mirror(a[1])) == (b[0], b[1])
        assert canonical(a[0], a[1])[0] == canonical(b[0], b[1])[0]


def test_lookup_mirrors_the_column() -> None:
    engine = Engine()
    current, mask, _ = position_from_moves(engine, "1")
    key, flipped = canonical(current, mask)
    book = Book({key: (2, 5, True)}, plies=(2, 3))
    other = position_from_moves(engine, "7")
    found, found_mirrored = book.lookup(current, mask), book.lookup(other[0], other[1])
    assert found is not None and found_mirrored is not None
    assert {found.column, found_mirrored.column} == {2, 4}
    assert Book.parse(book.format()).entries() == book.entries() and Book.parse(book.format()).plies == (2, 3)


@pytest.mark.parametrize("bad", ["zz 1 s 3", "10 9 s 3", "10 1 x 3", "10 1 s"])
def test_malformed_lines_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        Book.parse(bad)


def test_every_reachable_position_is_in_the_book(book: Book) -> None:
    engine = Engine()
    positions = reachable(book)
    missing = [line for current, mask, _, line in positions if book.lookup(current, mask) is None]
    assert not missing, missing[:10]
    for current, mask, _, line in positions:
        entry = book.lookup(current, mask)
        assert entry is not None and engine.can_play(mask, entry.column), line
    print(f"\nbook: {len(book)} entries, {len(positions)} reachable positions below {book.plies} plies")


def test_the_deepest_entries_keep_the_result(book: Book) -> None:
    """The 10 deepest reachable positions (the quickest to solve): the book's move leaves the opponent
    the negated result (and the negated score where the book says it is exact)."""
    native = load()
    if native is None:
        pytest.skip("the compiled solver is not built")
    engine = Engine()
    deepest = sorted(reachable(book), key=lambda p: (-p[2], p[3]))[:10]
    for current, mask, nb, line in deepest:
        entry = book.lookup(current, mask)
        assert entry is not None
        if engine.is_win(current, mask, entry.column):
            continue
        child = engine.play(current, mask, entry.column)
        if entry.exact:
            assert native.solve(*child, nb + 1) == -entry.score, line
        else:
            assert native.solve(*child, nb + 1, weak=True) == -sign(entry.score), line


def test_level3_opens_from_the_book_in_the_centre(book: Book) -> None:
    engine = Engine()
    bot = Connect4Bot(3)
    assert bot.move_for(board_at(engine, 0, 0, 0)) == 3
    assert bot.last is not None and bot.last.outcome == 1 and bot.last.nodes == 0
    # the bot's exact scores are in Pons' scale: a win for the side to move is at most 22 - 4
    for current, mask, nb, _ in reachable(book)[:200]:
        bot.move_for(board_at(engine, current, mask, nb))
        assert bot.last is not None and bot.last.outcome is not None
        if bot.last.exact:
            assert abs(bot.last.score) <= 18 and sign(bot.last.score) == bot.last.outcome


def test_a_lost_book_position_holds_the_heuristics_move(book: Book) -> None:
    """After the centre opening the second player is lost (the book's first move wins): every move
    keeps the loss, and the book holds the node-bounded heuristic's move there (traps for a
    fallible opponent); the bot plays it and says what it knows (outcome -1, not exact)."""
    engine = Engine()
    current, mask, nb = position_from_moves(engine, "4")
    entry = book.lookup(current, mask)
    assert entry is not None and not entry.exact and entry.score == -1
    assert entry.column == engine.analyse_heuristic(current, mask, nb, max_nodes=HEURISTIC_NODES).column
    bot = Connect4Bot(3)
    assert bot.move_for(board_at(engine, current, mask, nb)) == entry.column
    assert bot.last is not None and bot.last.outcome == -1 and not bot.last.exact
