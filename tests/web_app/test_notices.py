"""Notices and correspondence clocks in Chromium: A challenges B to a 3-day Connect Four game from the lobby's dialog; B has
the app open in two tabs, and the bell's badge on both shows the challenge's notice as it arrives;
B accepts, the game page counts B's clock in days and hours ("2 d 23 h", in words for a screen
reader); on the other tab B opens the inbox from the bell (keyboard), reads both notices in words
and follows "Your move" to the game, and both tabs' badges count down; mark all read empties
them. B's vacation from the settings page shows on A's game page and ends. An address set on the
settings page is confirmed by opening the link from the mail the platform sent (a real SMTP
server in the test process), and a used-up link is refused in words. The inbox and the settings
at 390 px: no sideways scrolling. Screenshots in build/screenshots/ (notices-*.png)."""

from __future__ import annotations

import re
import time
import uuid
from email.message import EmailMessage

from playwright.sync_api import Browser, Page, expect

from tests.gateway.mail.relay import Relay, body, relayed_platform
from tests.web_app.app import TIMEOUT_MS, register
from tests.web_app.i18n_check import assert_fits, assert_no_english
from tests.web_app.test_access import check
from tests.web_app.test_challenges import DESKTOP, PASSWORD, PHONE, game_id, shoot

# The whole platform, its mails sent to an SMTP server in this process.
relay, platform = relayed_platform()


def expect_badge(page: Page, count: int) -> None:
    bell = page.locator("#user a.bell")
    expect(bell).to_have_attribute("data-unread", str(count), timeout=TIMEOUT_MS)
    if count:
        expect(bell.locator(".badge")).to_have_text(str(count))
        expect(bell).to_have_attribute("aria-label", f"Notices: {count} unread")
    else:
        expect(bell.locator(".badge")).to_be_hidden()


def mail_to(relay: Relay, address: str, timeout_s: float = 15.0) -> EmailMessage:
    deadline = time.monotonic() + timeout_s
    while not relay.to(address):
        assert time.monotonic() < deadline, f"no mail to {address}"
        time.sleep(0.05)
    return relay.to(address)[0]


def challenge_for_days(page: Page, whom: str) -> None:
    page.goto(page.url.split("#")[0] + "#/")
    page.get_by_role("button", name="Challenge a player…").click()
    dialog = page.locator("dialog.challenge-dialog")
    expect(dialog.locator("select[name=game] option[value=connect4]")).to_have_count(1, timeout=TIMEOUT_MS)
    dialog.get_by_placeholder("their name").fill(whom)
    dialog.locator("select[name=game]").select_option("connect4")
    dialog.locator("select[name=clock]").select_option(label="3 days a move (correspondence)")
    dialog.locator("select[name=seat]").select_option(label="I move second")
    dialog.get_by_role("button", name="Send the challenge").click()
    expect(dialog.locator(".thanks")).to_contain_text("Challenge sent to", timeout=TIMEOUT_MS)
    dialog.get_by_role("button", name="Close").click()


def test_badge_inbox_follow_vacation_and_email(browser: Browser, web_url: str, relay: Relay) -> None:
    suffix = uuid.uuid4().hex[:6]
    ann, ben = f"ann{suffix}", f"ben{suffix}"
    a_context, b_context = browser.new_context(viewport=DESKTOP), browser.new_context(viewport=DESKTOP)
    try:
        a, b = a_context.new_page(), b_context.new_page()
        register(a, web_url, ann, PASSWORD)
        register(b, web_url, ben, PASSWORD)
        b2 = b_context.new_page()  # B's second tab: the same session
        b2.goto(web_url)
        expect(b2.locator("#user .me")).to_have_text(ben, timeout=TIMEOUT_MS)
        for tab in (b, b2):
            expect_badge(tab, 0)

        # The challenge's notice: the badge on both of B's tabs, live.
        challenge_for_days(a, ben)
        for tab in (b, b2):
            expect_badge(tab, 1)
        incoming = b.locator(".challenge-tray li.incoming")
        expect(incoming).to_contain_text("3 days a move (correspondence)", timeout=TIMEOUT_MS)
        incoming.get_by_role("button", name="Accept").click()
        game = game_id(b)
        assert game_id(a) == game
        # B moves first: a YOUR_TURN notice too.
        for tab in (b, b2):
            expect_badge(tab, 2)

        # The clock in days and hours, its words for a screen reader.
        clock = b.locator(".legend .clock.running")
        expect(clock).to_have_text(re.compile(r"^(2 d 23 h|3 d 0 h)$"), timeout=TIMEOUT_MS)
        expect(clock).to_have_attribute("aria-label", re.compile(r"^Time left: (2 days, 23 hours|3 days)"))
        expect(a.locator(".legend .clock").first).to_have_text(re.compile(r"^\d d \d+ h$"))
        shoot(b, "notices-days-clock")

        # The other tab: the bell by keyboard, the inbox in words, the notice followed to its game.
        b2.locator("#user a.bell").focus()
        b2.keyboard.press("Enter")
        b2.wait_for_url(re.compile(r"#/inbox$"), timeout=TIMEOUT_MS)
        notices = b2.locator("ul.notices li.notice")
        expect(notices).to_have_count(2, timeout=TIMEOUT_MS)
        expect(notices.nth(0)).to_have_attribute("data-kind", "YOUR_TURN")
        expect(notices.nth(0)).to_contain_text("Your move in Connect Four")
        expect(notices.nth(1)).to_contain_text(f"{ann} challenged you to Connect Four.")
        expect(b2.locator("ul.notices li.notice.unread")).to_have_count(2)
        shoot(b2, "notices-inbox")
        notices.nth(0).locator("a.notice-link").click()
        b2.wait_for_url(re.compile(rf"#/game/{game}$"), timeout=TIMEOUT_MS)
        for tab in (b, b2):
            expect_badge(tab, 1)
        b2.locator("#user a.bell").click()
        expect(b2.locator("ul.notices li.notice.unread")).to_have_count(1, timeout=TIMEOUT_MS)
        b2.get_by_role("button", name="Mark all read").click()
        for tab in (b, b2):
            expect_badge(tab, 0)
        expect(b2.locator("ul.notices li.notice.unread")).to_have_count(0)

        # The lobby's "My games": whose move it is in the days-long game, and the time left.
        for page, says in ((a, r"(2 d 23 h|3 d 0 h) left"), (b2, r"your move, (2 d 23 h|3 d 0 h) left")):
            page.goto(web_url + "#/")
            expect(page.locator("ul.mine li").filter(has=page.locator(f"a[href='#/game/{game}']"))).to_contain_text(
                re.compile(says), timeout=TIMEOUT_MS
            )
        a.goto(web_url + f"#/game/{game}")

        # A vacation of two days: A's game page shows B away; ended, the mark is gone.
        b2.goto(web_url + "#/inbox/settings")
        vacation = b2.locator("section.vacation")
        expect(vacation.locator(".vacation-state")).to_have_text("You are not on vacation.", timeout=TIMEOUT_MS)
        expect(vacation.locator(".vacation-left")).to_contain_text("Left this year: ")
        vacation.locator("select[name=vacation-length]").select_option(label="2 days")
        vacation.get_by_role("button", name="Start vacation").click()
        expect(vacation.locator(".vacation-state")).to_contain_text("You are on vacation until", timeout=TIMEOUT_MS)
        # A's open game page hears of it by the OPPONENT_ON_VACATION notice (no reload).
        expect(a.locator(".legend .vacation-badge")).to_have_text("on vacation", timeout=TIMEOUT_MS)
        expect(a.locator(".legend .clock.on-vacation")).to_have_count(1)
        shoot(b2, "notices-settings")
        vacation.get_by_role("button", name="End vacation").click()
        expect(vacation.locator(".vacation-state")).to_have_text("You are not on vacation.", timeout=TIMEOUT_MS)
        a.reload()
        expect(a.locator(".legend .clock").first).to_be_visible(timeout=TIMEOUT_MS)
        expect(a.locator(".legend .vacation-badge")).to_have_count(0)

        # E-mail: set on the settings page, confirmed by the mailed link (opened in B's first tab).
        mailbox = f"{ben}@example.org"
        email = b2.locator("form.email-settings")
        expect(email.locator(".email-state")).to_have_text("No address yet.")
        email.locator("input[name=email]").fill(mailbox)
        email.get_by_role("button", name="Save and send the link").click()
        expect(email.locator(".message")).to_have_text(f"A link is on its way to {mailbox}.", timeout=TIMEOUT_MS)
        expect(email.get_by_role("button", name="Send the link again")).to_be_visible()
        link = re.search(r"https?://\S*#/email/confirm\?token=\S+", body(mail_to(relay, mailbox)))
        assert link, "no confirmation link in the mail"
        token = link.group(0).split("token=")[1]
        b.goto(web_url + f"#/email/confirm?token={token}")
        expect(b.locator(".email-result")).to_have_text(f"{mailbox} is confirmed for {ben}.", timeout=TIMEOUT_MS)
        shoot(b, "notices-email-confirmed")
        b2.reload()
        expect(b2.locator("form.email-settings .email-state")).to_have_text(
            f"{mailbox} (confirmed)", timeout=TIMEOUT_MS
        )
        # A link that is not one (a typo, or an old one replaced) is said in words.
        b.goto(web_url + f"#/email/confirm?token={token}x")
        expect(b.locator(".email-result")).to_have_text(
            re.compile(r"^This link cannot be used: This link is unknown"), timeout=TIMEOUT_MS
        )

        # The inbox and the settings in Dutch and German: no English left, nothing wider than a phone.
        b.set_viewport_size(PHONE)
        problems: list[str] = []
        for lang, title in (("nl", "Meldingen"), ("de", "Benachrichtigungen")):
            b.evaluate(f"() => localStorage.setItem('tafel.lang', '{lang}')")
            for page, heading in (("#/inbox", title), ("#/inbox/settings", "Vakantie" if lang == "nl" else "Urlaub")):
                b.goto(web_url + page)
                b.reload()
                expect(b.get_by_role("heading", name=heading)).to_be_visible(timeout=TIMEOUT_MS)
                b.wait_for_timeout(300)  # the settings and the list read
                assert_no_english(b, lang, ignore=(ann, ben, mailbox, "UTC", "Connect Four", "E-mail"))
                assert_fits(b)
                # axe (no serious or critical faults), 44 px targets; a phone screenshot.
                check(b, f"notices-{page.split('/')[-1]}-{lang}", problems)
        assert not problems, "\n".join(problems)
    finally:
        a_context.close()
        b_context.close()
