"""Challenges and offers in Chromium, two players in two browser contexts: A challenges B from the lobby's dialog
(game, clock, casual, seat); B declines with a reason and A reads it in words; A challenges again,
B accepts and both pages open the game; they play, B takes its last move back with A's leave, A
offers a draw, B accepts it; A offers a
rematch, B accepts and both pages open the new game with the seats rotated; there B moves and A
aborts (no result). B's open challenge is listed in A's lobby and A takes it. Then a third-party
bot — the TypeScript SDK's documented bot (clients/typescript/examples/challenge-bot.ts) in its
own process — accepts a challenge made in the browser, plays, and offers a rematch the page shows.
A guest challenges a level-1 bot from the dialog: the pool's bot sits down and they play to the end.

Screenshots of the new UI, desktop and phone (390x844): build/screenshots/ (TAFEL_SCREENSHOTS=
docs/screenshots refreshes the ones the docs show)."""

from __future__ import annotations

import re
import subprocess
import uuid
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from tests.web_app.app import (
    TIMEOUT_MS,
    register,
    sign_in_as_guest,
    version,
    wait_for_my_turn_or_end,
    wait_for_version_after,
)
from tests.web_app.conftest import SCREENSHOTS
from tools.platform import Platform

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "clients" / "typescript" / "dist" / "examples" / "challenge-bot.js"
PASSWORD = "correct horse battery"
DESKTOP = {"width": 1100, "height": 800}
PHONE = {"width": 390, "height": 844}


def shoot(page: Page, name: str, full_page: bool = True) -> None:
    """The page at desktop width, then at a phone's, then back (a dialog: the viewport only)."""
    size = page.viewport_size or DESKTOP
    page.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=full_page)
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(150)  # a reflow
    page.screenshot(path=SCREENSHOTS / f"{name}-phone.png", full_page=full_page)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"], (
        f"{name} is wider than a phone"
    )
    page.set_viewport_size(size)


def challenge(page: Page, whom: str, seat: str = "I move first", shot: str = "") -> None:
    """The lobby's 'Challenge a player…' dialog: Connect Four, 1 min a move, casual."""
    page.goto(page.url.split("#")[0] + "#/")
    page.get_by_role("button", name="Challenge a player…").click()
    dialog = page.locator("dialog.challenge-dialog")
    expect(dialog.locator("select[name=game] option[value=connect4]")).to_have_count(1, timeout=TIMEOUT_MS)
    dialog.get_by_placeholder("their name").fill(whom)
    dialog.locator("select[name=game]").select_option("connect4")
    dialog.locator("select[name=clock]").select_option("60")
    dialog.locator("select[name=seat]").select_option(label=seat)
    if shot:
        shoot(page, shot, full_page=False)
    dialog.get_by_role("button", name="Send the challenge").click()
    expect(dialog.locator(".thanks")).to_contain_text("Challenge sent to", timeout=TIMEOUT_MS)
    dialog.get_by_role("button", name="Close").click()


def game_id(page: Page) -> str:
    page.wait_for_url(re.compile(r"#/game/"), timeout=TIMEOUT_MS)
    expect(page.locator(".turn")).to_have_attribute("data-version", re.compile(r"\d+"), timeout=TIMEOUT_MS)
    return page.url.split("#/game/")[1]


def drop(mover: Page, pages: list[Page], column: int) -> None:
    """`mover` drops a disc into `column`; every page shows the move."""
    expect(mover.locator(".turn")).to_have_text(re.compile("^Your turn"), timeout=TIMEOUT_MS)
    before = version(mover)
    mover.locator(f"svg.board.connect4 .column[data-column='{column}'] rect.hit").click()
    for page in pages:
        wait_for_version_after(page, before)


def test_challenge_play_draw_rematch_abort_open(browser: Browser, web_url: str) -> None:
    suffix = uuid.uuid4().hex[:6]
    names = {"a": f"ann{suffix}", "b": f"ben{suffix}"}
    contexts = {k: browser.new_context(viewport=DESKTOP) for k in names}
    try:
        a, b = (contexts[k].new_page() for k in ("a", "b"))
        for key, page in (("a", a), ("b", b)):
            register(page, web_url, names[key], PASSWORD)

        # A challenge declined with a reason: A reads it in words.
        challenge(a, names["b"], shot="challenge-dialog")
        expect(a.locator(".challenge-tray li.outgoing")).to_contain_text(
            f"You challenged {names['b']}", timeout=TIMEOUT_MS
        )
        incoming = b.locator(".challenge-tray li.incoming")
        expect(incoming).to_contain_text(f"{names['a']} challenges you", timeout=TIMEOUT_MS)
        expect(incoming).to_contain_text(f"Connect Four · 1 minute a move · casual · {names['a']} moves first")
        shoot(b, "challenge-incoming")
        incoming.locator("select[name=decline-reason]").select_option(label="Too fast for me")
        incoming.get_by_role("button", name="Decline").click()
        expect(incoming).to_have_count(0, timeout=TIMEOUT_MS)
        note = a.locator(".challenge-tray .note.declined")
        expect(note).to_have_text(
            f"{names['b']} declined your challenge to Connect Four: the clock is too fast for them. OK",
            timeout=TIMEOUT_MS,
        )
        expect(a.locator(".challenge-tray li.outgoing")).to_have_count(0)
        shoot(a, "challenge-declined")
        note.get_by_role("button", name="Dismiss").click()

        # Accepted: both pages open the game; they play; a draw is offered and accepted.
        challenge(a, names["b"])
        b.locator(".challenge-tray li.incoming").get_by_role("button", name="Accept").click()
        first = game_id(b)
        assert game_id(a) == first
        pages = [a, b]
        for mover, column in ((a, 3), (b, 3), (a, 4), (b, 2)):
            drop(mover, pages, column)
        # B takes its last move back (a casual game), A allows it: B moves again.
        b.get_by_role("button", name="Ask to take back").click()
        ask = a.locator(".offers .offer.incoming")
        expect(ask).to_contain_text(f"{names['b']} asks to take back their last move.", timeout=TIMEOUT_MS)
        shoot(a, "game-takeback-request")
        ask.get_by_role("button", name="Allow").click()
        expect(b.locator(".offers .offer-news")).to_have_text(
            f"{names['a']} allowed your takeback: your last move is undone.", timeout=TIMEOUT_MS
        )
        expect(b.locator(".turn")).to_have_text(re.compile("^Your turn"), timeout=TIMEOUT_MS)
        expect(b.locator("svg.board.connect4 .disc:not(.empty)")).to_have_count(3)
        drop(b, pages, 5)
        a.get_by_role("button", name="Offer a draw").click()
        expect(a.locator(".offers .offer.outgoing")).to_contain_text(
            "You offered a draw: waiting for", timeout=TIMEOUT_MS
        )
        offer = b.locator(".offers .offer.incoming")
        expect(offer).to_contain_text(f"{names['a']} offers a draw.", timeout=TIMEOUT_MS)
        shoot(b, "game-draw-offer")
        offer.get_by_role("button", name="Accept the draw").click()
        for page in pages:
            expect(page.locator(".result h3")).to_have_text("A draw.", timeout=TIMEOUT_MS)
            expect(page.locator(".result")).to_contain_text("How it ended: the players agreed on a draw.")

        # A rematch: A offers, B accepts, both pages open the new game with the seats rotated.
        a.get_by_role("button", name="Rematch").click()
        expect(a.locator(".offers .offer.outgoing")).to_contain_text(
            "You offered a rematch: waiting for", timeout=TIMEOUT_MS
        )
        offer = b.locator(".offers .offer.incoming")
        expect(offer).to_contain_text(f"{names['a']} offers a rematch.", timeout=TIMEOUT_MS)
        shoot(b, "game-rematch-offer")
        offer.get_by_role("button", name="Accept the rematch").click()
        b.wait_for_url(lambda url: "#/game/" in url and first not in url, timeout=TIMEOUT_MS)
        a.wait_for_url(lambda url: "#/game/" in url and first not in url, timeout=TIMEOUT_MS)
        second = game_id(a)
        assert second != first and game_id(b) == second
        expect(a.locator(".legend li").nth(1)).to_contain_text("(you)", timeout=TIMEOUT_MS)  # A moves second now

        # Abort before both moved: B (first now) moves, A aborts.
        drop(b, pages, 0)
        a.once("dialog", lambda d: d.accept())
        a.get_by_role("button", name="Abort the game").click()
        for page in pages:
            expect(page.locator(".result h3")).to_have_text("Aborted: no result.", timeout=TIMEOUT_MS)

        # An open challenge from B's lobby, taken from A's.
        b.goto(f"{web_url}/#/")
        b.get_by_role("button", name="Challenge a player…").click()
        dialog = b.locator("dialog.challenge-dialog")
        expect(dialog.locator("select[name=game] option[value=connect4]")).to_have_count(1, timeout=TIMEOUT_MS)
        dialog.get_by_label("Anyone: an open challenge, listed in the lobby").check()
        dialog.get_by_role("button", name="Send the challenge").click()
        expect(dialog.locator(".thanks")).to_contain_text("open challenge is in the lobby", timeout=TIMEOUT_MS)
        dialog.get_by_role("button", name="Close").click()
        a.goto(f"{web_url}/#/")
        row = a.locator(".open-challenges li").filter(has_text=names["b"])
        expect(row).to_contain_text("Connect Four", timeout=TIMEOUT_MS)
        shoot(a, "lobby-open-challenges")
        row.get_by_role("button", name="Take it").click()
        third = game_id(a)
        assert third not in (first, second)
        b.wait_for_url(f"**/#/game/{third}", timeout=TIMEOUT_MS)  # B's page follows its challenge
    finally:
        for context in contexts.values():
            context.close()


def test_the_sdk_bot_accepts_a_challenge_made_in_the_browser(
    browser: Browser, web_url: str, platform: Platform
) -> None:
    assert BOT.is_file(), "the TypeScript SDK is not built (make ts)"
    suffix = uuid.uuid4().hex[:6]
    bot_name = f"tsbot{suffix}"
    bot = subprocess.Popen(
        [
            "node",
            str(BOT),
            "--server",
            platform.gateway_addresses[0],
            "--username",
            bot_name,
            "--password",
            PASSWORD,
            "--register",
            "--max-games",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    context = browser.new_context(viewport=DESKTOP)
    try:
        assert bot.stdout is not None
        assert "waits for challenges" in bot.stdout.readline()
        page = context.new_page()
        register(page, web_url, f"cat{suffix}", PASSWORD)
        challenge(page, bot_name, seat="I move first")
        gid = game_id(page)  # the bot accepted from its event stream: the page opened the game
        expect(page.locator(".legend")).to_contain_text(bot_name)
        # Play until the game ends (the bot answers every move), then the bot offers a rematch.
        for _ in range(30):
            if page.locator(".result").is_visible():
                break
            page.wait_for_function(
                "() => /^(Your turn|The game is over)/.test(document.querySelector('.turn')?.textContent ?? '')",
                timeout=TIMEOUT_MS,
            )
            if page.locator(".turn").inner_text().startswith("Your turn"):
                legal = page.locator("svg.board.connect4 .column.legal").evaluate_all(
                    "gs => gs.map(g => g.dataset.column)"
                )
                before = version(page)
                page.locator(f"svg.board.connect4 .column[data-column='{legal[0]}'] rect.hit").click()
                wait_for_version_after(page, before)
        expect(page.locator(".result")).to_be_visible(timeout=TIMEOUT_MS)
        offer = page.locator(".offers .offer.incoming")
        expect(offer).to_contain_text(f"{bot_name} offers a rematch.", timeout=TIMEOUT_MS)
        offer.get_by_role("button", name="Accept the rematch").click()
        page.wait_for_url(lambda url: "#/game/" in url and gid not in url, timeout=TIMEOUT_MS)
        expect(page.locator(".legend")).to_contain_text(bot_name, timeout=TIMEOUT_MS)
    finally:
        context.close()
        bot.terminate()
        output = bot.communicate(timeout=20)[0]
    assert "game" in output and "started (challenge:" in output, output


def test_a_bot_challenged_from_the_dialog_sits_down_and_plays(browser: Browser, web_url: str) -> None:
    """The dialog's 'Or a bot' (level 1, casual only): the page goes to the room the bot joins, then
    to the game, the bot marked by the platform; played to the end."""
    context = browser.new_context(viewport=DESKTOP)
    try:
        page = context.new_page()
        sign_in_as_guest(page, web_url)
        page.get_by_role("button", name="Challenge a player…").click()
        dialog = page.locator("dialog.challenge-dialog")
        expect(dialog.locator("select[name=game] option[value=connect4]")).to_have_count(1, timeout=TIMEOUT_MS)
        dialog.locator("select[name=bot]").select_option(label="Bot (level 1)")
        expect(dialog.get_by_placeholder("their name")).to_be_disabled()
        expect(dialog.locator("select[name=rated]")).to_be_disabled()
        dialog.locator("select[name=game]").select_option("connect4")
        dialog.locator("select[name=seat]").select_option(label="I move second")
        dialog.get_by_role("button", name="Send the challenge").click()
        game_id(page)  # by way of its room, which started when the bot sat down
        expect(page.locator(".legend li").first).to_contain_text("Bot (level 1)")  # it moves first, as asked
        expect(page.locator(".challenge-tray .note.accepted")).to_contain_text("Bot (level 1) accepted your challenge")
        moves = 0
        while wait_for_my_turn_or_end(page):
            legal = page.locator("svg.board.connect4 .column.legal").evaluate_all("gs => gs.map(g => g.dataset.column)")
            before = version(page)
            page.locator(f"svg.board.connect4 .column[data-column='{legal[moves % len(legal)]}'] rect.hit").click()
            wait_for_version_after(page, before)
            moves += 1
        expect(page.locator(".result")).to_be_visible(timeout=TIMEOUT_MS)
        assert moves >= 3
    finally:
        context.close()
