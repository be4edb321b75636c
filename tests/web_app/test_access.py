"""Access: every page checked by axe-core (0 serious or critical violations) at a phone's
390x844, where none scrolls sideways and every button, link and input is 44x44 px (or has 44 px of
hit area); the three boards shot at 390 px and under Chromium's simulated deuteranopia, each colour
carrying its shape; the high-contrast option remembered; Connect Four and Colour Square played
with the keyboard only, the boards named for screen readers and moves said in the live region; the
lobby and a game page in Dutch and German (axe, <html lang> following the language); a staff
account's name readable in the phone's header; a tournament's standings after a round at 390 px."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from playwright.sync_api import Browser, Page, expect
from tafel.client import TafelClient

from gateway.standing.roles import MODERATOR
from tests.web_app.app import (
    TIMEOUT_MS,
    register,
    sign_in_as_guest,
    version,
    wait_for_my_turn_or_end,
    wait_for_version_after,
)
from tests.web_app.conftest import ROOT, SCREENSHOTS
from tests.web_app.i18n_check import LOCALES
from tests.web_app.test_moderation import grant, run
from tools.platform import Platform

AXE = ROOT / "clients" / "web" / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
PASSWORD = "correct horse battery"

# What must be 44x44 px: every control in the header and the page. A link inside a sentence is
# exempt (WCAG's inline exception): its parent has words of its own besides the link's.
SMALL_TARGETS = """() => {
  const out = [];
  const controls = document.querySelectorAll(
    'header a[href], header button, main a[href], main button, main input, main select, main textarea, main summary, main [role=button]');
  for (const el of controls) {
    if (el.closest('dialog:not([open]), [hidden], .visually-hidden')) continue;
    let r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (el.tagName === 'A') {
      const own = el.parentElement.cloneNode(true);
      own.querySelectorAll('a').forEach((a) => a.remove());
      if ((own.textContent.match(/\\p{L}/gu) || []).length >= 3) continue;
    }
    // A checkbox's hit area is its label too.
    const label = el.closest('label');
    if (label && (el.type === 'checkbox' || el.type === 'radio')) r = label.getBoundingClientRect();
    if (r.width < 43.5 || r.height < 43.5) {
      out.push(`${el.tagName.toLowerCase()}.${el.getAttribute('class') || ''} "${(el.getAttribute('aria-label') || el.textContent || el.value || '').trim().slice(0, 30)}" ${Math.round(r.width)}x${Math.round(r.height)}`);
    }
  }
  return out;
}"""


def axe_serious(page: Page) -> list[str]:
    """axe-core's serious and critical violations on the page as it stands, one line each."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(
        """async () => {
          const result = await axe.run(document, { resultTypes: ['violations'] });
          return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
            .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(' | ')}`);
        }"""
    )


def check(page: Page, name: str, found: list[str]) -> None:
    """axe, no sideways scrolling and 44 px targets on the page as it stands (what is wrong goes
    into `found`, so one run lists every page's faults); a phone screenshot."""
    page.wait_for_timeout(150)  # the page's first answers drawn
    problems = [f"axe: {v}" for v in axe_serious(page)]
    wide = page.evaluate("() => document.scrollingElement.scrollWidth")
    if wide > PHONE["width"]:
        culprits = page.evaluate(
            """(w) => [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > w + 1)
                  .slice(0, 5).map(e => `${e.tagName}.${e.getAttribute('class')}`)""",
            PHONE["width"],
        )
        problems.append(f"{wide} px wide: {culprits}")
    problems += [f"small target: {s}" for s in page.evaluate(SMALL_TARGETS)]
    page.screenshot(path=SCREENSHOTS / f"access-{name}.png", full_page=True)
    found += [f"{name}: {p}" for p in problems]


def start_bot_game(page: Page, url: str, game: str) -> None:
    page.goto(f"{url}/#/")
    page.locator(f".game-card[data-game={game}]").get_by_role("button", name="Play a bot (level 1)").click()
    expect(page.locator(".turn")).to_have_attribute("data-version", re.compile(r"\d+"), timeout=TIMEOUT_MS)


def deuteranopia(page: Page, name: str) -> None:
    """The board as a deuteranope sees it (Chromium's vision-deficiency emulation through CDP)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Emulation.setEmulatedVisionDeficiency", {"type": "deuteranopia"})
    page.wait_for_timeout(100)
    page.locator(".board-area").screenshot(path=SCREENSHOTS / f"deuteranopia-{name}.png")
    cdp.send("Emulation.setEmulatedVisionDeficiency", {"type": "none"})
    cdp.detach()


def resign(page: Page) -> None:
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("button.resign").click()
    expect(page.locator(".result")).to_be_visible(timeout=TIMEOUT_MS)


async def join_tournament(platform: Platform, tournament_id: str) -> str:
    """A second player with the longest name there is (24 letters) joins the tournament; the name."""
    async with await TafelClient.connect(platform.gateway_addresses) as client:
        name = f"Wilhelmina-Oosterhout{uuid.uuid4().hex[:3]}"
        await client.register(name, PASSWORD)
        await client.join_tournament(tournament_id)
        return name


def test_every_page_passes_axe_and_fits_a_phone(browser: Browser, web_url: str, platform: Platform) -> None:
    name = f"acc{uuid.uuid4().hex[:6]}"
    found: list[str] = []
    context = browser.new_context(viewport=PHONE, has_touch=True)
    page = context.new_page()
    page.goto(web_url)
    expect(page.get_by_role("button", name="Play as a guest")).to_be_visible(timeout=TIMEOUT_MS)
    check(page, "signin", found)
    register(page, web_url, name, PASSWORD)
    run(grant(platform, name, MODERATOR))  # the staff queue is one of the pages
    page.reload()
    expect(page.locator("#user .staff-link")).to_be_visible(timeout=TIMEOUT_MS)
    # The header keeps to two lines on a phone (it wrapped onto three).
    assert page.locator("header").bounding_box()["height"] <= 2 * 44 + 24  # type: ignore[index]
    # Beside "Staff" and the languages the account's name stays readable (it was cut to "a…"):
    # 8 of this one's 9 letters in the link's box (the ellipsis covers the last), "Sign out" a door
    # icon that keeps its words as its name.
    page.locator("header").screenshot(path=SCREENSHOTS / "access-header-staff.png")
    shown = page.locator("#user a.me").evaluate(
        """(e) => { const text = e.firstChild, range = document.createRange(), right = e.getBoundingClientRect().right;
              let n = 0; for (let i = 1; i <= text.length; i++) { range.setStart(text, 0); range.setEnd(text, i);
              if (range.getBoundingClientRect().right <= right + 0.5) n = i; } return n; }"""
    )
    assert shown >= 8, f"only {shown} letters of {name} show in the header"
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    expect(page.locator(".game-card").first).to_be_visible(timeout=TIMEOUT_MS)
    check(page, "lobby", found)

    # Each board while playing, after a move each side: every colour on it carries its shape.
    for game in ("connect4", "plus4", "coloursquare"):
        start_bot_game(page, web_url, game)
        assert wait_for_my_turn_or_end(page)
        before = version(page)
        if game == "connect4":
            page.locator("svg.board.connect4 .column.legal rect.hit").first.click()
        elif game == "plus4":
            page.locator("svg.board.plus4 .push.legal rect.hit").first.click()
        if game != "coloursquare":
            wait_for_version_after(page, before)
            assert wait_for_my_turn_or_end(page)
            board = page.locator("svg.board")
            for seat, shape in enumerate(("triangle", "circle" if game == "connect4" else "diamond")):
                discs = board.locator(f".disc[data-seat='{seat}'], .disc[data-colour='{seat}']").count()
                assert discs > 0, f"{game}: no disc of seat {seat}"
                assert board.locator(f".mark[data-mark={shape}]").count() == discs, (
                    f"{game}: seat {seat}'s discs lack {shape}"
                )
        else:
            sheet = page.locator(".sheet.mine")
            for colour, shape in ((1, "triangle"), (2, "circle"), (3, "square"), (4, "diamond")):
                cells = sheet.locator(f".cell[data-colour='{colour}']")
                assert cells.count() == cells.locator(f".mark[data-mark={shape}]").count() > 0
            # Purple and orange squares differ by more than their border's colour: a star, a plus,
            # in the key as well (sheet A has both kinds).
            for kind, shape in (("purple", "star"), ("orange", "cross")):
                squares = sheet.locator(f".square.{kind}")
                assert squares.count() == squares.locator(f".kind-badge .mark[data-mark={shape}]").count() > 0
                expect(page.locator(f".shape-key-item[data-colour={kind}] .mark[data-mark={shape}]")).to_have_count(1)
            for die, shape in (
                ("red", "triangle"),
                ("yellow", "circle"),
                ("green", "square"),
                ("blue", "diamond"),
                ("white", "ring"),
            ):
                expect(page.locator(f".die[data-die={die}] .mark[data-mark={shape}]")).to_have_count(1)
        check(page, f"game-{game}", found)
        page.locator(".board-area").screenshot(path=SCREENSHOTS / f"phone-board-{game}.png")
        deuteranopia(page, game)
        resign(page)
    page.locator(".result a.replay-link").click()
    expect(page.locator(".replay-moves li").first).to_be_visible(timeout=TIMEOUT_MS)
    check(page, "replay", found)

    page.goto(f"{web_url}/#/")
    page.locator(".game-card[data-game=plus4]").get_by_role("button", name="Create a private room").click()
    expect(page.locator("input.invite")).to_be_visible(timeout=TIMEOUT_MS)
    check(page, "room", found)

    page.goto(f"{web_url}/#/tournaments")
    form = page.locator("form.create-tournament")
    expect(form).to_be_visible(timeout=TIMEOUT_MS)
    check(page, "tournaments", found)
    form.locator("input[name=name]").fill(f"Cup {name}")
    form.locator("button.create").click()
    expect(page.locator(".tournament h2")).to_have_text(f"Cup {name}", timeout=TIMEOUT_MS)
    page.locator(".tournament button").first.click()  # join
    expect(page.locator(".tournament-players li")).to_have_count(1, timeout=TIMEOUT_MS)
    check(page, "tournament", found)
    # The standings after a round (rank, a long name, points, games, wins, draws, losses, Buchholz):
    # the table scrolls in its own named box, the page not at all.
    other = run(join_tournament(platform, page.evaluate("() => location.hash.split('/')[2]")))
    expect(page.locator(".tournament-players li")).to_have_count(2, timeout=TIMEOUT_MS)
    page.locator(".tournament button.start").click()
    page.locator(".rounds a.my-game").click()
    expect(page.locator(".turn")).to_have_attribute("data-version", re.compile(r"\d+"), timeout=TIMEOUT_MS)
    resign(page)
    page.go_back()
    expect(page.locator(".standings tr")).to_have_count(3, timeout=TIMEOUT_MS)
    expect(page.locator(".standings")).to_contain_text(other)
    check(page, "tournament-standings", found)

    for hash_, what, ready in (
        ("#/leaderboards", "leaderboards", "main table, main .ratings, main section"),
        (f"#/player/{name}", "profile", ".profile"),
        ("#/account", "account", ".account-page .card"),
        ("#/staff", "staff-queue", ".staff"),
    ):
        page.goto(f"{web_url}/{hash_}")
        expect(page.locator(ready).first).to_be_visible(timeout=TIMEOUT_MS)
        check(page, what, found)
    context.close()
    assert not found, "\n".join(found)


def test_high_contrast_is_remembered(browser: Browser, web_url: str) -> None:
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    sign_in_as_guest(page, web_url)
    toggle = page.locator("#contrast")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    toggle.click()
    expect(page.locator("html")).to_have_class(re.compile("high-contrast"))
    start_bot_game(page, web_url, "connect4")
    page.reload()  # remembered in this browser
    expect(page.locator("html")).to_have_class(re.compile("high-contrast"))
    expect(page.locator("#contrast")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("svg.board.connect4")).to_be_visible(timeout=TIMEOUT_MS)
    assert not axe_serious(page)
    page.locator(".board-area").screenshot(path=SCREENSHOTS / "high-contrast-connect4.png")
    page.locator("#contrast").click()
    expect(page.locator("html")).not_to_have_class(re.compile("high-contrast"))
    assert page.evaluate("() => localStorage.getItem('tafel.contrast')") is None
    context.close()


def _tab_to(page: Page, selector: str, limit: int = 60) -> int:
    """Tab from the top of the page until the focus is on `selector`; the presses it took."""
    page.evaluate("() => document.activeElement?.blur()")
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement?.matches(s) ?? false", selector):
            return presses
    raise AssertionError(f"Tab never reached {selector}")


def _focused(page: Page, attribute: str) -> str:
    return page.evaluate("(a) => document.activeElement?.getAttribute(a) ?? ''", attribute)


@pytest.mark.parametrize("game", ["connect4", "coloursquare"])
def test_a_game_with_the_keyboard_only(browser: Browser, web_url: str, game: str) -> None:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    sign_in_as_guest(page, web_url)
    start_bot_game(page, web_url, game)
    assert wait_for_my_turn_or_end(page)
    before = version(page)
    if game == "connect4":
        _tab_to(page, "svg.board .column")
        # One Tab stop for the board: the next Tab leaves the columns.
        page.keyboard.press("Tab")
        assert not page.evaluate("() => document.activeElement.matches('.column')")
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Home")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert re.match(r"Column 3, \d discs?", _focused(page, "aria-label")), _focused(page, "aria-label")
        # Every sentence the live region says (the bot's reply soon follows ours).
        page.evaluate(
            """() => { const region = document.getElementById('announce'); window.said = [];
                new MutationObserver(() => window.said.push(region.textContent)).observe(region, { childList: true, subtree: true, characterData: true }); }"""
        )
        page.keyboard.press("Enter")
        wait_for_version_after(page, before)
        column = page.locator("svg.board .column[data-column='2']")
        expect(column).to_have_attribute(
            "aria-label", re.compile(r"^Column 3, [12] discs?, top (red|yellow)"), timeout=TIMEOUT_MS
        )
        page.wait_for_function("() => window.said.some((s) => /column 3\\b/.test(s))", timeout=TIMEOUT_MS)
    else:
        _tab_to(page, ".die")
        assert re.fullmatch(r"(Red|Yellow|Green|Blue|White) die: \d", _focused(page, "aria-label"))
        placed = 0
        for _ in range(12):
            place = page.locator("button.place")
            if page.evaluate("() => document.activeElement?.matches('.die') ?? false"):
                page.keyboard.press("ArrowRight")
                page.keyboard.press("Enter")  # the die: the focus moves to the cells it may take
            elif page.evaluate("() => document.activeElement?.matches('.cell.target, .joker') ?? false"):
                label = _focused(page, "aria-label")
                assert re.match(r"(Red|Yellow|Green|Blue) cell, row \d, column \d: ", label) or label.startswith(
                    "Joker field"
                )
                page.keyboard.press("Enter")  # written: the focus goes back to the dice
                placed += 1
            elif place.is_enabled():
                _tab_to(page, "button.place")
                page.keyboard.press("Enter")
                break
            else:
                raise AssertionError(
                    f"the focus is lost: {page.evaluate('() => document.activeElement?.outerHTML.slice(0, 80)')}"
                )
            page.wait_for_timeout(50)
        wait_for_version_after(page, before)
        assert placed > 0
        assert page.locator(".sheet.mine .cell[role=img]").count() > 0
    context.close()


@pytest.mark.parametrize("lang", ["nl", "de"])
def test_dutch_and_german_pages_pass_axe(browser: Browser, web_url: str, lang: str) -> None:
    """The lobby and Colour Square (the board with the most words) in Dutch and German: <html lang>
    says the language (a screen reader then reads "schijf" with a Dutch voice), axe finds nothing
    serious, the phone's width holds the longer words."""
    words = json.loads((LOCALES / lang / "common.json").read_text("utf-8"))
    context = browser.new_context(locale={"nl": "nl-NL", "de": "de-DE"}[lang], viewport=PHONE)  # type: ignore[arg-type]
    page = context.new_page()
    page.goto(web_url)
    page.get_by_role("button", name=words["auth"]["guest"]).click()
    expect(page.locator(".game-card").first).to_be_visible(timeout=TIMEOUT_MS)
    assert page.evaluate("() => document.documentElement.lang") == lang
    found: list[str] = []
    check(page, f"{lang}-lobby", found)
    page.locator(".game-card[data-game=coloursquare] button.solo").click()
    expect(page.locator(".sheet.mine .cell").first).to_be_visible(timeout=TIMEOUT_MS)
    assert page.evaluate("() => document.documentElement.lang") == lang
    check(page, f"{lang}-game-coloursquare", found)
    context.close()
    assert not found, "\n".join(found)
