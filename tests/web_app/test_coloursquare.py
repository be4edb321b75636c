"""A 3-seat Colour Square game in Chromium: a guest creates a 3-player room from the lobby (round
limit set from the catalogue's options), two Python SDK bots (clients/python/tafel: botplay's
level-1 strategy) join through the invite code, and the browser places dice round by round by clicking a die and then a
highlighted cell or joker field, in several rows and one joker, to the end of the game. Every
player's sheet and the score breakdown are on the page. The lobby's "Play 3 bots" at a table of four
seats three of the pool's bots, each a guest of its own."""

from __future__ import annotations

import random

from playwright.sync_api import Browser, expect

from tests.web_app.app import (
    TIMEOUT_MS,
    place_coloursquare_round,
    sign_in_as_guest,
    version,
    wait_for_my_turn_or_end,
    wait_for_version_after,
)
from tests.web_app.conftest import SCREENSHOTS
from tests.web_app.sdk_bots import SdkBots
from tools.platform import Platform


def test_coloursquare_three_seats_with_two_bots(browser: Browser, web_url: str, platform: Platform) -> None:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    sign_in_as_guest(page, web_url)
    card = page.locator(".game-card[data-game=coloursquare]")
    card.locator("select[name=seats]").select_option("3")
    card.locator("input[name=max_rounds]").fill("8")
    card.get_by_role("button", name="Create a private room").click()
    invite = page.locator("input.invite")
    expect(invite).to_be_visible(timeout=TIMEOUT_MS)
    bots = SdkBots(platform.gateway_addresses, invite.input_value().rsplit("/", 1)[-1], "coloursquare", count=2)
    expect(page.locator(".coloursquare-board")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator(".player-sheet")).to_have_count(3)
    expect(page.locator(".breakdown tr").first.locator("th[data-seat]")).to_have_count(3)  # a column each

    rng = random.Random(11)
    rows: set[int] = set()
    jokers: list[int] = []
    turns = 0
    while wait_for_my_turn_or_end(page):
        if page.locator(".coloursquare-board button.place").count() == 0:
            wait_for_version_after(page, version(page))  # asked, but the view is not yet drawn
            continue
        place_coloursquare_round(page, rng, rows, jokers, SCREENSHOTS / "coloursquare.png" if turns == 3 else None)
        turns += 1
        assert turns < 200

    result = page.locator(".result")
    expect(result).to_be_visible(timeout=TIMEOUT_MS)
    assert result.locator("h3").inner_text() in ("You won!", "You lost.", "A draw.")
    expect(result).to_contain_text("Scores:")
    sentences = page.locator(".moves li").all_inner_texts()
    assert any(" rolled red " in s for s in sentences), sentences
    assert any(" wrote the " in s for s in sentences), sentences
    assert len(rows) >= 2, f"placed in rows {rows} only"
    assert jokers, "no joker was used"
    expect(page.locator(".coloursquare-board .phase")).to_contain_text("Finished after")
    print(
        f"\nweb app: Colour Square, 3 seats, {turns} turns placed from the page, rows {sorted(rows)}, joker in {len(jokers)} turn(s)"
    )
    bots.join()
    context.close()


def test_coloursquare_solo_with_a_target(browser: Browser, web_url: str) -> None:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    sign_in_as_guest(page, web_url)
    card = page.locator(".game-card[data-game=coloursquare]")
    card.locator("input[name=target]").fill("60")
    card.locator("select[name=side]").select_option("B")
    card.get_by_role("button", name="Play solo").click()
    board = page.locator(".coloursquare-board")
    expect(board).to_be_visible(timeout=TIMEOUT_MS)
    expect(board.locator(".phase")).to_contain_text("Solo target: 60")
    expect(page.locator(".player-sheet")).to_have_count(1)
    expect(board.locator(".ask")).to_contain_text("You must place")
    expect(board.locator(".phase")).to_contain_text("sheet B")
    assert board.locator(".sheet.mine .value.printed").count() > 0, "side B's pre-printed cells are not drawn"
    page.screenshot(path=SCREENSHOTS / "coloursquare-solo-b.png", full_page=True)
    context.close()


def test_room_owner_starts_early_with_fewer_seats(browser: Browser, web_url: str, platform: Platform) -> None:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    sign_in_as_guest(page, web_url)
    card = page.locator(".game-card[data-game=coloursquare]")
    card.locator("select[name=seats]").select_option("4")
    card.get_by_role("button", name="Create a private room").click()
    invite = page.locator("input.invite")
    expect(invite).to_be_visible(timeout=TIMEOUT_MS)
    bots = SdkBots(platform.gateway_addresses, invite.input_value().rsplit("/", 1)[-1], "coloursquare", count=1)
    expect(page.locator(".room-players li")).to_have_count(3, timeout=TIMEOUT_MS)  # two players, "2 seat(s) free"
    page.get_by_role("button", name="Start now").click()
    expect(page.locator(".coloursquare-board")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator(".player-sheet")).to_have_count(2)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Resign").click()
    expect(page.locator(".result")).to_be_visible(timeout=TIMEOUT_MS)
    bots.join()
    context.close()


def test_a_table_of_four_against_three_pool_bots_from_the_lobby(browser: Browser, web_url: str) -> None:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    sign_in_as_guest(page, web_url)
    card = page.locator(".game-card[data-game=coloursquare]")
    card.locator("select[name=seats]").select_option("4")
    card.get_by_role("button", name="Play 3 bots (level 1)").click()  # the table size says how many
    expect(page.locator(".player-sheet")).to_have_count(4, timeout=TIMEOUT_MS)
    expect(page.locator(".legend li").filter(has_text="Bot (level 1)")).to_have_count(3)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Resign").click()
    expect(page.locator(".result")).to_be_visible(timeout=TIMEOUT_MS)
    context.close()
