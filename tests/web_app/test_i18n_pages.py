"""The web app in Dutch and German, in Chromium with the browser asking for the language
(navigator.languages from the context's locale): the sign-in page, a refusal in words, the lobby,
the account page and a tournament page carry no English sentence of the catalogues, fit a phone
(390 px, long German words included), and the header's switcher changes the language, remembered
across a reload. The people and staff pages too: a challenge dialog and the tray, a profile, the
block / mute / report dialog and a moderator's report queue and report; and the lobby's rules link
leads to the rules page in the language."""

from __future__ import annotations

import json
import uuid

import pytest
from playwright.sync_api import Browser, Page, expect
from tafel.client import TafelClient

from gateway.standing.roles import MODERATOR
from tests.web_app.app import TIMEOUT_MS
from tests.web_app.conftest import SCREENSHOTS
from tests.web_app.i18n_check import LOCALES, assert_fits, assert_no_english
from tests.web_app.test_moderation import PASSWORD, grant, run
from tools.platform import Platform

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


async def registered(platform: Platform, username: str) -> None:
    async with await TafelClient.connect(platform.gateway_addresses) as client:
        await client.register(username, PASSWORD)


@pytest.mark.parametrize("lang", ["nl", "de"])
def test_people_and_staff_pages_speak_the_language(
    browser: Browser, web_url: str, platform: Platform, lang: str
) -> None:
    common = words(lang)
    suffix = uuid.uuid4().hex[:6]
    me, other = f"m{lang}{suffix}", f"o{lang}{suffix}"
    run(registered(platform, other))
    context = browser.new_context(locale={"nl": "nl-NL", "de": "de-DE"}[lang], viewport=PHONE)  # type: ignore[arg-type]
    page = context.new_page()
    page.goto(web_url)
    page.get_by_placeholder(common["auth"]["namePlaceholder"]).fill(me)
    page.get_by_placeholder(common["auth"]["passwordPlaceholder"]).fill(PASSWORD)
    page.get_by_role("button", name=common["auth"]["register"]).click()
    expect(page.locator("#user .me")).to_have_text(me, timeout=TIMEOUT_MS)
    names = (me, other)

    # The rules link beside "how to play", to the page in the language.
    rules = page.locator(".game-card[data-game=connect4] a.rules-link")
    expect(rules).to_have_text(common["rules"]["link"], timeout=TIMEOUT_MS)
    expect(rules).to_have_attribute("href", f"rules/connect-four.{lang}.html")
    rules_url = rules.evaluate("(a) => a.href")

    # A challenge: the dialog, then the tray with it waiting for an answer.
    page.get_by_role("button", name=common["challenges"]["challengePlayer"]).click()
    dialog = page.locator("dialog.challenge-dialog")
    expect(dialog.locator("select[name=game] option").first).to_be_attached(timeout=TIMEOUT_MS)
    dialog.get_by_placeholder(common["challenges"]["dialog"]["namePlaceholder"]).fill(other)
    check(page, lang, "challenge-dialog", names)
    dialog.get_by_role("button", name=common["challenges"]["dialog"]["send"]).click()
    expect(dialog.locator(".thanks")).to_be_visible(timeout=TIMEOUT_MS)
    dialog.get_by_role("button", name=common["challenges"]["dialog"]["close"]).click()
    expect(page.locator(".challenge-tray li.outgoing")).to_contain_text(
        common["challenges"]["tray"]["waiting"], timeout=TIMEOUT_MS
    )
    check(page, lang, "challenge-tray", names)

    # The other player's profile, and the block / mute / report dialog from it.
    page.goto(f"{web_url}/#/player/{other}")
    expect(page.locator(".profile-meta")).not_to_be_empty(timeout=TIMEOUT_MS)
    expect(page.locator(".recent-games li")).to_have_text(common["profile"]["noGames"], timeout=TIMEOUT_MS)
    check(page, lang, "profile", names)
    page.get_by_role("button", name=common["profile"]["more"]).click()
    dialog = page.locator("dialog.player-dialog")
    dialog.get_by_role("button", name=common["safety"]["block"], exact=True).click()
    expect(dialog.locator(".message")).to_have_text(
        common["safety"]["blocked"].replace("{{name}}", other), timeout=TIMEOUT_MS
    )
    dialog.get_by_role("button", name=common["safety"]["report"]).click()
    dialog.locator("select[name=reason]").select_option(index=1)
    check(page, lang, "report-dialog", names)
    dialog.get_by_role("button", name=common["safety"]["send"]).click()
    expect(dialog.locator(".thanks")).to_have_text(common["safety"]["thanks"], timeout=TIMEOUT_MS)
    dialog.get_by_role("button", name=common["safety"]["close"]).click()

    # As a moderator: the queue with the report, then the report with the account and the forms.
    run(grant(platform, me, MODERATOR))
    page.reload()
    page.locator("#user .staff-link").click()
    row = page.locator(".report-row", has_text=other)
    expect(row).to_contain_text(common["safety"]["reason"]["ABUSE"], timeout=TIMEOUT_MS)
    check(page, lang, "staff-queue", names)
    row.click()
    expect(page.locator(".account-summary")).to_contain_text(other, timeout=TIMEOUT_MS)
    expect(page.locator("form.resolve-form")).to_be_visible()
    check(page, lang, "staff-report", names)

    # The how-to page ends with the same link; the rules page itself is in the language.
    page.goto(f"{web_url}/#/howto/plus4")
    expect(page.locator(".howto-nav a.rules-link")).to_have_attribute(
        "href", f"rules/plus-4.{lang}.html", timeout=TIMEOUT_MS
    )
    response = page.goto(rules_url)
    assert response is not None and response.status == 200, rules_url
    assert page.evaluate("() => document.documentElement.lang") == lang
    context.close()
