"""Knowing each other in Chromium: chat, friends with presence, profiles.

1. Two players and a spectator, each in their own browser context, chat in a game: the players'
   lines reach both players and never the spectator's pane; the spectator's line is in the
   spectators' pane (again after a reload: the history) and never in a player's; a player who
   blocked the other sees none of the blocked player's lines (live or after a reload); a line
   reported from the page lands in the moderators' queue with its id, channel and text.
2. A third person follows a player from the player's profile and sees, live in the lobby's friends
   box and on the profile page, "playing" (a game against a bot), then "online" (resigned), then
   "last seen" (the player's page closed).
3. A profile shows a rating chart with a point per rated game (two rated games played through the
   Python SDK), the last games linking to their replays and the results against the viewer; the
   name on a game page's seat leads there.

Screenshots, desktop and phone (390x844, none wider than the phone): build/screenshots/."""

from __future__ import annotations

import asyncio
import uuid

from playwright.sync_api import Browser, Page, expect
from tafel.admin.v1 import admin_pb2
from tafel.client import TafelClient
from tafel.connect4.v1 import connect4_pb2
from tafel.play.v1 import social_pb2
from tafel.staff import StaffClient

from gateway.standing.roles import MODERATOR
from tests.web_app.app import TIMEOUT_MS, register
from tests.web_app.test_moderation import DESKTOP, PASSWORD, grant, run, shoot
from tools.platform import Platform


def sign_in(page: Page, url: str, username: str) -> None:
    page.goto(url)
    page.get_by_placeholder("name").fill(username)
    page.get_by_placeholder("password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#user .me")).to_have_text(username, timeout=TIMEOUT_MS)


def say(page: Page, channel: str, text: str) -> None:
    """Write a line in the page's chat pane of `channel` and wait until the page shows it."""
    pane = page.locator(f".chat-pane[data-channel={channel}]")
    pane.locator("input.chat-input").fill(text)
    pane.locator("button.chat-send").click()
    expect(pane.locator(".chat-line .chat-text", has_text=text)).to_be_visible(timeout=TIMEOUT_MS)


def lines(page: Page, channel: str) -> list[str]:
    return page.locator(f".chat-pane[data-channel={channel}] .chat-line .chat-text").all_inner_texts()


async def watchable_game(platform: Platform, host: str, guest: str) -> str:
    """A Connect Four game between two accounts in a room anyone may watch; its id."""
    async with (
        await TafelClient.connect(platform.gateway_addresses) as a,
        await TafelClient.connect(platform.gateway_addresses) as b,
    ):
        await a.sign_in(host, PASSWORD)
        await b.sign_in(guest, PASSWORD)
        room = await a.create_room("connect4", seats=2, watchable=True)
        joined = await b.join_room(room.code)
        return joined.game_id or (await a.wait_room_started(room.code)).game_id


async def reports_about(platform: Platform, moderator: str, username: str) -> list[admin_pb2.Report]:
    async with await TafelClient.connect(platform.gateway_addresses) as client:
        await client.register(moderator, PASSWORD)
        await grant(platform, moderator, MODERATOR)
        await client.sign_in(moderator, PASSWORD)
        staff = StaffClient(client)
        return [r async for r in staff.all_reports() if r.reported.username == username]


def test_players_and_spectators_chat_apart_blocks_and_reports(
    browser: Browser, web_url: str, platform: Platform
) -> None:
    suffix = uuid.uuid4().hex[:6]
    names = {"a": f"ann{suffix}", "b": f"ben{suffix}", "s": f"sue{suffix}"}
    contexts = {k: browser.new_context(viewport=DESKTOP) for k in names}
    pages = {k: c.new_page() for k, c in contexts.items()}
    for key, page in pages.items():
        register(page, web_url, names[key], PASSWORD)
    game_id = run(watchable_game(platform, names["a"], names["b"]))
    for page in pages.values():
        page.goto(f"{web_url}/#/game/{game_id}")
        expect(page.locator("svg.board.connect4")).to_be_visible(timeout=TIMEOUT_MS)
    a, b, s = pages["a"], pages["b"], pages["s"]
    # A player sees the players' channel, a spectator the spectators' one, never the other.
    for page in (a, b):
        expect(page.locator(".chat-pane[data-channel=players][data-ready=true]")).to_be_visible(timeout=TIMEOUT_MS)
        expect(page.locator(".chat-pane[data-channel=spectators]")).to_have_count(0)
    expect(s.locator(".chat-pane[data-channel=spectators][data-ready=true]")).to_be_visible(timeout=TIMEOUT_MS)
    expect(s.locator(".chat-pane[data-channel=players]")).to_have_count(0)

    say(a, "players", "good luck, Ben")
    expect(b.locator(".chat-pane[data-channel=players] .chat-line", has_text="good luck, Ben")).to_be_visible(
        timeout=TIMEOUT_MS
    )
    expect(b.locator(f".chat-line[data-author={names['a']}] a.player-link")).to_have_attribute(
        "href", f"#/player/{names['a']}"
    )
    say(b, "players", "you too, Ann")
    expect(a.locator(".chat-line", has_text="you too, Ann")).to_be_visible(timeout=TIMEOUT_MS)

    say(s, "spectators", "Ann opens in the middle again")
    s.reload()  # the history: the spectator's line is kept
    expect(
        s.locator(".chat-pane[data-channel=spectators] .chat-line", has_text="Ann opens in the middle again")
    ).to_be_visible(timeout=TIMEOUT_MS)
    assert not any("good luck" in line or "you too" in line for line in lines(s, "spectators"))
    shoot(s, "chat-spectators")

    # B blocks A from the seat's dialog: A's lines leave B's pane, and later ones never come.
    b.locator(".legend button.player-name", has_text=names["a"]).click()
    dialog = b.locator("dialog.player-dialog")
    dialog.get_by_role("button", name="Block").click()
    expect(dialog.get_by_role("button", name="Unblock")).to_be_visible(timeout=TIMEOUT_MS)
    dialog.get_by_role("button", name="Close").click()
    expect(b.locator(".chat-line", has_text="good luck, Ben")).to_have_count(0)
    say(a, "players", "did you just block me?")
    say(b, "players", "a line after the blocked one")  # sent after A's: had A's come, it came first
    expect(a.locator(".chat-line", has_text="a line after the blocked one")).to_be_visible(timeout=TIMEOUT_MS)
    assert "did you just block me?" not in lines(b, "players")
    b.reload()
    expect(b.locator(".chat-line", has_text="a line after the blocked one")).to_be_visible(timeout=TIMEOUT_MS)
    assert not any(
        names["a"] == author for author in b.locator(".chat-line").evaluate_all("ls => ls.map(l => l.dataset.author)")
    )
    # Neither player ever saw the spectators' line.
    for page in (a, b):
        assert not any("opens in the middle" in line for line in lines(page, "players"))
    shoot(a, "chat-players")

    # A reports B's line from the chat: it lands in the moderators' queue with the line.
    reported = a.locator(".chat-line", has_text="a line after the blocked one")
    message_id = reported.get_attribute("data-id")
    reported.locator("button.chat-report").click()
    report = a.locator("dialog.report-line-dialog")
    expect(report.locator(".reported-line")).to_have_text("a line after the blocked one")
    report.locator("select[name=reason]").select_option(label="Insults, harassment or hate")
    shoot(a, "chat-report-dialog", full_page=False)
    report.get_by_role("button", name="Send report").click()
    expect(report.locator(".thanks")).to_be_visible(timeout=TIMEOUT_MS)
    queued = run(reports_about(platform, f"mod{suffix}", names["b"]))
    assert [r.message_id for r in queued] == [message_id]
    assert queued[0].chat_channel.kind == social_pb2.CHAT_CHANNEL_KIND_GAME_PLAYERS
    assert queued[0].chat_channel.id == game_id
    assert "a line after the blocked one" in [m.text for m in queued[0].chat_context]
    for context in contexts.values():
        context.close()


def test_a_follower_sees_playing_then_online_then_last_seen(browser: Browser, web_url: str) -> None:
    suffix = uuid.uuid4().hex[:6]
    ann, cat = f"ann{suffix}", f"cat{suffix}"
    a_context = browser.new_context(viewport=DESKTOP)
    a = a_context.new_page()
    register(a, web_url, ann, PASSWORD)
    c_context = browser.new_context(viewport=DESKTOP)
    lobby = c_context.new_page()
    register(lobby, web_url, cat, PASSWORD)
    friend = lobby.locator(f".friends-box li.friend[data-player={ann}]")
    expect(lobby.locator(".friends-box")).to_contain_text("You follow nobody yet", timeout=TIMEOUT_MS)

    # Cat follows Ann from her profile (a second page of Cat's: the lobby stays open).
    profile = c_context.new_page()
    profile.goto(f"{web_url}/#/player/{ann}")
    profile.get_by_role("button", name="Follow").click()
    expect(profile.get_by_role("button", name="Unfollow")).to_be_visible(timeout=TIMEOUT_MS)
    presence = profile.locator(".profile-presence")
    expect(presence).to_have_attribute("data-state", "online", timeout=TIMEOUT_MS)
    lobby.reload()
    expect(friend).to_have_attribute("data-state", "online", timeout=TIMEOUT_MS)
    expect(friend.get_by_role("button", name="Challenge")).to_be_visible()

    # Ann plays a bot: "playing Connect Four", on both of Cat's pages by themselves.
    a.locator(".game-card[data-game=connect4]").get_by_role("button", name="Play a bot (level 1)").click()
    expect(a.locator("svg.board.connect4")).to_be_visible(timeout=TIMEOUT_MS)
    expect(friend).to_have_attribute("data-state", "playing", timeout=TIMEOUT_MS)
    expect(friend.locator(".presence")).to_contain_text("playing Connect Four")
    expect(presence).to_have_attribute("data-state", "playing", timeout=TIMEOUT_MS)
    shoot(lobby, "friends-playing")

    # She resigns: online again.
    a.once("dialog", lambda d: d.accept())
    a.get_by_role("button", name="Resign").click()
    expect(a.locator(".result")).to_be_visible(timeout=TIMEOUT_MS)
    expect(friend).to_have_attribute("data-state", "online", timeout=TIMEOUT_MS)
    expect(presence).to_have_attribute("data-state", "online", timeout=TIMEOUT_MS)

    # She closes her page: last seen just now.
    a_context.close()
    expect(friend).to_have_attribute("data-state", "offline", timeout=TIMEOUT_MS)
    expect(friend.locator(".presence")).to_contain_text("last seen")
    expect(presence).to_contain_text("last seen", timeout=TIMEOUT_MS)
    expect(friend.get_by_role("button", name="Challenge")).to_have_count(0)
    shoot(profile, "profile-follower")
    c_context.close()


async def two_rated_games(platform: Platform, winner: str, loser: str) -> list[str]:
    """Two rated Connect Four games the loser resigns after a move each; their ids, once both
    count in the winner's rating history."""
    ids = []
    async with (
        await TafelClient.connect(platform.gateway_addresses) as w,
        await TafelClient.connect(platform.gateway_addresses) as lc,
    ):
        await w.register(winner, PASSWORD)
        await lc.register(loser, PASSWORD)
        for _ in range(2):
            made = await lc.create_challenge("connect4", username=winner, rated=True, seat="first")
            game_id = (await w.accept_challenge(made.challenge_id)).game_id
            await w.wait_for_game(game_id)
            await lc.submit_move(game_id, connect4_pb2.Move(column=3))
            await w.submit_move(game_id, connect4_pb2.Move(column=3))
            await lc.resign(game_id)
            ids.append(game_id)
        for _ in range(100):  # ratings are written just after a game ends
            profile = await w.get_profile(winner)
            if sum(len(r.history) for r in profile.ratings) >= 2:
                return ids
            await asyncio.sleep(0.2)
    raise AssertionError("the rated games never reached the rating history")


def test_profile_chart_and_seat_names_lead_to_it(browser: Browser, web_url: str, platform: Platform) -> None:
    suffix = uuid.uuid4().hex[:6]
    win, lose = f"wes{suffix}", f"lou{suffix}"
    game_ids = run(two_rated_games(platform, win, lose))
    page = browser.new_context(viewport=DESKTOP).new_page()
    sign_in(page, web_url, lose)
    page.goto(f"{web_url}/#/game/{game_ids[-1]}")
    seat = page.locator(f".legend a.player-link[data-player={win}]")
    expect(seat).to_be_visible(timeout=TIMEOUT_MS)
    seat.click()
    expect(page).to_have_url(f"{web_url}/#/player/{win}")
    chart = page.locator(".profile-rating[data-leaderboard=connect4] svg.rating-chart")
    expect(chart).to_be_visible(timeout=TIMEOUT_MS)
    expect(chart.locator("circle.point")).to_have_count(2)
    expect(page.locator(".profile-rating[data-leaderboard=connect4]")).to_contain_text("2 rated games")
    for game_id in game_ids:
        expect(page.locator(f".recent-game a.replay-link[href='#/replay/{game_id}']")).to_be_visible()
    expect(page.locator(".against-you")).to_contain_text("You won 0, lost 2 and drew 0 of 2 games")
    shoot(page, "profile")
    page.context.close()
