"""A tournament's director's page and an arena's page in Chromium. A director creates a
Swiss from the page and starts it; a browser player and an SDK player are paired; the director
corrects the game's result with a reason (the player's page shows the correction by itself),
announces (the player's page shows it) and downloads the export (three CSV files from the streamed
chunks). An arena: the browser player joins, the page shows the time left and live standings,
opens the game by itself when paired, shows the streak's fire after two wins, and pauses and comes
back. Screenshots at desktop width and 390 px; axe finds nothing serious on either page."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from playwright.sync_api import Browser, ViewportSize, expect
from tafel.client import TafelClient
from tafel.play.v1 import tournaments_pb2 as tp
from tafel.requests import duration

from tests.platforms import platform_fixture
from tests.web_app.app import TIMEOUT_MS, register
from tests.web_app.conftest import SCREENSHOTS
from tests.web_app.i18n_check import assert_no_english
from tests.web_app.test_access import SMALL_TARGETS, axe_serious
from tools.platform import Platform

T = TypeVar("T")
PHONE: ViewportSize = {"width": 390, "height": 844}


# Arenas of a minute, paired and ranked quickly.
platform = platform_fixture(
    env={"TAFEL_ARENA_MIN_S": "5", "TAFEL_ARENA_WAVE_S": "0.2", "TAFEL_ARENA_STANDINGS_S": "0.2"}
)


class Sdk:
    """SDK players on an event loop of their own (Playwright's sync API owns the test's thread)."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def run(self, make: Callable[[], Awaitable[T]]) -> T:
        async def wrapped() -> T:
            return await make()

        return asyncio.run_coroutine_threadsafe(wrapped(), self.loop).result(60)

    def player(self, prefix: str) -> TafelClient:
        async def make() -> TafelClient:
            client = await TafelClient.connect(self.address)
            await client.register(f"{prefix}{uuid.uuid4().hex[:8]}", "correct horse battery")
            return client

        return self.run(make)


def test_director_corrects_announces_and_exports(browser: Browser, web_url: str, platform: Platform) -> None:
    sdk = Sdk(platform.gateway_addresses[0])
    contexts = [browser.new_context(viewport={"width": 1100, "height": 900}, accept_downloads=True) for _ in range(2)]
    director, player = (c.new_page() for c in contexts)
    suffix = uuid.uuid4().hex[:6]
    register(director, web_url, f"dora{suffix}", "correct horse battery")
    register(player, web_url, f"pim{suffix}", "correct horse battery")

    director.get_by_role("link", name="Tournaments").click()
    form = director.locator("form.create-tournament")
    form.locator("input[name=name]").fill(f"Club {suffix}")
    form.locator("select[name=game]").select_option("connect4")
    form.locator("select[name=format]").select_option(label="swiss")
    form.locator("input[name=rounds]").fill("2")
    form.get_by_role("button", name="Create").click()
    panel = director.locator("section.director")
    expect(panel).to_be_visible(timeout=TIMEOUT_MS)  # the organiser directs it
    # Before the start: an entry condition and a round time, sent as the fields changed.
    panel.locator("input[name=minRatedGames]").fill("0")
    panel.locator("input[name=capacity]").fill("16")
    panel.get_by_label("Players need an invitation code").check()
    panel.locator("input[name=invitationCode]").fill("club-2026")
    panel.get_by_role("button", name="Save the changes").click()
    expect(panel.locator(".done")).to_have_text("Saved.", timeout=TIMEOUT_MS)
    director.screenshot(path=SCREENSHOTS / "tournament-director.png", full_page=True)

    tid = director.url.rsplit("/", 1)[-1]
    player.goto(f"{web_url}/#/tournament/{tid}")
    expect(player.locator("section.director")).to_have_count(0)  # players get no director's tools
    expect(player.locator(".tournament-facts")).to_contain_text("Needs an invitation code.")
    # Without the code: refused in words, the field kept; with it: in.
    player.get_by_role("button", name="Join").click()
    expect(player.locator(".tournament .message")).to_contain_text(
        "not this tournament's invitation code", timeout=TIMEOUT_MS
    )
    player.get_by_label("Invitation code").fill("club-2026")
    player.get_by_role("button", name="Join").click()
    expect(player.locator(".tournament-players li")).to_have_count(1, timeout=TIMEOUT_MS)
    expect(player.locator(".tournament .message")).to_have_text("")
    sam = sdk.player("sam")
    sdk.run(lambda: sam.join_tournament(tid, invitation_code="club-2026"))
    expect(director.locator(".director-players li")).to_have_count(2, timeout=TIMEOUT_MS)
    director.get_by_role("button", name="Start now").click()
    expect(player.locator(".rounds a.my-game")).to_be_visible(timeout=TIMEOUT_MS)

    # The director decides the game: the player won (a dispute), with the reason shown to players.
    panel.locator("details.correct-details summary").click()  # the games are listed on demand
    correct = panel.locator("form.correct-result")
    expect(correct.locator("select[name=correctGame] option")).to_have_count(1, timeout=TIMEOUT_MS)
    correct.get_by_label(f"pim{suffix} won").check()
    correct.locator("input[name=correctReason]").fill("the opponent's connection dropped")
    correct.get_by_role("button", name="Correct the result").click()
    expect(panel.locator(".done")).to_contain_text("corrected", timeout=TIMEOUT_MS)
    expect(player.locator(".tournament-news li.correction")).to_contain_text(
        "the opponent's connection dropped", timeout=TIMEOUT_MS
    )
    expect(player.locator(".round[data-round='1'] li")).to_contain_text("decided by a director")
    expect(player.locator(".round[data-round='1'] .correction")).to_contain_text("the opponent's connection dropped")
    expect(player.locator(".standings tr.me td").nth(2)).to_have_text("1")
    expect(director.locator("table.audit tr[data-action=CorrectResult]")).to_have_count(1, timeout=TIMEOUT_MS)

    panel.get_by_label("A message to every player").fill("Round 2 starts after the break.")
    panel.get_by_role("button", name="Send").click()
    expect(panel.locator(".done")).to_have_text("Sent to 2 players.", timeout=TIMEOUT_MS)
    expect(player.locator(".tournament-news li.announcement")).to_contain_text(
        "Round 2 starts after the break.", timeout=TIMEOUT_MS
    )

    # The export: each file a download, named by the server, from the streamed chunks.
    downloads = []
    director.on("download", lambda d: downloads.append(d))
    with director.expect_download(timeout=TIMEOUT_MS):
        panel.get_by_role("button", name="Download CSV").click()
    expect(panel.locator(".export-files a")).to_have_count(3, timeout=TIMEOUT_MS)
    director.wait_for_timeout(500)
    names = sorted(d.suggested_filename for d in downloads)
    assert [n.rsplit("-", 1)[-1] for n in names] == ["games.csv", "pairings.csv", "standings.csv"], names
    standings = next(d for d in downloads if d.suggested_filename.endswith("standings.csv"))
    text = Path(standings.path()).read_text(encoding="utf-8")
    assert f"pim{suffix}" in text
    assert axe_serious(director) == []
    director.screenshot(path=SCREENSHOTS / "tournament-director-running.png", full_page=True)
    player.screenshot(path=SCREENSHOTS / "tournament-player-corrected.png", full_page=True)
    director.set_viewport_size(PHONE)
    director.screenshot(path=SCREENSHOTS / "tournament-director-phone.png", full_page=True)
    assert director.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert director.evaluate(SMALL_TARGETS) == []  # every control a 44 px target on a phone
    # The director's page in Dutch and German: no English left (the server's audit details and
    # the director's own words aside).
    director.set_viewport_size({"width": 1100, "height": 900})
    for lang in ("nl", "de"):
        director.locator(f".lang-switch .lang-{lang}").click()
        expect(director.locator("section.director h3").first).not_to_have_text("Director's tools", timeout=TIMEOUT_MS)
        expect(director.locator("table.audit tr[data-action]")).to_have_count(3, timeout=TIMEOUT_MS)
        own_words = director.locator("table.audit td:nth-child(4), table.audit td:nth-child(5)").all_inner_texts()
        assert_no_english(director, lang, ignore=(*own_words, "Round 2 starts after the break."))
        director.screenshot(path=SCREENSHOTS / f"tournament-director-{lang}.png", full_page=True)
    director.locator(".lang-switch .lang-en").click()
    sdk.run(lambda: sam.close())
    for context in contexts:
        context.close()


def test_arena_page_standings_streak_pause_and_back(browser: Browser, web_url: str, platform: Platform) -> None:
    sdk = Sdk(platform.gateway_addresses[0])
    org, bea, ced = sdk.player("org"), sdk.player("bea"), sdk.player("ced")
    arena = sdk.run(
        lambda: org.create_tournament(
            name="Lunch arena", game="connect4", format=tp.TOURNAMENT_FORMAT_ARENA, arena_duration=duration(120)
        )
    )
    tid = arena.tournament_id
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    suffix = uuid.uuid4().hex[:6]
    register(page, web_url, f"ari{suffix}", "correct horse battery")
    page.goto(f"{web_url}/#/tournament/{tid}")
    page.get_by_role("button", name="Join").click()
    for client in (bea, ced):
        sdk.run(lambda client=client: client.join_tournament(tid))  # type: ignore[misc]
    sdk.run(lambda: org.start_tournament(tid))
    bots = {c.player.player_id: c for c in (bea, ced)}

    def let_the_others_go() -> None:
        """The two SDK players, paired with each other while ari plays, resign at once: ari's next
        opponent is then free (never the same opponent twice in a row)."""
        for g in sdk.run(lambda: org.tournament_games(tid)):
            seats = [p.player_id for p in g.players]
            if g.state == tp.TOURNAMENT_GAME_STATE_PLAYING and all(s in bots for s in seats):
                sdk.run(lambda g=g, seats=seats: bots[seats[0]].resign(g.game_id))  # type: ignore[misc]

    def step_away(bot: Any, paused: bool = True) -> None:
        sdk.run(lambda: bot.pause_arena_play(tid, paused=paused))

    me = page.locator(f".standings tr[data-player=ari{suffix}]")
    for win in (1, 2):
        # Paired: the game opens by itself; the opponent resigns.
        for _ in range(100):
            if "#/game/" in page.url:
                break
            let_the_others_go()
            page.wait_for_timeout(300)
        page.wait_for_url("**/#/game/*/tournament/*", timeout=TIMEOUT_MS)
        game_id = page.url.split("#/game/")[1].split("/")[0]
        summary = sdk.run(lambda game_id=game_id: org.get_game(game_id))  # type: ignore[misc]
        rival = next(bots[p.player.player_id] for p in summary.summary.players if p.player.player_id in bots)
        other = next(bot for bot in bots.values() if bot is not rival)
        # The free bot steps away first: otherwise the arena pairs ari with it the moment this game
        # ends (the rival may not come twice in a row) and the page opens that game by itself, as
        # a player wants, but with the standings out of sight.
        step_away(other)
        sdk.run(lambda rival=rival, game_id=game_id: rival.resign(game_id))  # type: ignore[misc]
        page.go_back()
        expect(page.locator(".arena-clock")).to_contain_text("left", timeout=TIMEOUT_MS)
        expect(me).to_have_attribute("data-streak", str(win), timeout=TIMEOUT_MS)
        assert "#/tournament/" in page.url
        if win == 1:  # the rival steps away, the other comes back: ari's only possible opponent
            step_away(rival)
            step_away(other, paused=False)
    expect(me.locator(".streak.hot [role=img]")).to_have_attribute("aria-label", "on a streak of 2 wins")
    # 2 a win; the fire says the next win counts double (4), after two in a row.
    expect(me.locator("td").nth(2)).to_have_text("4")

    page.get_by_role("button", name="Pause").click()
    expect(me).to_have_attribute("data-paused", "true", timeout=TIMEOUT_MS)
    expect(me).to_contain_text("(paused)")
    page.screenshot(path=SCREENSHOTS / "arena-phone.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert page.evaluate(SMALL_TARGETS) == []
    assert axe_serious(page) == []
    page.get_by_role("button", name="Come back").click()
    expect(me).to_have_attribute("data-paused", "false", timeout=TIMEOUT_MS)
    page.set_viewport_size({"width": 1100, "height": 800})
    page.screenshot(path=SCREENSHOTS / "arena.png", full_page=True)
    sdk.run(lambda: org.terminate_tournament(tid, "lunch is over"))
    for client in (org, bea, ced):
        sdk.run(lambda client=client: client.close())  # type: ignore[misc]
    context.close()
