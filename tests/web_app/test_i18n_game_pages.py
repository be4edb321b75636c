"""The game pages in Dutch and German, in Chromium with the browser asking for the
language: a registered player reads each game's "how to play", then plays a move or two of each
game — Connect Four against a bot (a draw offered, a line in the players' chat, resigned), Plus 4
from a private room (its page: options in words, seats, the room's chat; a bot added there starts
the game), Colour Square solo (a round of dice placed) — and replays the first game. Every page
(the board, the move list's sentences, the offers, the chat pane, the result, the room, the replay)
is walked for English sentences of the catalogues; screenshots at desktop width and at 390 px go
to build/screenshots."""

from __future__ import annotations

import importlib
import json
import random
import re
import uuid
from typing import Any, cast

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from kit.catalogue import GAMES
from tests.web_app.app import TIMEOUT_MS, place_coloursquare_round, version, wait_for_version_after
from tests.web_app.conftest import SCREENSHOTS
from tests.web_app.i18n_check import LOCALES, assert_no_english

PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1100, "height": 800}


@pytest.mark.parametrize("lang", ["en", "nl", "de"])
def test_every_option_of_every_game_has_words(lang: str) -> None:
    """The catalogue's options (the rules services' option specs) each have a label and a help
    sentence, and each choice a word, in every language: the app never shows a developer
    description or an enum name (no browser needed)."""
    options = words(lang, "game")["options"]
    missing = []
    for game, package in GAMES.items():
        for spec in importlib.import_module(f"tafel_rules.{package.rpartition('.')[2]}").RULES.option_specs():
            said = options.get(game, {}).get(spec.name, {})
            missing += [f"{game}.{spec.name}.{part}" for part in ("label", "help") if not said.get(part)]
            missing += [f"{game}.{spec.name}.values.{c}" for c in spec.choices if not said.get("values", {}).get(c)]
    assert not missing, f"options without words in {lang}: {missing}"


def words(lang: str, namespace: str) -> dict[str, Any]:
    return cast(dict[str, Any], json.loads((LOCALES / lang / f"{namespace}.json").read_text("utf-8")))


def check(page: Page, lang: str, name: str, ignore: tuple[str, ...]) -> None:
    """No English sentence on the page; screenshots at desktop width and on a phone."""
    assert_no_english(page, lang, ignore)
    page.screenshot(path=SCREENSHOTS / f"i18n-{lang}-{name}.png", full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=SCREENSHOTS / f"i18n-{lang}-{name}-phone.png", full_page=True)
    page.set_viewport_size(DESKTOP)


def my_turn(page: Page) -> None:
    """Wait until the turn line says it is the viewer's turn (data-state: any language)."""
    expect(page.locator(".turn[data-state=mine]")).to_be_attached(timeout=TIMEOUT_MS)


def resign(page: Page) -> None:
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("button.resign").click()
    expect(page.locator(".result")).to_be_visible(timeout=TIMEOUT_MS)


def moves(page: Page, at_least: int) -> list[str]:
    page.wait_for_function(
        "(n) => document.querySelectorAll('.moves li').length >= n", arg=at_least, timeout=TIMEOUT_MS
    )
    return page.locator(".moves li").all_inner_texts()


@pytest.mark.parametrize("lang", ["nl", "de"])
def test_the_game_pages_speak_the_browsers_language(browser: Browser, web_url: str, lang: str) -> None:
    common, game = words(lang, "common"), words(lang, "game")
    context = browser.new_context(locale={"nl": "nl-NL", "de": "de-DE"}[lang], viewport=DESKTOP)
    page = context.new_page()
    name = f"{lang}{uuid.uuid4().hex[:8]}"
    page.goto(web_url)
    page.get_by_placeholder(common["auth"]["namePlaceholder"]).fill(name)
    page.get_by_placeholder(common["auth"]["passwordPlaceholder"]).fill("correct horse battery")
    page.get_by_role("button", name=common["auth"]["register"]).click()
    expect(page.locator("#user .me")).to_have_text(name, timeout=TIMEOUT_MS)
    bot = common["name"]["botLevel"].replace("{{level}}", "1")
    ignore = (name, bot)

    # Each game's "how to play" (the games' own words from the rule sheets).
    for slug in ("connect4", "plus4", "coloursquare"):
        page.goto(f"{web_url}/#/howto/{slug}")
        expect(page.locator(".howto h2")).to_contain_text(game["games"][slug]["title"], timeout=TIMEOUT_MS)
        expect(page.locator(".howto figcaption").first).to_have_text(re.compile(r"\w"))
        check(page, lang, f"howto-{slug}", ignore)
    page.goto(f"{web_url}/#/")

    # Connect Four against a bot: two drops, a draw offered, a line in the players' chat.
    page.locator(".game-card[data-game=connect4] button.bot-1").click()
    board = page.locator("svg.board.connect4")
    expect(board).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator(".game h2")).to_have_text(game["games"]["connect4"]["title"])
    for _ in range(2):
        my_turn(page)
        before = version(page)
        board.locator(".column.legal rect.hit").first.click()
        wait_for_version_after(page, before)
    sentences = moves(page, 3)
    dropped = (
        game["moves"]["connect4"]["dropped"].split("{{who}}")[1].split("{{column}}")[0]
    )  # " gooit een schijf in kolom "
    assert any(dropped in s for s in sentences), sentences
    page.locator("button.offer-draw").click()
    expect(page.locator(".offers .offer, .offers .offer-news").first).to_be_visible(timeout=TIMEOUT_MS)
    pane = page.locator(".chat-pane[data-channel=players]")
    pane.locator("input.chat-input").fill("veel plezier")
    pane.locator("button.chat-send").click()
    expect(pane.locator(".chat-line .chat-text", has_text="veel plezier")).to_be_visible(timeout=TIMEOUT_MS)
    check(page, lang, "connect4", (*ignore, "veel plezier"))
    resign(page)
    expect(page.locator(".result h3")).to_have_text(game["page"]["youLost"])
    check(page, lang, "connect4-result", ignore)

    # Its replay: the same sentences, the steps, the kept chat.
    page.locator(".result a.replay-link").click()
    expect(page.locator(".replay-moves li").first).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator(".replay-chat .chat-pane").first).to_be_visible(timeout=TIMEOUT_MS)
    page.locator(".replay-controls button.forward").click()
    check(page, lang, "replay", (*ignore, "veel plezier"))

    # Plus 4 from a private room in first-line mode: the room page, then a bot added there.
    page.goto(f"{web_url}/#/")
    card = page.locator(".game-card[data-game=plus4]")
    card.locator("select[name=mode]").select_option("MODE_FIRST_LINE")
    card.locator("button.room").click()
    expect(page.locator("input.invite")).to_be_visible(timeout=TIMEOUT_MS)
    about = page.locator(".room-about")
    expect(about).to_contain_text(game["options"]["plus4"]["mode"]["values"]["MODE_FIRST_LINE"])
    expect(page.locator(".room-players .free")).to_have_text(game["room"]["free_one"].replace("{{count}}", "1"))
    expect(page.locator(".chat-pane[data-channel=room]")).to_be_visible()
    check(page, lang, "room", ignore)
    page.locator("button.add-bot.bot-1").click()
    plus4 = page.locator("svg.board.plus4")
    expect(plus4).to_be_visible(timeout=TIMEOUT_MS)
    for _ in range(2):
        my_turn(page)
        before = version(page)
        plus4.locator(".push.legal rect.hit").first.click()
        wait_for_version_after(page, before)
    pushed = game["moves"]["plus4"]["pushed"].split("{{who}}")[1].split("{{column}}")[0]
    assert any(pushed in s for s in moves(page, 3)), moves(page, 3)
    check(page, lang, "plus4", ignore)
    resign(page)

    # Colour Square solo: one round of dice placed from the page.
    page.goto(f"{web_url}/#/")
    page.locator(".game-card[data-game=coloursquare] button.solo").click()
    expect(page.locator(".coloursquare-board")).to_be_visible(timeout=TIMEOUT_MS)
    my_turn(page)
    expect(page.locator(".coloursquare-board button.place")).to_be_visible(timeout=TIMEOUT_MS)
    place_coloursquare_round(page, random.Random(5), set(), [])
    rolled = game["moves"]["coloursquare"]["rolled"].split("{{who}}")[1].split("{{roll}}")[0]  # " gooit " / " würfelt "
    sentences = moves(page, 2)
    assert any(rolled in s for s in sentences), sentences
    my_turn(page)
    check(page, lang, "coloursquare", ignore)
    resign(page)
    check(page, lang, "coloursquare-result", ignore)
    context.close()
