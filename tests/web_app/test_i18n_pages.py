"""The web app in Dutch and German (issue 42), in Chromium with the browser asking for the language
(navigator.languages from the context's locale): the sign-in page, a refusal in words, the lobby,
the account page and a tournament page carry no English sentence of the catalogues, fit a phone
(390 px, long German words included), and the header's switcher changes the language, remembered
across a reload."""

from __future__ import annotations

import json
import uuid

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.web_app.app import TIMEOUT_MS
from tests.web_app.conftest import SCREENSHOTS
from tests.web_app.i18n_check import LOCALES, assert_fits, assert_no_english

PHONE = {"width": 390, "height": 844}


def words(lang: str, namespace: str = "common") -> dict:
    return json.loads((LOCALES / lang / f"{namespace}.json").read_text("utf-8"))


def check(page: Page, lang: str, name: str, ignore: tuple[str, ...]) -> None:
    assert_no_english(page, lang, ignore)
    assert_fits(page)
    page.screenshot(path=SCREENSHOTS / f"i18n-{lang}-{name}.png", full_page=True)


@pytest.mark.parametrize("lang", ["nl", "de"])
def test_the_app_speaks_the_browsers_language(browser: Browser, web_url: str, lang: str) -> None:
    common, reasons = words(lang), words(lang, "reasons")
    context = browser.new_context(locale={"nl": "nl-NL", "de": "de-DE"}[lang], viewport=PHONE)  # type: ignore[arg-type]
    page = context.new_page()
    page.goto(web_url)
    expect(page.locator(".auth h2")).to_have_text(common["auth"]["welcome"], timeout=TIMEOUT_MS)
    assert page.evaluate("() => document.documentElement.lang") == lang
    expect(page.locator(f".lang-switch .lang-{lang}")).to_have_attribute("aria-pressed", "true")
    check(page, lang, "sign-in", ())

    # A refusal by its reason, in the language: never the server's English message.
    page.get_by_placeholder(common["auth"]["namePlaceholder"]).fill("x!")
    page.get_by_placeholder(common["auth"]["passwordPlaceholder"]).fill("correct horse battery")
    page.get_by_role("button", name=common["auth"]["register"]).click()
    expect(page.locator(".auth .message")).to_have_text(reasons["BAD_USERNAME"], timeout=TIMEOUT_MS)
    check(page, lang, "refusal", ("x!",))

    name = f"{lang}{uuid.uuid4().hex[:8]}"
    page.get_by_placeholder(common["auth"]["namePlaceholder"]).fill(name)
    page.get_by_role("button", name=common["auth"]["register"]).click()
    expect(page.locator("#user .me")).to_have_text(name, timeout=TIMEOUT_MS)
    expect(page.locator(".game-card").first).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator("ul.mine li").first).to_be_visible(timeout=TIMEOUT_MS)
    check(page, lang, "lobby", (name,))

    page.locator("#user a.me").click()
    expect(page.locator(".account-page h2")).to_have_text(common["account"]["title"], timeout=TIMEOUT_MS)
    expect(page.locator(".standing")).to_contain_text(common["account"]["goodStanding"], timeout=TIMEOUT_MS)
    expect(page.locator(".blocked-list")).to_contain_text(common["account"]["nobodyBlocked"], timeout=TIMEOUT_MS)
    check(page, lang, "account", (name,))

    page.get_by_role("link", name=common["nav"]["tournaments"]).click()
    form = page.locator("form.create-tournament")
    expect(form.locator("select[name=game] option").first).to_be_attached(timeout=TIMEOUT_MS)
    cup = f"Cup {name}"
    form.locator("input[name=name]").fill(cup)
    form.locator("select[name=game]").select_option("connect4")
    form.get_by_role("button", name=common["tournament"]["createButton"]).click()
    expect(page.locator(".tournament h2")).to_have_text(cup, timeout=TIMEOUT_MS)
    page.get_by_role("button", name=common["tournament"]["join"]).click()
    expect(page.locator(".tournament-players li")).to_have_count(1, timeout=TIMEOUT_MS)
    expect(page.locator(".tournament-info")).to_contain_text(common["tournament"]["state"]["registering"])
    check(page, lang, "tournament", (name, cup))

    # The switcher: English now, and still after a reload; then back.
    page.locator(".lang-switch .lang-en").click()
    expect(page.locator(".lang-switch .lang-en")).to_have_attribute("aria-pressed", "true", timeout=TIMEOUT_MS)
    expect(page.locator("#nav")).to_contain_text("Tournaments")
    page.reload()
    expect(page.locator("#nav")).to_contain_text("Tournaments", timeout=TIMEOUT_MS)
    assert page.evaluate("() => document.documentElement.lang") == "en"
    page.locator(f".lang-switch .lang-{lang}").click()
    expect(page.locator("#nav")).to_contain_text(common["nav"]["tournaments"], timeout=TIMEOUT_MS)
    expect(page.locator(".tournament h2")).to_have_text(cup, timeout=TIMEOUT_MS)
    context.close()
