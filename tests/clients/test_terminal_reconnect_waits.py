"""The terminal's waits through a gateway restart, driven in tmux as a person would:
a room waiting for players, a search for an opponent, a tournament's feed, and `tafel bot`.

Each one has the gateway stopped (SIGTERM, as Ctrl-C on `make run` stops it) and started again on
the same port; meanwhile the screen says "Reconnecting…" in words, and afterwards it carries on
where it was (the room, the search and the tournament are kept by the platform, not the gateway).
No screen ever shows gRPC's own text (WatchedTerminal checks every capture)."""

from __future__ import annotations

import asyncio
import re
import time
import uuid

from tafel.client import TafelClient
from tafel.play.v1 import tournaments_pb2

from tests.clients.test_terminal import board_discs
from tests.clients.test_terminal_reconnect import DOWN_S, WatchedTerminal, status_line
from tests.clients.tmux import TAFEL, client_env, needs_tmux
from tools.platform import Platform

# `platform` is the clients' shared one (tests/clients/conftest.py: the whole platform, per module).
pytestmark = needs_tmux
LOST = "Lost the connection to the game server. Reconnecting…"
BACK = "Connected to the game server again."
# Past the point where today's bot gave up (20 failed reconnects, 2 s apart at most: ~33 s).
BOT_DOWN_S = 36.0


def game_id_on(screen: str) -> str:
    """The game id in the screen's first log line (a room's game r-…, a match's m-…)."""
    match = re.search(r"Game ([rm]-[A-Za-z0-9_-]+)", screen)
    assert match, f"no game id on screen:\n{screen}"
    return match.group(1)


def on_the_game_screen(screen: str) -> bool:
    return bool(re.search(r"Game [rm]-", screen)) and bool(re.search(r"YOUR TURN|waiting for", status_line(screen)))


def gateway_down(platform: Platform, terminal: WatchedTerminal, down_s: float, *words: str) -> None:
    """Stop the gateway, check the terminal says it is reconnecting (and `words`) for `down_s`,
    then start it again."""
    platform.terminate("gateway-0")
    down_since = time.monotonic()
    try:
        terminal.wait_all(LOST, *words, timeout_s=15)
        while time.monotonic() - down_since < down_s:
            assert "Reconnecting…" in terminal.screen()
            time.sleep(1.0)
    finally:
        platform.restart("gateway-0")  # a failure here must not leave the next test without a gateway


def test_a_room_waits_through_a_gateway_restart(platform: Platform) -> None:
    env = client_env(platform.gateway_addresses[0])
    host = WatchedTerminal(f"{TAFEL} play connect4 --new-room --per-move 300", env)
    guest: WatchedTerminal | None = None
    try:
        screen = host.wait_text("(host, you)", timeout_s=60)
        code = re.search(r"room ([A-Z0-9]{4,}) ·", screen).group(1)  # type: ignore[union-attr]

        gateway_down(platform, host, DOWN_S, "Your room is kept: wait, or press q to leave.")
        screen = host.wait_text(BACK, timeout_s=30)
        assert "Share the code" in screen and "Reconnecting…" not in screen, screen

        # The room is still there after the restart: a friend joins it and the game starts.
        guest = WatchedTerminal(f"{TAFEL} play connect4 --room {code}", env)
        host_screen = host.wait_text("YOUR TURN", timeout_s=30)
        guest_screen = guest.wait_text("waiting for", timeout_s=30)
        assert game_id_on(host_screen) == game_id_on(guest_screen)
    finally:
        host.close()
        if guest is not None:
            guest.close()


def test_a_search_for_an_opponent_goes_on_after_a_gateway_restart(platform: Platform) -> None:
    env = client_env(platform.gateway_addresses[0])
    seeker = WatchedTerminal(f"{TAFEL} play connect4 --per-move 240", env)
    other: WatchedTerminal | None = None
    try:
        seeker.wait_text("looking for a Connect Four opponent", timeout_s=30)
        time.sleep(1.0)  # the search reaches the queue

        gateway_down(platform, seeker, DOWN_S, "Your search is kept.")
        seeker.wait_text(f"{BACK} Still looking for a Connect Four opponent", timeout_s=30)

        # Someone searching now is matched with the search that outlived the restart.
        other = WatchedTerminal(f"{TAFEL} play connect4 --per-move 240", env)
        mine = seeker.wait_for(on_the_game_screen, 30, "the game screen")
        theirs = other.wait_for(on_the_game_screen, 30, "the game screen")
        assert game_id_on(mine) == game_id_on(theirs)
    finally:
        seeker.close()
        if other is not None:
            other.close()


async def _player(address: str, name: str) -> TafelClient:
    client = await TafelClient.connect(address)
    await client.register(name, "a-long-enough-password")
    return client


async def _create_and_join(address: str, name: str) -> str:
    async with await _player(address, name) as client:
        tournament = await client.create_tournament(
            name=f"club night {name}", game="connect4", format=tournaments_pb2.TOURNAMENT_FORMAT_SWISS, rounds=3
        )
        await client.join_tournament(tournament.tournament_id)
        return str(tournament.tournament_id)


async def _join(address: str, name: str, tournament_id: str) -> None:
    async with await _player(address, name) as client:
        await client.join_tournament(tournament_id)


def test_a_tournament_feed_resumes_after_a_gateway_restart(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    first, second = (f"{who}{uuid.uuid4().hex[:6]}" for who in ("ada", "bea"))
    tournament_id = asyncio.run(_create_and_join(address, first))
    watcher = WatchedTerminal(f"{TAFEL} tournament watch {tournament_id}", client_env(address))
    try:
        watcher.wait_text(f"{first} joined", timeout_s=30)

        gateway_down(platform, watcher, DOWN_S, "The tournament goes on.")
        # Back without waiting for an event (a quiet tournament sends none).
        screen = watcher.wait_text(f"{BACK} Following the tournament again.", timeout_s=30)
        assert screen.count(LOST) == 1, screen  # lost once, back once: no flicker

        asyncio.run(_join(address, second, tournament_id))
        screen = watcher.wait_text(f"{second} joined", timeout_s=20)
        # Resumed from the last event shown: nothing shown twice.
        assert screen.count(f"{first} joined") == 1 and screen.count(LOST) == 1, screen
    finally:
        watcher.close()


def test_a_bot_rides_out_a_long_gateway_restart(platform: Platform) -> None:
    env = client_env(platform.gateway_addresses[0])
    bot = WatchedTerminal(f"{TAFEL} bot connect4 --level 1 --games 1 --per-move 300", env)
    person: WatchedTerminal | None = None
    try:
        time.sleep(1.5)  # the bot's search reaches the queue
        person = WatchedTerminal(f"{TAFEL} play connect4 --per-move 300", env)
        screen = person.wait_for(on_the_game_screen, 30, "the game screen")
        if "YOUR TURN" not in status_line(screen):
            screen = person.wait_for(lambda s: "YOUR TURN" in status_line(s), 30, "my turn after the bot's move")

        gateway_down(platform, bot, BOT_DOWN_S, "(Ctrl-C stops the bot)")
        bot.wait_text(BACK, timeout_s=30)
        # The bot plays on: it answers the person's move in the same game.
        screen = person.wait_for(lambda s: "YOUR TURN" in status_line(s) and BACK in s, 30, "the game again")
        before = board_discs(screen)
        person.keys("4", "Enter")
        person.wait_for(
            lambda s: board_discs(s) >= before + 2 and "YOUR TURN" in status_line(s), 30, "the bot's answer"
        )
        person.keys("x", "x")  # resign: the bot's one game ends, and it says so
        bot.wait_text("won", timeout_s=30)
        bot.exited()
    finally:
        bot.close()
        if person is not None:
            person.close()
