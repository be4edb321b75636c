"""Steps a person takes in the web app, for the browser tests: sign in, open a game, wait for the
turn, read the page's figures."""

from __future__ import annotations

import gzip
import statistics
import urllib.request

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
