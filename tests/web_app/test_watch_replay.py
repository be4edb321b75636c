"""A spectator in Chromium: two Python SDK bots play Connect Four (found through matchmaking); the
browser opens it from the lobby's live-games list, sees every move arrive, reloads mid-game and
carries on, then replays the finished game from its record: forward, back and jump."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.web_app.app import TIMEOUT_MS, sign_in_as_guest
from tests.web_app.conftest import SCREENSHOTS
from tests.web_app.sdk_bots import SdkBots
from tools.platform import Platform


def test_watch_a_live_game_then_replay_it(browser: Browser, web_url: str, platform: Platform) -> None:
    bots = SdkBots(platform.gateway_addresses, "", "connect4", count=2, think_s=0.4)
    assert bots.matched.wait(30), "the SDK bots found no match"
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    sign_in_as_guest(page, web_url)
    live = page.locator(f"ul.live a[href='#/game/{bots.game_id}']")
    expect(live).to_be_visible(timeout=TIMEOUT_MS)
    live.click()
    expect(page.locator(".game h2")).to_contain_text("(watching)", timeout=TIMEOUT_MS)
    expect(page.locator(".turn")).to_contain_text("Waiting for", timeout=TIMEOUT_MS)
    dropped = page.locator(".moves li", has_text="dropped a disc")
    expect(dropped.nth(1)).to_be_visible(timeout=TIMEOUT_MS)
    seen = dropped.count()
    page.reload()  # mid-game: the watch starts again from the first event, nothing missed
    expect(page.locator("svg.board.connect4")).to_be_visible(timeout=TIMEOUT_MS)
    page.wait_for_function("(n) => document.querySelectorAll('.moves li').length > n", arg=seen, timeout=TIMEOUT_MS)
    expect(page.locator(".result")).to_be_visible(timeout=60_000)
    bots.join()
    total = dropped.count()
    assert total == bots.moves, f"the page shows {total} moves, the bots made {bots.moves}"
    assert page.locator("svg.board.connect4 .disc:not(.empty)").count() == bots.moves

    page.locator(".result a", has_text="Replay this game").click()
    counter = page.locator(".replay-controls .step")
    expect(counter).to_have_text(f"step 0 of {bots.moves}", timeout=TIMEOUT_MS)
    discs = page.locator("svg.board.connect4 .disc:not(.empty)")
    expect(discs).to_have_count(0)
    page.get_by_role("button", name="Step forward").click()
    page.get_by_role("button", name="Step forward").click()
    expect(discs).to_have_count(2)
    page.get_by_role("button", name="Step back").click()
    expect(discs).to_have_count(1)
    page.locator(".replay-controls .jump").fill(str(bots.moves - 1))
    expect(discs).to_have_count(bots.moves - 1)
    page.get_by_role("button", name="Last step").click()
    expect(discs).to_have_count(bots.moves)
    expect(page.locator(".replay-moves li.current").last).to_contain_text("Game over")
    page.get_by_role("button", name="Step back").click()
    page.get_by_role("button", name="Step back").click()
    page.screenshot(path=SCREENSHOTS / "replay.png", full_page=True)
    context.close()
