"""Steps a person takes in the web app, for the browser tests: sign in, open a game, wait for the
turn, read the page's figures."""

from __future__ import annotations

import gzip
import random
import statistics
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, expect

TIMEOUT_MS = 30_000


def sign_in_as_guest(page: Page, url: str) -> str:
    """Open the app and play as a guest; returns the guest's name as the header shows it."""
    page.goto(url)
    page.get_by_role("button", name="Play as a guest").click()
    me = page.locator("#user .me")
    expect(me).to_contain_text("(guest)", timeout=TIMEOUT_MS)
    expect(page.locator(".game-card").first).to_be_visible(timeout=TIMEOUT_MS)
    return me.inner_text().removesuffix(" (guest)")


def register(page: Page, url: str, username: str, password: str) -> None:
    page.goto(url)
    page.get_by_placeholder("name").fill(username)
    page.get_by_placeholder("password").fill(password)
    page.get_by_role("button", name="Register").click()
    expect(page.locator("#user .me")).to_have_text(username, timeout=TIMEOUT_MS)


def version(page: Page) -> int:
    return int(page.locator(".turn").get_attribute("data-version") or "0")


def wait_for_my_turn_or_end(page: Page) -> bool:
    """True when it is the viewer's turn, False once the game is over."""
    turn = page.locator(".turn")
    page.wait_for_function(
        "() => { const t = document.querySelector('.turn'); return t && /^(Your turn|The game is over)/.test(t.textContent); }",
        timeout=TIMEOUT_MS,
    )
    return turn.inner_text().startswith("Your turn")


def wait_for_version_after(page: Page, before: int) -> None:
    page.wait_for_function(
        "(v) => Number(document.querySelector('.turn')?.dataset.version ?? -1) > v", arg=before, timeout=TIMEOUT_MS
    )


def page_weight_gzip(url: str) -> int:
    """JS + CSS the page loads, gzipped, in bytes (what a browser downloads with compression)."""
    total = 0
    for name in ("app.js", "app.css"):
        with urllib.request.urlopen(f"{url}/{name}", timeout=10) as response:
            total += len(gzip.compress(response.read(), 9))
    return total


def first_board_ms(page: Page) -> float:
    value = page.evaluate("() => window.tafelMetrics.firstBoardMs")
    assert isinstance(value, (int, float)), "the page drew no board"
    return float(value)


def p50(values: list[float]) -> float:
    return statistics.median(values)


def my_turn(page: Page) -> bool:
    return page.locator(".turn").inner_text().startswith("Your turn")


def play_connect4_between(pages: list[Page], seed: int = 5) -> int:
    """Two pages seated at one Connect Four game: whoever's page says "Your turn" clicks a column
    its view marks legal, until the result shows on both. Returns the moves made."""
    import random

    rng = random.Random(seed)
    for page in pages:
        page.wait_for_function(
            "() => document.querySelector('.turn')?.dataset.version !== undefined", timeout=TIMEOUT_MS
        )
    moves = 0
    while not pages[0].locator(".result").is_visible():
        movers = [p for p in pages if my_turn(p)]
        # Both pages drew the same version (waited for below), so one of them has the move.
        assert movers, "neither page says it is its turn"
        mover = movers[0]
        legal = mover.locator("svg.board.connect4 .column.legal").evaluate_all("gs => gs.map(g => g.dataset.column)")
        before = version(mover)
        mover.locator(f"svg.board.connect4 .column[data-column='{rng.choice(legal)}'] rect.hit").click()
        for page in pages:
            wait_for_version_after(page, before)
        moves += 1
        assert moves < 100
    for page in pages:
        expect(page.locator(".result")).to_be_visible(timeout=TIMEOUT_MS)
    return moves


def place_coloursquare_round(
    page: Page, rng: random.Random, rows: set[int], jokers: list[int], shot: Path | None = None
) -> None:
    """Colour Square: pick dice and targets until the page offers no more, then send the list (a
    refusal: start again with other choices); `shot`: a screenshot once a die is picked."""
    board = page.locator(".coloursquare-board")
    for _attempt in range(6):
        tried: set[str] = set()
        placed_rows: list[int] = []
        used_joker = False
        while True:
            dice = [
                d
                for d in board.locator(".die:not([disabled])").evaluate_all("bs => bs.map(b => b.dataset.die)")
                if d not in tried
            ]
            if not dice:
                break
            die = rng.choice(dice)
            tried.add(die)
            board.locator(f".die[data-die='{die}']").click()
            cells = board.locator(".sheet.mine .cell.target")
            joker = board.locator(".joker.target")
            if cells.count() == 0 and joker.count() == 0:
                board.locator(f".die[data-die='{die}']").click()  # no place left for it: put it back
                continue
            if shot is not None:
                page.screenshot(path=shot, full_page=True)
                shot = None
            if joker.count() > 0 and (not jokers or cells.count() == 0) and rng.random() < 0.4:
                joker.first.click()
                used_joker = True
                continue
            if cells.count() == 0:
                joker.first.click()
                used_joker = True
                continue
            spots = cells.evaluate_all(
                "gs => gs.map(g => [Number(g.dataset.row), Number(g.dataset.column), g.dataset.colour])"
            )
            fresh = [s for s in spots if s[0] not in rows] or spots
            row, column, colour = rng.choice(fresh)
            board.locator(
                f".sheet.mine .cell.target[data-row='{row}'][data-column='{column}'][data-colour='{colour}']"
            ).click()
            placed_rows.append(row)
        before = version(page)
        page.locator(".message").evaluate("m => { m.textContent = ''; }")
        board.locator("button.place").click()
        page.wait_for_function(
            "(v) => Number(document.querySelector('.turn')?.dataset.version ?? -1) > v || document.querySelector('.message')?.textContent",
            arg=before,
            timeout=TIMEOUT_MS,
        )
        if not page.locator(".message").inner_text():
            rows.update(placed_rows)
            if used_joker:
                jokers.append(before)
            return
        board.locator("button.clear").click()  # refused (e.g. MUST_PLACE): choose again
    raise AssertionError(f"every placement list was refused: {page.locator('.message').inner_text()}")
