"""A whole Connect Four game in Chromium against a level-1 bot: sign in as a guest (kept across a
reload), start from the lobby's catalogue, click (and key in) columns the view marks legal until
the result screen; the move list, clocks, legend, last move and winning four are on the page."""

from __future__ import annotations

import random

from playwright.sync_api import Browser, Route, expect

from tests.web_app.app import (
    TIMEOUT_MS,
    first_board_ms,
    page_weight_gzip,
    sign_in_as_guest,
    version,
    wait_for_my_turn_or_end,
    wait_for_version_after,
)
from tests.web_app.conftest import SCREENSHOTS


def test_connect4_against_a_level_1_bot(browser: Browser, web_url: str) -> None:
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    name = sign_in_as_guest(page, web_url)
    page.reload()  # the session survives a reload
    expect(page.locator("#user .me")).to_have_text(f"{name} (guest)", timeout=TIMEOUT_MS)

    card = page.locator(".game-card[data-game=connect4]")
    expect(card.locator("h3")).to_have_text("Connect Four")
    expect(card.locator("input[name=rows]")).to_have_value("6")  # options come from the catalogue
    card.get_by_role("button", name="Play a bot (level 1)").click()
    board = page.locator("svg.board.connect4")
    expect(board).to_be_visible(timeout=TIMEOUT_MS)
    assert "#/game/" in page.url

    # A reload mid-game puts the player back in the same game; the figure is load → board drawn.
    page.reload()
    expect(board).to_be_visible(timeout=TIMEOUT_MS)
    load_ms = first_board_ms(page)
    legend = page.locator(".legend li")
    expect(legend).to_have_count(2)
    expect(legend.filter(has_text="(you)")).to_contain_text(name)
    expect(page.locator(".legend .clock")).to_have_count(2)

    rng = random.Random(7)
    moves = 0
    while wait_for_my_turn_or_end(page):
        if moves == 0:
            # My clock runs on my turn, counting down from the server's turn deadline.
            running = page.locator(".legend li.to-act .clock.running")
            expect(running).to_have_count(1)
            first = running.inner_text()
            page.wait_for_function(
                "(t) => document.querySelector('.legend li.to-act .clock.running')?.textContent !== t",
                arg=first,
                timeout=5000,
            )
        legal = [int(c) for c in board.locator(".column.legal").evaluate_all("gs => gs.map(g => g.dataset.column)")]
        assert legal, "my turn, yet the view offers no column"
        column = rng.choice(legal)
        before = version(page)
        if moves % 2:
            board.focus()
            page.keyboard.press(str(column + 1))  # the keyboard: digit keys drop into that column
        else:
            board.locator(f".column[data-column='{column}'] rect.hit").click()
        wait_for_version_after(page, before)
        moves += 1
    result = page.locator(".result")
    expect(result).to_be_visible(timeout=TIMEOUT_MS)
    headline = result.locator("h3").inner_text()
    assert headline in ("You won!", "You lost.", "A draw."), headline
    expect(result).to_contain_text("How it ended:")
    assert moves >= 4
    sentences = page.locator(".moves li").all_inner_texts()
    assert any(f"{name} dropped a disc into column" in s for s in sentences), sentences
    assert sentences[-1].startswith("Game over"), sentences[-1]
    assert board.locator(".last-move").count() == 1
    if "four in a row" in result.inner_text():
        assert board.locator(".winning").count() >= 4  # the winning four is marked
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "connect4.png", full_page=True)

    weight = page_weight_gzip(web_url)
    print(
        f"\nweb app: page weight (JS+CSS gzipped) {weight / 1024:.1f} KB; load to first board {load_ms:.0f} ms; {moves} moves"
    )
    assert weight < 300 * 1024
    assert load_ms < 1000
    context.close()


def test_find_a_match_cancel_then_a_dropped_network_and_resigning(browser: Browser, web_url: str) -> None:
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    sign_in_as_guest(page, web_url)
    card = page.locator(".game-card[data-game=connect4]")
    # Matchmaking shows the wait and can be cancelled (nobody else is queued here).
    card.get_by_role("button", name="Find a match").click()
    wait = card.locator(".wait")
    expect(wait).to_contain_text("Looking for opponents", timeout=TIMEOUT_MS)
    page.wait_for_function(
        "() => /opponents… [1-9]/.test(document.querySelector('.game-card[data-game=connect4] .wait')?.textContent ?? '')",
        timeout=TIMEOUT_MS,
    )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "lobby.png", full_page=True)
    wait.get_by_role("button", name="Cancel").click()
    expect(wait).to_be_hidden(timeout=TIMEOUT_MS)

    card.get_by_role("button", name="Play a bot (level 2)").click()
    board = page.locator("svg.board.connect4")
    expect(board).to_be_visible(timeout=TIMEOUT_MS)
    assert wait_for_my_turn_or_end(page)
    # The network drops right after a move: the bot's answer still reaches the page once it is back.
    before = version(page)
    board.locator(".column.legal").first.locator("rect.hit").click()
    wait_for_version_after(page, before)
    context.set_offline(True)
    page.wait_for_timeout(1500)  # the outage itself, not a wait for anything
    context.set_offline(False)
    assert wait_for_my_turn_or_end(page)
    assert version(page) >= before + 2

    # Resigning asks first: dismissed, the game goes on; accepted, it is lost.
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="Resign").click()
    expect(page.locator(".result")).to_be_hidden()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Resign").click()
    result = page.locator(".result")
    expect(result.locator("h3")).to_have_text("You lost.", timeout=TIMEOUT_MS)
    expect(result).to_contain_text("resigned")
    expect(page.locator(".moves li").last).to_contain_text("Game over")
    context.close()


def test_a_view_lost_to_the_network_is_fetched_again(browser: Browser, web_url: str) -> None:
    """The page fetches the view again after each move its watch hands out; when that fetch fails
    (the network dropped just then) it asks again until it lands, saying so meanwhile: without it
    the board stays on the old view for good, since the bot then waits for this player."""
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    sign_in_as_guest(page, web_url)
    page.locator(".game-card[data-game=connect4]").get_by_role("button", name="Play a bot (level 1)").click()
    board = page.locator("svg.board.connect4")
    expect(board).to_be_visible(timeout=TIMEOUT_MS)
    assert wait_for_my_turn_or_end(page)
    listed = page.locator(".moves li").count()
    before = version(page)
    failed: list[str] = []

    def drop(route: Route) -> None:
        failed.append(route.request.url)
        route.abort("internetdisconnected")

    get_game = "**/tafel.play.v1.GameService/GetGame"
    page.route(get_game, drop)
    board.locator(".column.legal").first.locator("rect.hit").click()
    # My move and the bot's answer reach the move list through the watch, while every view fetch fails.
    page.wait_for_function("(n) => document.querySelectorAll('.moves li').length >= n + 2", arg=listed, timeout=TIMEOUT_MS)
    message = page.locator(".game .message")
    expect(message).to_have_text("Reconnecting…", timeout=TIMEOUT_MS)
    page.wait_for_timeout(1500)  # the outage outlasts a unary call's own retries (0.7 s)
    assert version(page) == before, "a view was drawn while every fetch failed"
    # A click on the old view (it still says "Your turn") is refused as made on an old version.
    board.locator(".column.legal").first.locator("rect.hit").click()
    expect(message).to_contain_text("Move refused", timeout=TIMEOUT_MS)
    assert message.get_attribute("data-reason") == "VERSION_MISMATCH"
    assert len(failed) >= 3, failed
    page.unroute(get_game)
    wait_for_version_after(page, before + 1)  # the bot's answer is drawn
    assert wait_for_my_turn_or_end(page)
    assert version(page) == before + 2  # the refused click changed nothing
    expect(message).not_to_have_text("Reconnecting…")
    context.close()
