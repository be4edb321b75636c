"""A player's first hour in Chromium: a new guest's first game of each game, and the
defects a newcomer met, each checked through the page.

The walk, per game: "How to play" from the lobby (an article with drawn examples), a clock picked
(remembered on the next visit), a game against a level-1 bot, every message the page shows kept
and read (no seat numbers, enum names or "(s)"), a refusal provoked (the same move sent twice at
once: the second is refused) and said in words, to a result that offers "Play again" and the
lobby; the board does not move when the result shows. Then the pages that cannot show what a
link names (an unknown game, someone else's private game, a room that does not exist), a room
that says what it is for, a replay that jumps to a clicked move and plays by itself, and every
page's screenshot at phone (390x844) and desktop size."""

from __future__ import annotations

import random
import re
import uuid

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.web_app.app import (
    TIMEOUT_MS,
    place_coloursquare_round,
    sign_in_as_guest,
    version,
    wait_for_my_turn_or_end,
    wait_for_version_after,
)
from tests.web_app.conftest import SCREENSHOTS

DESKTOP = {"width": 1100, "height": 800}
PHONE = {"width": 390, "height": 844}
# What a player must never read: a seat number, an enum name, a "(s)" plural.
PROGRAMMER = re.compile(r"\bseat \d|\(s\)|\b[A-Z]{2,}_[A-Z_]+\b", re.IGNORECASE)
ENUM = re.compile(r"\b[A-Z]{2,}_[A-Z_]+\b")
# Every text any .message line shows, kept as it appears (a refusal is cleared by the next move).
KEEP_MESSAGES = """
window.__said = [];
new MutationObserver(() => {
  for (const m of document.querySelectorAll('.message')) {
    const t = m.textContent;
    if (t && window.__said[window.__said.length - 1] !== t) window.__said.push(t);
  }
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


def _said(page: Page) -> list[str]:
    return list(page.evaluate("() => window.__said"))


def _in_words(text: str) -> None:
    assert not re.search(r"\bseat \d|\(s\)", text, re.IGNORECASE), text
    assert not ENUM.search(text), text


def _new_guest(browser: Browser, url: str, viewport: dict[str, int] = DESKTOP) -> tuple[BrowserContext, Page]:
    context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    context.add_init_script(KEEP_MESSAGES)
    page = context.new_page()
    sign_in_as_guest(page, url)
    return context, page


def _twice(page: Page, selector: str) -> None:
    """Click `selector` twice in one task: both sends carry the same version, so the server takes
    the first and refuses the second."""
    page.locator(selector).first.evaluate(
        "el => { for (let i = 0; i < 2; i++) el.dispatchEvent(new MouseEvent('click', { bubbles: true })); }"
    )


def _connect4_turn(page: Page, rng: random.Random, first: bool) -> None:
    board = page.locator("svg.board.connect4")
    legal = board.locator(".column.legal").evaluate_all("gs => gs.map(g => g.dataset.column)")
    before = version(page)
    if first:
        # One highlight at a time: the key moves it, the mouse moves the same one.
        board.focus()
        page.keyboard.press("ArrowRight")
        board.locator(".column[data-column='4'] rect.hit").hover()
        expect(board.locator(".column.selected")).to_have_count(1)
        expect(board.locator(".column.selected")).to_have_attribute("data-column", "4")
        _twice(page, f"svg.board.connect4 .column[data-column='{legal[0]}'] rect.hit")
    else:
        board.locator(f".column[data-column='{rng.choice(legal)}'] rect.hit").click()
    wait_for_version_after(page, before)


def _plus4_turn(page: Page, rng: random.Random, first: bool) -> None:
    board = page.locator("svg.board.plus4")
    # The bonus choice sits above the frame it changes.
    # (read in one task: the page redraws the board after every move)
    above = page.evaluate(
        """() => {
          const choice = document.querySelector('.bonus-choice'), frame = document.querySelector('svg.board.plus4');
          return choice.getBoundingClientRect().bottom <= frame.getBoundingClientRect().top + 1;
        }"""
    )
    assert above, "the bonus choice is not above the frame"
    # A scored line is marked only while its four discs are still there.
    stale = board.evaluate(
        """svg => [...svg.querySelectorAll('.scored-line')].filter(line => line.dataset.cells.split(' ').some(rc => {
              const [r, c] = rc.split(',');
              const disc = svg.querySelector(`.disc[data-row='${r}'][data-column='${c}']`);
              return disc?.dataset.colour !== line.dataset.colour;
            })).length"""
    )
    assert stale == 0, "a scored line is drawn over discs that no longer make it"
    legal = board.locator(".push.legal").evaluate_all("gs => gs.map(g => g.dataset.column)")
    if not legal:  # no ordinary disc left: only the bonus disc can be pushed
        page.locator("input.bonus").check()
        legal = board.locator(".push.legal").evaluate_all("gs => gs.map(g => g.dataset.column)")
    before = version(page)
    if first:
        _twice(page, f"svg.board.plus4 .push[data-column='{legal[0]}'] rect.hit")
    else:
        board.locator(f".push[data-column='{rng.choice(legal)}'] rect.hit").click()
    wait_for_version_after(page, before)


def _coloursquare_turn(page: Page, rng: random.Random, first: bool) -> None:
    board = page.locator(".coloursquare-board")
    if board.locator("button.place").count() == 0:
        wait_for_version_after(page, version(page))  # asked, but the view is not yet drawn
        return
    if not first:
        place_coloursquare_round(page, rng, set(), [])
        return
    ask = board.locator(".ask")
    expect(ask).to_contain_text("Choose a die.")
    board.locator(".die:not([disabled])").first.click()
    expect(ask).to_contain_text("Now choose where the")
    expect(ask).not_to_contain_text("Choose a die.")
    board.locator(".sheet.mine .cell.target, .joker.target").first.click()
    expect(ask).not_to_contain_text("Now choose where")
    while board.locator("button.place").is_disabled():  # the active player must place two
        expect(ask).to_contain_text("Choose the next die.")
        board.locator(".die:not([disabled])").first.click()
        board.locator(".sheet.mine .cell.target, .joker.target").first.click()
    expect(ask).to_contain_text('"Place"')
    before = version(page)
    _twice(page, ".coloursquare-board button.place")
    wait_for_version_after(page, before)


TURNS = {"connect4": _connect4_turn, "plus4": _plus4_turn, "coloursquare": _coloursquare_turn}
TITLES = {"connect4": "Connect Four", "plus4": "Plus 4", "coloursquare": "Colour Square"}


def _page_top(page: Page) -> float:
    """The board's top on the page (not in the window: Playwright's clicks scroll the window)."""
    return float(page.evaluate("() => document.querySelector('.board-area').getBoundingClientRect().top + window.scrollY"))


@pytest.mark.parametrize("game", ["connect4", "plus4", "coloursquare"])
def test_a_first_game_as_a_new_guest(browser: Browser, web_url: str, game: str) -> None:
    context, page = _new_guest(browser, web_url)
    card = page.locator(f".game-card[data-game={game}]")
    _in_words(card.inner_text())  # the options as a player reads them, too

    # How to play, from the lobby: for players, with drawn examples; and back.
    card.get_by_role("link", name="How to play").click()
    article = page.locator(f"article.howto[data-game={game}]")
    expect(article.locator("h2")).to_have_text(f"How to play {TITLES[game]}", timeout=TIMEOUT_MS)
    expect(article.locator("h3").first).to_have_text("The goal")
    assert article.locator("figure svg").count() >= 1
    _in_words(article.inner_text())
    page.screenshot(path=SCREENSHOTS / f"howto-{game}.png", full_page=True)
    article.get_by_role("link", name="Back to the lobby").click()

    # The clock: a gentler first choice for long turns, and a choice that is remembered.
    clock = card.locator("select[name=clock]")
    expect(clock).to_have_value("300" if game == "coloursquare" else "60", timeout=TIMEOUT_MS)
    clock.select_option("300")
    page.reload()
    expect(page.locator(f".game-card[data-game={game}] select[name=clock]")).to_have_value("300", timeout=TIMEOUT_MS)
    if game == "coloursquare":
        # A first game short enough for CI: the round limit is an ordinary option of the card.
        card.locator("input[name=max_rounds]").fill("4")
    card.get_by_role("button", name="Play a bot (level 1)").click()

    expect(page.locator(".turn")).to_have_attribute("data-version", re.compile(r"\d+"), timeout=TIMEOUT_MS)
    expect(page.locator(".game h2")).to_have_text(TITLES[game])
    expect(page.locator(".game-links a.howto-link")).to_have_attribute("href", f"#/howto/{game}")
    clocks = page.locator(".legend .clock").all_inner_texts()
    assert any(re.fullmatch(r"[45]:\d\d", c) for c in clocks), clocks  # 5 min a move, not 1

    rng = random.Random(43)
    turns = 0
    top = None
    while wait_for_my_turn_or_end(page):
        top = _page_top(page)
        TURNS[game](page, rng, turns == 0)
        if turns == 1:
            page.screenshot(path=SCREENSHOTS / f"first-game-{game}.png", full_page=True)
        turns += 1
        assert turns < 300, "the game did not end"

    result = page.locator(".result")
    expect(result).to_be_visible(timeout=TIMEOUT_MS)
    assert result.locator("h3").inner_text() in ("You won!", "You lost.", "A draw.")
    expect(result.get_by_role("button", name="Play again")).to_be_visible()
    expect(result.get_by_role("link", name="Back to the lobby")).to_be_visible()
    end = _page_top(page)
    assert top is not None and abs(end - top) < 1, (top, end)  # no jump
    page.screenshot(path=SCREENSHOTS / f"result-{game}.png", full_page=True)

    said = _said(page)
    refusals = [s for s in said if s.startswith("Move refused:")]
    assert refusals, f"the move sent twice was not refused: {said}"
    for text in said:
        _in_words(text)
    _in_words(page.locator("main").inner_text())

    # Play again: the same game and settings, straight into a new game.
    game_url = page.url
    result.get_by_role("button", name="Play again").click()
    page.wait_for_function(
        "(u) => location.href !== u && location.hash.startsWith('#/game/')", arg=game_url, timeout=TIMEOUT_MS
    )
    expect(page.locator(".game h2")).to_have_text(TITLES[game], timeout=TIMEOUT_MS)
    context.close()


def test_a_page_that_cannot_show_its_game_or_room_says_why(browser: Browser, web_url: str) -> None:
    context, page = _new_guest(browser, web_url)
    # An unknown game id: not "Loading the game…" for ever.
    page.goto(f"{web_url}/#/game/no-such-game-{uuid.uuid4().hex[:6]}")
    expect(page.locator(".game h2")).to_have_text("This game cannot be shown", timeout=TIMEOUT_MS)
    expect(page.locator(".game .message")).to_contain_text("private game")
    expect(page.locator(".game a.lobby-link")).to_be_visible()

    # Someone else's private game (a bot game is a private room's): the same, to a spectator.
    page.locator(".game a.lobby-link").click()
    page.locator(".game-card[data-game=connect4]").get_by_role("button", name="Play a bot (level 1)").click()
    expect(page.locator("svg.board.connect4")).to_be_visible(timeout=TIMEOUT_MS)
    other_context, other = _new_guest(browser, web_url)
    other.goto(page.url)
    expect(other.locator(".game h2")).to_have_text("This game cannot be shown", timeout=TIMEOUT_MS)

    # A room code that names no room: said, with no invite link or bot buttons for it.
    other.goto(f"{web_url}/#/room/ABCDEFGHJK")
    expect(other.locator(".room h2")).to_have_text("No such room", timeout=TIMEOUT_MS)
    expect(other.locator("input.invite")).to_have_count(0)
    expect(other.locator(".add-bots")).to_be_hidden()
    expect(other.locator(".room a.lobby-link")).to_be_visible()
    for text in _said(page) + _said(other):
        _in_words(text)
    context.close()
    other_context.close()


def test_a_room_says_what_it_is_for_and_copies_its_link(browser: Browser, web_url: str) -> None:
    context, page = _new_guest(browser, web_url)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    card = page.locator(".game-card[data-game=connect4]")
    card.locator("input[name=rows]").fill("5")
    card.locator("select[name=clock]").select_option("30")
    card.get_by_role("button", name="Create a private room").click()
    title = page.locator(".room h2")
    expect(title).to_have_text(re.compile(r"^Connect Four · room [A-Z0-9]+$"), timeout=TIMEOUT_MS)
    about = page.locator(".room-about")
    expect(about).to_contain_text("2 players")
    expect(about).to_contain_text("Rows: 5")  # the option in words (game:options), not its field name
    expect(about).to_contain_text("30 seconds a move")
    expect(page.locator(".room-players .free")).to_have_text("1 seat free")
    page.get_by_role("button", name="Copy link").click()
    expect(page.locator(".copied")).to_contain_text("Copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == page.locator("input.invite").input_value()
    page.screenshot(path=SCREENSHOTS / "room.png", full_page=True)
    context.close()


def _finished_connect4(page: Page) -> str:
    """A Connect Four game against a bot, played to its end by clicking; returns its id."""
    page.locator(".game-card[data-game=connect4]").get_by_role("button", name="Play a bot (level 1)").click()
    expect(page.locator("svg.board.connect4")).to_be_visible(timeout=TIMEOUT_MS)
    game_id = page.url.rsplit("/", 1)[-1]
    rng = random.Random(5)
    while wait_for_my_turn_or_end(page):
        _connect4_turn(page, rng, first=False)
    return game_id


def test_a_replay_jumps_to_a_clicked_move_and_plays_by_itself(browser: Browser, web_url: str) -> None:
    context, page = _new_guest(browser, web_url)
    game_id = _finished_connect4(page)
    page.locator(".result a.replay-link").click()
    moves = page.locator(".replay-moves li")
    expect(moves.nth(4)).to_be_visible(timeout=TIMEOUT_MS)
    step = page.locator(".replay-controls .step")
    moves.nth(3).click()
    target = moves.nth(3).get_attribute("data-step")
    expect(step).to_have_attribute("data-step", target or "")
    expect(moves.nth(3)).to_have_class(re.compile(r"\bcurrent\b"))
    page.screenshot(path=SCREENSHOTS / "replay-jump.png", full_page=True)

    # By itself, fast, from the start to the last step, then it stops.
    page.locator("select.speed").select_option(label="fast")
    page.get_by_role("button", name="First step").click()
    page.get_by_role("button", name="Play the game by itself").click()
    expect(page.get_by_role("button", name="Pause")).to_be_visible()
    last = page.locator("input.jump").get_attribute("max")
    expect(step).to_have_attribute("data-step", last or "", timeout=TIMEOUT_MS)
    expect(page.get_by_role("button", name="Play the game by itself")).to_be_visible()
    assert game_id in page.url
    context.close()


PAGES = [
    ("lobby", "#/"),
    ("howto-connect4", "#/howto/connect4"),
    ("howto-plus4", "#/howto/plus4"),
    ("howto-coloursquare", "#/howto/coloursquare"),
    ("tournaments", "#/tournaments"),
    ("leaderboards", "#/leaderboards"),
]


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_every_page_on_a_phone_and_a_desktop(browser: Browser, web_url: str, size: str) -> None:
    """Screenshots of every page (docs/screenshots with TAFEL_SCREENSHOTS); on a phone nothing is
    wider than the screen."""
    viewport = PHONE if size == "phone" else DESKTOP
    context, page = _new_guest(browser, web_url, viewport)
    width = viewport["width"]

    def shot(name: str) -> None:
        page.wait_for_timeout(200)  # the page's first answers drawn
        wide = page.evaluate("() => document.documentElement.scrollWidth")
        if wide > width + 1:
            culprits = page.evaluate(
                """(w) => [...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right > w + 1)
                      .slice(0, 5).map(e => `${e.tagName}.${e.getAttribute('class')}`)""",
                width,
            )
            raise AssertionError(f"{name} is {wide} px wide on a {width} px screen: {culprits}")
        page.screenshot(path=SCREENSHOTS / f"{size}-{name}.png", full_page=True)

    for name, hash_ in PAGES:
        page.goto(f"{web_url}/{hash_}")
        expect(page.locator("main section, main article").first).to_be_visible(timeout=TIMEOUT_MS)
        shot(name)
    for game in ("connect4", "plus4", "coloursquare"):
        page.goto(f"{web_url}/#/")
        page.locator(f".game-card[data-game={game}]").get_by_role("button", name="Play a bot (level 1)").click()
        expect(page.locator(".turn")).to_have_attribute("data-version", re.compile(r"\d+"), timeout=TIMEOUT_MS)
        shot(f"game-{game}")
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name="Resign").click()
        expect(page.locator(".result")).to_be_visible(timeout=TIMEOUT_MS)
        shot(f"result-{game}")
    page.locator(".result a.replay-link").click()
    expect(page.locator(".replay-moves li").first).to_be_visible(timeout=TIMEOUT_MS)
    shot("replay")
    page.goto(f"{web_url}/#/")
    page.locator(".game-card[data-game=plus4]").get_by_role("button", name="Create a private room").click()
    expect(page.locator("input.invite")).to_be_visible(timeout=TIMEOUT_MS)
    shot("room")
    context.close()
