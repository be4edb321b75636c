"""Correspondence searches in Chromium: a search for a days-long game outlives the lobby page that started it.
A finds a 5-day match, is told the page may be left, reloads it: "Your open correspondence
searches" lists it and its cancel button withdraws it. Cancel while still looking withdraws a
3-day search too. A 3-day search left by a reload is paired by B's search (B's page goes to the
game) and A's lobby then lists the game and no open search. A Dutch player at 390 px: the section
in Dutch (axe, 44 px targets, no sideways scrolling), cancelled from the keyboard. Screenshots in
build/screenshots/ (searches-*.png, access-searches-nl.png)."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from tests.web_app.app import TIMEOUT_MS, register
from tests.web_app.i18n_check import assert_no_english
from tests.web_app.test_access import check
from tests.web_app.test_challenges import DESKTOP, PASSWORD, PHONE, shoot

DAY_S = 86_400
LOCALES = Path(__file__).resolve().parents[2] / "clients" / "web" / "locales"


def find_days(page: Page, days: int, looking: str | None = "You may leave this page") -> None:
    """Find a match with a days clock; `looking`: the wait's words to see (None: it may be paired at once)."""
    card = page.locator(".game-card[data-game=connect4]")
    card.locator("select[name=clock]").select_option(str(days * DAY_S))
    card.locator("button.find").click()
    if looking is not None:
        expect(card.locator(".wait")).to_contain_text(looking, timeout=TIMEOUT_MS)


def test_open_searches_listed_cancelled_and_paired_later(browser: Browser, web_url: str) -> None:
    names = {k: f"srch{k}{uuid.uuid4().hex[:6]}" for k in ("a", "b")}
    contexts = {k: browser.new_context(viewport=DESKTOP) for k in names}  # type: ignore[arg-type]
    try:
        a, b = (contexts[k].new_page() for k in ("a", "b"))
        for key, page in (("a", a), ("b", b)):
            register(page, web_url, names[key], PASSWORD)
        section = a.locator("section.open-searches")
        expect(a.locator(".game-card").first).to_be_visible(timeout=TIMEOUT_MS)
        expect(section).to_be_hidden()

        # A 5-day search, the page reloaded: still listed, with its clock; its button cancels it.
        find_days(a, 5)
        a.reload()
        expect(section.locator("li")).to_have_count(1, timeout=TIMEOUT_MS)
        expect(section.locator("h2")).to_have_text("Your open correspondence searches")
        expect(section.locator("li")).to_contain_text("Connect Four")
        expect(section.locator("li")).to_contain_text(re.compile("5 days"))
        shoot(a, "searches-lobby")
        section.get_by_role("button", name="Cancel search for Connect Four").click()
        expect(section).to_be_hidden(timeout=TIMEOUT_MS)

        # Cancel while still looking withdraws a days-long search as well.
        find_days(a, 3)
        expect(section.locator("li")).to_have_count(1, timeout=TIMEOUT_MS)
        a.locator(".game-card[data-game=connect4] .wait button.cancel").click()
        expect(section).to_be_hidden(timeout=TIMEOUT_MS)
        a.reload()
        expect(a.locator(".game-card").first).to_be_visible(timeout=TIMEOUT_MS)
        a.wait_for_timeout(500)
        expect(section).to_be_hidden()

        # Left by a reload, then paired by B's search: B goes to the game; A's lobby lists it.
        find_days(a, 3)
        a.reload()
        expect(section.locator("li")).to_have_count(1, timeout=TIMEOUT_MS)
        find_days(b, 3, looking=None)
        expect(b).to_have_url(re.compile(r"#/game/m-"), timeout=TIMEOUT_MS)
        game = b.url.rsplit("/", 1)[-1]
        a.reload()
        expect(a.locator(f"ul.mine a[href='#/game/{game}']")).to_be_visible(timeout=TIMEOUT_MS)
        a.wait_for_timeout(500)
        expect(section).to_be_hidden()
    finally:
        for context in contexts.values():
            context.close()


def test_open_searches_in_dutch_on_a_phone(browser: Browser, web_url: str) -> None:
    words = json.loads((LOCALES / "nl" / "common.json").read_text("utf-8"))["lobby"]
    context = browser.new_context(locale="nl-NL", viewport=PHONE)  # type: ignore[arg-type]
    try:
        page = context.new_page()
        name = f"srchnl{uuid.uuid4().hex[:6]}"
        page.goto(web_url)
        common = json.loads((LOCALES / "nl" / "common.json").read_text("utf-8"))
        page.get_by_placeholder(common["auth"]["namePlaceholder"]).fill(name)
        page.get_by_placeholder(common["auth"]["passwordPlaceholder"]).fill(PASSWORD)
        page.get_by_role("button", name=common["auth"]["register"]).click()
        expect(page.locator("#user .me")).to_have_text(name, timeout=TIMEOUT_MS)
        expect(page.locator(".game-card").first).to_be_visible(timeout=TIMEOUT_MS)
        find_days(page, 7, looking=words["searchWaits"][:30])
        page.reload()
        section = page.locator("section.open-searches")
        expect(section.locator("li")).to_have_count(1, timeout=TIMEOUT_MS)
        expect(section.locator("h2")).to_have_text(words["searches"])
        assert_no_english(page, "nl", (name,))
        found: list[str] = []
        check(page, "searches-nl", found)
        assert not found, found
        button = section.get_by_role("button", name=words["cancelSearchOf"].replace("{{game}}", "Vier op een rij"))
        button.focus()
        page.keyboard.press("Enter")
        expect(section).to_be_hidden(timeout=TIMEOUT_MS)
    finally:
        context.close()
