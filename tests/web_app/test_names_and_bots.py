"""Names in Chromium: a guest who picks "Jörg de Vries" is shown by it on
the board and in the game's record (its replay), the bot they play is "Bot (level 2)" in both, a
display name that passes for a bot is refused in words, guests read why they are unrated, and
Colour Square's score table shows its total column without scrolling sideways at 1280 px and at
390 px. Screenshots under SCREENSHOTS (docs/screenshots with TAFEL_SCREENSHOTS)."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Page, expect

from tests.web_app.app import TIMEOUT_MS
from tests.web_app.conftest import SCREENSHOTS

WIDE = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def _guest_named(browser: Browser, url: str, name: str, viewport: dict[str, int]) -> Page:
    page = browser.new_context(viewport=viewport).new_page()  # type: ignore[arg-type]
    page.goto(url)
    expect(page.locator(".auth .guest-rating")).to_contain_text("a guest's games are not rated", timeout=TIMEOUT_MS)
    page.locator("input[name=display-name]").fill(name)
    page.get_by_role("button", name="Play as a guest").click()
    expect(page.locator("#user .me")).to_have_text(f"{name} (guest)", timeout=TIMEOUT_MS)
    return page


def test_a_guest_named_joerg_plays_a_bot_and_both_names_reach_the_record(browser: Browser, web_url: str) -> None:
    # Passing for a bot is refused, in words, before anyone is signed in.
    page = browser.new_context(viewport=WIDE).new_page()  # type: ignore[arg-type]
    page.goto(web_url)
    page.locator("input[name=display-name]").fill("Bot (level 3)")
    page.get_by_role("button", name="Play as a guest").click()
    expect(page.locator(".auth .message")).to_contain_text('may not start with "Bot"', timeout=TIMEOUT_MS)  # by its reason, in words
    page.locator("input[name=display-name]").fill("Jörg de Vries")
    page.screenshot(path=SCREENSHOTS / "sign-in-display-name.png", full_page=True)
    page.get_by_role("button", name="Play as a guest").click()
    expect(page.locator("#user .me")).to_have_text("Jörg de Vries (guest)", timeout=TIMEOUT_MS)

    page.locator(".game-card[data-game=connect4]").get_by_role("button", name="Play a bot (level 2)").click()
    legend = page.locator(".legend")
    expect(legend.locator("li").nth(0)).to_contain_text("Jörg de Vries (you)", timeout=TIMEOUT_MS)
    expect(legend.locator("li").nth(1)).to_contain_text("Bot (level 2)")
    expect(page.locator(".game-links .unrated")).to_contain_text("a guest's games are not rated")
    page.screenshot(path=SCREENSHOTS / "game-vs-bot-names.png", full_page=True)

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Resign").click()
    expect(page.locator(".result")).to_be_visible(timeout=TIMEOUT_MS)
    page.locator(".result a.replay-link").click()
    # The replay is drawn from the game's record: its names are the record's.
    expect(page.locator("section.replay h2")).to_have_text(
        "Replay: Connect Four · Jörg de Vries vs Bot (level 2)", timeout=TIMEOUT_MS
    )
    expect(page.locator(".replay-moves")).to_contain_text("Jörg de Vries resigned.")
    page.screenshot(path=SCREENSHOTS / "replay-names.png", full_page=True)

    # My account: the name changes, the login name stays.
    page.goto(f"{web_url}/#/account")
    field = page.locator(".display-name-form input[name=display-name]")
    expect(field).to_have_value("Jörg de Vries", timeout=TIMEOUT_MS)
    field.fill("Zoë\nX")
    field.fill("Jörg")
    page.locator(".display-name-form").get_by_role("button", name="Save").click()
    expect(page.locator(".display-name-form .message")).to_have_text("Others now see you as Jörg.")
    expect(page.locator("#user .me")).to_have_text("Jörg (guest)")
    expect(page.locator(".account-page")).to_contain_text("not rated")
    page.screenshot(path=SCREENSHOTS / "account-display-name.png", full_page=True)
    page.context.close()


def test_colour_squares_total_shows_without_scrolling_sideways(browser: Browser, web_url: str) -> None:
    for size, viewport in (("desktop", WIDE), ("phone", PHONE)):
        page = _guest_named(browser, web_url, "Jörg de Vries", viewport)
        page.locator(".game-card[data-game=coloursquare]").get_by_role("button", name="Play a bot (level 1)").click()
        table = page.locator(".breakdown")
        expect(table).to_be_visible(timeout=TIMEOUT_MS)
        wrap = page.locator(".breakdown-wrap")
        widths = wrap.evaluate("w => [w.scrollWidth, w.clientWidth]")
        assert widths[0] <= widths[1], f"{size}: the score table scrolls sideways {widths}"
        # Both seats in the table (the bot's joins a moment later; the table is drawn again then).
        expect(table.locator("tr.total td")).to_have_count(3, timeout=TIMEOUT_MS)
        expect(table.locator("tr.total td").first).to_have_text("total")
        total = table.locator("tr.total td").last  # the last player's total
        box = frame = None
        for _ in range(50):  # a redraw between locating and measuring leaves no box: measure again
            box, frame = total.bounding_box(), wrap.bounding_box()
            if box is not None and frame is not None:
                break
            page.wait_for_timeout(100)
        assert box is not None and frame is not None and box["x"] + box["width"] <= frame["x"] + frame["width"] + 1
        assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"] + 1
        table.scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / f"{size}-coloursquare-score-table.png", full_page=True)
        # Resigned: the replay says who resigned and how the game then ended, not just "colour square".
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name="Resign").click()
        expect(page.locator(".result")).to_be_visible(timeout=TIMEOUT_MS)
        page.locator(".result a.replay-link").click()
        expect(page.locator(".replay-info")).to_contain_text(re.compile(r"\(.+ resigned, then "), timeout=TIMEOUT_MS)
        text = page.locator("main").inner_text()
        assert "a player called colour square" not in text, text
        page.context.close()
