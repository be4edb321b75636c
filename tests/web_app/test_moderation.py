"""Moderation in Chromium. Report -> queue -> ban -> audit entry: player A reports player B from
their game's page (B's name opens a dialog: block, then a report with a reason from the list and
details; A's account page lists B as blocked until A unblocks); a moderator's page shows the report
in the queue with the game and B's account, bans B; B's page, open on the game, says it is banned
with the moderator's reason by itself (its game ended by forfeit), and so does signing in again; the
audit log shows the ban; lifted and replaced by a two-hour suspension, B reads its end in words;
a warning to A shows on A's account page.
The account page: a new password (the old one no longer signs in, the new one does), the data
export downloaded as JSON naming the account, and deletion asked twice (dismissed, then accepted)
after which the name no longer signs in.

Screenshots of every new page, desktop and phone (390x844): build/screenshots/ (TAFEL_SCREENSHOTS=
docs/screenshots refreshes the ones the docs show)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from playwright.sync_api import Browser, Page, expect
from tafel.client import TafelClient

from gateway.standing.roles import ADMIN, MODERATOR
from gateway.standing.store import StandingStore
from kit.redis.layer import RedisLayer
from tests.web_app.app import TIMEOUT_MS, register
from tests.web_app.conftest import SCREENSHOTS
from tools.platform import Platform

PASSWORD = "correct horse battery"
DESKTOP = {"width": 1100, "height": 800}
PHONE = {"width": 390, "height": 844}
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """An SDK coroutine on its own event loop (Playwright's sync API owns the test's thread)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result(timeout=60)


async def grant(platform: Platform, username: str, role: int) -> None:
    """A staff role made on the server side, as `tafel-admin grant` does."""
    assert platform.redis_url is not None
    layer = RedisLayer.connect(platform.redis_url, max_connections=2)
    try:
        await StandingStore(layer).set_role(None, username, role, "made by the browser test")
    finally:
        await layer.close()


async def seat_both(platform: Platform, host: str, guest: str) -> str:
    """A Connect Four game between two registered accounts (a private room, both seated); its id."""
    async with (
        await TafelClient.connect(platform.gateway_addresses) as a,
        await TafelClient.connect(platform.gateway_addresses) as b,
    ):
        await a.sign_in(host, PASSWORD)
        await b.sign_in(guest, PASSWORD)
        room = await a.create_room("connect4", seats=2)
        joined = await b.join_room(room.code)
        return joined.game_id or (await a.wait_room_started(room.code)).game_id


def shoot(page: Page, name: str, full_page: bool = True) -> None:
    """The page at desktop width, then at a phone's (390x844), then back. A modal dialog's backdrop
    covers the viewport only, so dialogs are shot without the rest of the page (full_page=False)."""
    size = page.viewport_size or DESKTOP
    page.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=full_page)
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(100)  # a reflow
    page.screenshot(path=SCREENSHOTS / f"{name}-phone.png", full_page=full_page)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"], (
        f"{name} is wider than a phone"
    )
    page.set_viewport_size(size)


def test_report_queue_ban_audit(browser: Browser, web_url: str, platform: Platform) -> None:
    suffix = uuid.uuid4().hex[:6]
    names = {"a": f"ann{suffix}", "b": f"bob{suffix}", "m": f"mod{suffix}"}
    contexts = {k: browser.new_context(viewport=DESKTOP) for k in names}
    pages = {k: c.new_page() for k, c in contexts.items()}
    for key, page in pages.items():
        register(page, web_url, names[key], PASSWORD)
    run(grant(platform, names["m"], MODERATOR))
    game_id = run(seat_both(platform, names["a"], names["b"]))
    for key in ("a", "b"):
        pages[key].goto(f"{web_url}/#/game/{game_id}")
        expect(pages[key].locator("svg.board.connect4")).to_be_visible(timeout=TIMEOUT_MS)

    # A reports B from the game page: the name opens the dialog (block, mute, report).
    a = pages["a"]
    a.locator(".legend button.player-name", has_text=names["b"]).click()
    dialog = a.locator("dialog.player-dialog")
    expect(dialog.get_by_role("button", name="Block")).to_be_visible(timeout=TIMEOUT_MS)
    shoot(a, "player-dialog", full_page=False)
    dialog.get_by_role("button", name="Block").click()
    expect(dialog.get_by_role("button", name="Unblock")).to_be_visible(timeout=TIMEOUT_MS)
    dialog.get_by_role("button", name="Report…").click()
    dialog.locator("select[name=reason]").select_option(label="Insults, harassment or hate")
    dialog.locator("textarea[name=details]").fill("Called me names after every move.")
    shoot(a, "report-dialog", full_page=False)
    dialog.get_by_role("button", name="Send report").click()
    expect(dialog.locator(".thanks")).to_be_visible(timeout=TIMEOUT_MS)
    dialog.get_by_role("button", name="Close").click()

    # A's account page lists B as blocked; unblocking empties the list.
    a.locator("#user a.me").click()
    blocked = a.locator(f".blocked-list li[data-player='{names['b']}'][data-what=blocked]")
    expect(blocked).to_be_visible(timeout=TIMEOUT_MS)
    blocked.get_by_role("button", name="Unblock").click()
    expect(a.locator(".blocked-list")).to_contain_text("Nobody", timeout=TIMEOUT_MS)

    # The moderator's page: the Staff link appears once GetMe says so (after the grant: a reload).
    m = pages["m"]
    m.reload()
    m.locator("#user .staff-link").click()
    row = m.locator(".report-row", has_text=names["b"])
    expect(row).to_contain_text("Insults, harassment or hate", timeout=TIMEOUT_MS)
    expect(row).to_contain_text(f"by {names['a']}")
    expect(row).to_contain_text("with a game")
    shoot(m, "staff-queue")
    row.click()
    detail = m.locator(".report-detail")
    expect(detail.locator(".details")).to_have_text("Called me names after every move.", timeout=TIMEOUT_MS)
    expect(m.locator(".account-summary")).to_contain_text(names["b"])
    expect(m.locator("a[href='#/game/" + game_id + "']")).to_be_visible()  # the game, live still

    # Ban B (a confirmation first), for a reason B will read.
    form = m.locator("form.actions-form")
    form.locator("select[name=action]").select_option("ban")
    form.locator("textarea[name=reason]").fill("Abuse of other players in game chat")
    m.once("dialog", lambda d: d.accept())
    form.get_by_role("button", name="Apply").click()
    expect(m.locator(".staff .notice")).to_have_text(f"{names['b']} is banned until lifted.", timeout=TIMEOUT_MS)
    # The ban ended B's live game (a loss by forfeit): the report, opened again, shows its record.
    record = m.locator(".game-record")
    for _ in range(20):
        if record.count() > 0:
            break
        m.wait_for_timeout(500)
        m.reload()
        expect(detail).to_be_visible(timeout=TIMEOUT_MS)
    expect(record).to_contain_text(f"{names['a']} vs {names['b']}", timeout=TIMEOUT_MS)
    expect(record).to_contain_text(f"{names['a']} won")
    expect(m.locator(".account-summary .sanctions-now")).to_contain_text("banned until lifted")
    shoot(m, "staff-report")

    # B's page, still on the game, says so by itself: the reason and that it lasts until lifted.
    b = pages["b"]
    notice = b.locator(".sanction-notice")
    expect(notice.locator("h2")).to_have_text("Your account is banned", timeout=TIMEOUT_MS)
    expect(notice.locator(".why")).to_contain_text("Abuse of other players in game chat")
    expect(notice.locator(".until")).to_have_text("It lasts until a moderator lifts it.")
    shoot(b, "banned")
    # Signing in again says the same, not a generic error.
    notice.get_by_role("button", name="Sign in with another account").click()
    b.get_by_placeholder("name").fill(names["b"])
    b.get_by_placeholder("password").fill(PASSWORD)
    b.get_by_role("button", name="Sign in").click()
    expect(b.locator(".sanction-notice .why")).to_contain_text(
        "Abuse of other players in game chat", timeout=TIMEOUT_MS
    )

    # Resolve the report, then the audit log has the ban with who, whom and why.
    m.locator("textarea[name=resolution]").fill("Banned for abuse.")
    m.get_by_role("button", name="Resolve the report").click()
    expect(m.locator(".report-detail .status")).to_contain_text(f"resolved by {names['m']}", timeout=TIMEOUT_MS)
    m.locator(".staff-nav a", has_text="Audit log").click()
    entry = m.locator(".audit-entry[data-action=sanction]", has_text=names["b"]).first
    expect(entry).to_contain_text(f"{names['m']} banned {names['b']}", timeout=TIMEOUT_MS)
    expect(entry).to_contain_text("Abuse of other players in game chat")
    shoot(m, "staff-audit")
    m.locator(".audit-entry .user-link", has_text=names["b"]).first.click()
    expect(m.locator(".account-summary")).to_contain_text("banned until lifted", timeout=TIMEOUT_MS)
    expect(m.locator(".records .game-record")).to_contain_text(names["a"])
    shoot(m, "staff-user")

    # Lifted, then a suspension for two hours instead: B reads when it ends, in words.
    m.locator("form.lift-form input[name=lift-reason]").fill("Appeal: a suspension is enough")
    m.get_by_role("button", name="Lift").click()
    expect(m.locator(".staff .notice")).to_have_text(f"The sanction of {names['b']} is lifted.", timeout=TIMEOUT_MS)
    expect(m.locator(".account-summary")).to_contain_text("No sanction in force")
    form = m.locator("form.actions-form")
    form.locator("select[name=action]").select_option("suspend")
    form.locator("input[name=duration]").fill("2")
    form.locator("select[name=unit]").select_option(label="hours")
    form.locator("textarea[name=reason]").fill("Cooling off after abuse")
    form.get_by_role("button", name="Apply").click()
    expect(m.locator(".staff .notice")).to_contain_text(f"{names['b']} is suspended until", timeout=TIMEOUT_MS)
    expect(m.locator(".account-summary .sanctions-now")).to_contain_text("(in 2 hours)")
    b.get_by_role("button", name="Sign in with another account").click()
    b.get_by_placeholder("password").fill(PASSWORD)
    b.get_by_placeholder("name").fill(names["b"])
    b.get_by_role("button", name="Sign in").click()
    expect(notice.locator("h2")).to_have_text("Your account is suspended", timeout=TIMEOUT_MS)
    expect(notice.locator(".why")).to_have_text("Reason: Cooling off after abuse")
    expect(notice.locator(".until")).to_contain_text("(in 2 hours)")
    shoot(b, "suspended")
    expect(m.locator(".staff-nav a", has_text="Roles")).to_have_count(0)  # a moderator grants nothing

    # A warning reaches the player's account page (GetMyStanding).
    m.goto(f"{web_url}/#/staff/user/{names['a']}")
    form = m.locator("form.actions-form")
    form.locator("textarea[name=reason]").fill("One report per incident, please.")
    form.get_by_role("button", name="Apply").click()
    expect(m.locator(".staff .notice")).to_have_text(f"{names['a']} was warned.", timeout=TIMEOUT_MS)
    a.reload()
    expect(a.locator(".standing .warning")).to_contain_text("One report per incident, please.", timeout=TIMEOUT_MS)

    # An admin also sees the staff list and gives roles.
    run(grant(platform, names["m"], ADMIN))
    m.goto(f"{web_url}/#/staff/roles")
    m.reload()
    expect(m.locator(".staff-table tr[data-player='" + names["m"] + "']")).to_contain_text("admin", timeout=TIMEOUT_MS)
    shoot(m, "staff-roles")
    for context in contexts.values():
        context.close()


def test_account_page_password_export_delete(browser: Browser, web_url: str, tmp_path: Path) -> None:
    context = browser.new_context(viewport=DESKTOP, accept_downloads=True)
    page = context.new_page()
    name = f"cat{uuid.uuid4().hex[:6]}"
    register(page, web_url, name, PASSWORD)
    page.locator("#user a.me").click()
    expect(page.locator(".account-page h2")).to_have_text("My account", timeout=TIMEOUT_MS)
    expect(page.locator(".standing")).to_contain_text("good standing", timeout=TIMEOUT_MS)
    expect(page.locator(".blocked-list")).to_contain_text("Nobody")
    shoot(page, "account")

    # A new password: the old one no longer signs in, the new one does.
    new_password = "a brand new passphrase"
    form = page.locator("form.password-form")
    form.locator("input[name=current-password]").fill(PASSWORD)
    form.locator("input[name=new-password]").fill(new_password)
    form.locator("input[name=repeat-password]").fill(new_password)
    form.get_by_role("button", name="Change password").click()
    expect(form.locator(".message")).to_contain_text("Password changed", timeout=TIMEOUT_MS)
    page.reload()  # the fresh session was kept: still signed in
    expect(page.locator("#user a.me")).to_have_text(name, timeout=TIMEOUT_MS)
    page.get_by_role("button", name="Sign out").click()
    page.get_by_placeholder("name").fill(name)
    page.get_by_placeholder("password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator(".auth .message")).not_to_be_empty(timeout=TIMEOUT_MS)
    page.get_by_placeholder("password").fill(new_password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#user a.me")).to_have_text(name, timeout=TIMEOUT_MS)

    # The export: one JSON file that names the account.
    page.locator("#user a.me").click()
    with page.expect_download(timeout=TIMEOUT_MS) as download:
        page.get_by_role("button", name="Download my data (JSON)").click()
    assert download.value.suggested_filename == f"tafel-{name}.json"
    saved = tmp_path / "export.json"
    download.value.save_as(saved)
    assert name in json.dumps(json.loads(saved.read_text())), "the export does not name the account"

    # Deleting asks first: dismissed, nothing happens; accepted, the account is gone.
    page.locator("input[name=delete-password]").fill(new_password)
    page.once("dialog", lambda d: d.dismiss())
    page.get_by_role("button", name="Delete my account…").click()
    expect(page.locator("#user a.me")).to_have_text(name)
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Delete my account…").click()
    expect(page.locator("form.auth")).to_be_visible(timeout=TIMEOUT_MS)
    page.get_by_placeholder("name").fill(name)
    page.get_by_placeholder("password").fill(new_password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator(".auth .message")).not_to_be_empty(timeout=TIMEOUT_MS)
    expect(page.locator("#user a.me")).to_have_count(0)
    context.close()
