"""A Plus 4 game between two browser contexts: two registered players; the host creates a private
room from the lobby (first-line mode picked from the catalogue's choices), the other opens the
invite link and so joins; a push out of turn is refused with the server's reason on the page; the
game is played to the result on both screens. Measures the opponent's move-to-screen latency."""

from __future__ import annotations

import random
import uuid

from playwright.sync_api import Browser, Page, expect

from tests.web_app.app import TIMEOUT_MS, p50, register, version, wait_for_version_after
from tests.web_app.conftest import SCREENSHOTS


def _my_turn(page: Page) -> bool:
    return page.locator(".turn").inner_text().startswith("Your turn")


def test_plus4_room_through_an_invite_link(browser: Browser, web_url: str) -> None:
    host_context = browser.new_context(viewport={"width": 1100, "height": 800})
    guest_context = browser.new_context(viewport={"width": 1100, "height": 800})
    host, guest = host_context.new_page(), guest_context.new_page()
    suffix = uuid.uuid4().hex[:6]
    register(host, web_url, f"ada{suffix}", "correct horse battery")
    register(guest, web_url, f"bob{suffix}", "correct horse battery")

    card = host.locator(".game-card[data-game=plus4]")
    card.locator("select[name=mode]").select_option("MODE_FIRST_LINE")
    card.get_by_role("button", name="Create a private room").click()
    invite = host.locator("input.invite")
    expect(invite).to_be_visible(timeout=TIMEOUT_MS)
    link = invite.input_value()
    assert "#/room/" in link
    guest.goto(link)  # opening the link joins the room; a full room starts by itself

    for page in (host, guest):
        expect(page.locator("svg.board.plus4")).to_be_visible(timeout=TIMEOUT_MS)
        expect(page.locator(".legend li")).to_have_count(2)
        expect(page.locator(".supplies li")).to_have_count(2)
        page.wait_for_function(
            "() => document.querySelector('.turn')?.dataset.version !== undefined", timeout=TIMEOUT_MS
        )
    expect(host.locator(".plus4-info")).to_contain_text("first line wins")

    # The seat not to move pushes anyway: the server refuses and the page says why, in words.
    waiting = guest if _my_turn(host) else host
    waiting.locator("svg.board.plus4 .push[data-column='0'] rect.hit").click()
    refusal = waiting.locator(".message")
    expect(refusal).to_contain_text("Move refused:", timeout=TIMEOUT_MS)
    assert waiting.locator(".message").get_attribute("data-reason"), "no machine reason kept"
    refused_text = refusal.inner_text()

    rng = random.Random(3)
    latencies: list[float] = []
    pushes = 0
    while not host.locator(".result").is_visible():
        mover, other = (host, guest) if _my_turn(host) else (guest, host)
        assert _my_turn(mover), "neither page says it is its turn"
        legal = mover.locator("svg.board.plus4 .push.legal").evaluate_all("gs => gs.map(g => g.dataset.column)")
        assert legal, "my turn, yet the view offers no push"
        before = version(mover)
        mover.locator(f"svg.board.plus4 .push[data-column='{rng.choice(legal)}'] rect.hit").click()
        wait_for_version_after(other, before)
        wait_for_version_after(mover, before)
        pushes += 1
        submitted = mover.evaluate("(v) => window.tafelMetrics.submittedAt[v]", str(before + 1))
        drawn = other.evaluate("(v) => window.tafelMetrics.drawnAt[v]", str(before + 1))
        latencies.append(drawn - submitted)
        assert pushes < 400, "the game did not end"

    for page in (host, guest):
        result = page.locator(".result")
        expect(result).to_be_visible(timeout=TIMEOUT_MS)
        assert result.locator("h3").inner_text() in ("You won!", "You lost.", "A draw.")
        sentences = page.locator(".moves li").all_inner_texts()
        assert any("pushed a disc into column" in s for s in sentences), sentences
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    host.screenshot(path=SCREENSHOTS / "plus4.png", full_page=True)
    print(
        f"\nweb app: Plus 4, {pushes} pushes; refused push said {refused_text!r}; "
        f"opponent move-to-screen p50 {p50(latencies):.0f} ms (max {max(latencies):.0f} ms)"
    )
    host_context.close()
    guest_context.close()
