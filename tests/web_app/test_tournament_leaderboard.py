"""Tournaments and leaderboards in Chromium: a registered player creates a rated round-robin
Connect Four tournament from the page, a second one joins it from the list, the organiser's page
shows the new player by itself (after a dropped network too), starts it; both pages show the round's pairing with a link to
their game, play it, see their rating change, then the standings (final, updated by themselves)
and the leaderboard with both names."""

from __future__ import annotations

import uuid

from playwright.sync_api import Browser, expect

from tests.web_app.app import TIMEOUT_MS, play_connect4_between, register
from tests.web_app.conftest import SCREENSHOTS


def test_tournament_to_the_standings_and_leaderboard(browser: Browser, web_url: str) -> None:
    contexts = [browser.new_context(viewport={"width": 1100, "height": 800}) for _ in range(2)]
    host, guest = (c.new_page() for c in contexts)
    suffix = uuid.uuid4().hex[:6]
    names = [f"cleo{suffix}", f"dan{suffix}"]
    register(host, web_url, names[0], "correct horse battery")
    register(guest, web_url, names[1], "correct horse battery")

    host.get_by_role("link", name="Tournaments").click()
    form = host.locator("form.create-tournament")
    form.locator("input[name=name]").fill(f"Cup {suffix}")
    form.locator("select[name=game]").select_option("connect4")
    form.locator("select[name=format]").select_option(label="round robin")
    form.locator("input[name=capacity]").fill("2")
    form.locator("input[name=rated]").check()
    form.get_by_role("button", name="Create").click()
    expect(host.locator(".tournament h2")).to_have_text(f"Cup {suffix}", timeout=TIMEOUT_MS)
    host.get_by_role("button", name="Join").click()
    expect(host.locator(".tournament-players li")).to_have_count(1, timeout=TIMEOUT_MS)

    guest.get_by_role("link", name="Tournaments").click()
    guest.locator(".tournament-list a", has_text=f"Cup {suffix}").click()
    # The join's event reaches the organiser's page while its network drops every read: the page
    # says it is reconnecting and shows the new player once a read lands again.
    get_tournament = "**/tafel.play.v1.TournamentService/GetTournament"
    host.route(get_tournament, lambda route: route.abort("internetdisconnected"))
    guest.get_by_role("button", name="Join").click()
    host_message = host.locator(".tournament .message")
    expect(host_message).to_have_text("Reconnecting…", timeout=TIMEOUT_MS)
    host.wait_for_timeout(1000)  # the outage outlasts a unary call's own retries (0.7 s)
    expect(host.locator(".tournament-players li")).to_have_count(1)
    host.unroute(get_tournament)
    expect(host.locator(".tournament-players li")).to_have_count(2, timeout=TIMEOUT_MS)  # by itself
    expect(host_message).to_have_text("")
    host.get_by_role("button", name="Start now").click()

    for page in (host, guest):
        link = page.locator(".rounds a.my-game")
        expect(link).to_be_visible(timeout=TIMEOUT_MS)  # the round's pairing arrives by itself
        expect(page.locator(".round[data-round='1']")).to_contain_text(" vs ")
        # Told at the top that the game started and the clock runs, not left to find it.
        expect(page.locator(".your-game")).to_contain_text("your clock is running")
        expect(page.locator(".tournament-info")).to_contain_text("round 1 of 1")
        expect(page.locator(".standings th.tie-break").first).to_contain_text("Buchholz")
        expect(page.locator(".standings th.tie-break").last).to_contain_text("Sonneborn-Berger")
        link.click()
        expect(page.locator("svg.board.connect4")).to_be_visible(timeout=TIMEOUT_MS)
        expect(page.locator("a.tournament-link")).to_have_text("← Back to the tournament")  # and back
    moves = play_connect4_between([host, guest])
    for page in (host, guest):
        expect(page.locator(".result .rating-change")).to_contain_text("Your rating:", timeout=TIMEOUT_MS)
    rating_line = host.locator(".result .rating-change").inner_text()

    for page in (host, guest):
        page.go_back()
        expect(page.locator(".tournament-info")).to_contain_text("finished", timeout=TIMEOUT_MS)
        rows = page.locator(".standings tr")
        expect(rows).to_have_count(3)
        expect(page.locator(".round[data-round='1']")).to_contain_text("finished")
    host.screenshot(path=SCREENSHOTS / "tournament.png", full_page=True)

    host.get_by_role("link", name="Leaderboards").click()
    host.locator("select.leaderboard").select_option("connect4")
    table = host.locator("table.ratings")
    for name in names:
        expect(table).to_contain_text(name, timeout=TIMEOUT_MS)
    expect(host.locator(".my-rating")).to_contain_text("Your rating:")
    print(f"\nweb app: tournament game of {moves} moves; {rating_line}")
    for context in contexts:
        context.close()
