"""The terminal's inbox, vacation and day clocks, driven as a person would (tmux): a
challenge and a 3-day game's turn reach `tafel inbox` in words with their ids; `tafel inbox wait`
prints a notice as it comes; `read ID` and `clear --all` change what every client sees (the SDK's
count agrees); `tafel vacation start --hours 48` and `end`; `tafel play connect4 --days 3` waits
in a correspondence pool."""

from __future__ import annotations

import asyncio
import re
import uuid

from tafel.client import TafelClient
from tafel.play.v1 import notices_pb2 as N

from tests.clients.tmux import TAFEL, Terminal, client_env, needs_tmux
from tools.platform import Platform

pytestmark = needs_tmux
PASSWORD = "correct horse battery"


async def account(address: str, prefix: str) -> TafelClient:
    client = await TafelClient.connect(address)
    await client.register(f"{prefix}{uuid.uuid4().hex[:6]}", PASSWORD)
    return client


def as_user(address: str, client: TafelClient) -> dict[str, str]:
    return client_env(address, TAFEL_USER=client.player.username, TAFEL_PASSWORD=PASSWORD)


async def run(command: str, env: dict[str, str], *wanted: str, width: int = 160) -> str:
    terminal = Terminal(f"{TAFEL} {command}", env, width=width)
    try:
        return await asyncio.to_thread(terminal.wait_all, "EXITED 0", *wanted)
    finally:
        terminal.close()


async def test_inbox_lists_reads_and_clears_notices_and_waits_for_new_ones(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    ann, ben = await account(address, "ann"), await account(address, "ben")
    env = as_user(address, ben)
    waiting: Terminal | None = None
    try:
        # `tafel inbox wait` prints the challenge's notice as it comes.
        waiting = Terminal(f"{TAFEL} inbox wait", env, width=160)
        await asyncio.to_thread(waiting.wait_text, "waiting for new ones", timeout_s=30)
        made = await ann.create_challenge("connect4", username=ben.player.username, days_per_move=3, seat="second")
        await asyncio.to_thread(
            waiting.wait_text, f"{ann.player.username} challenged you to Connect Four", timeout_s=15
        )
        game_id = (await ben.accept_challenge(made.challenge_id)).game_id
        # The game's first move is ben's (ann asked to move second): his turn, with the game's id.
        screen = await asyncio.to_thread(waiting.wait_text, "Your move in Connect Four")
        assert f"[{game_id}]" in screen, screen
        waiting.keys("C-c")
        waiting.close()
        waiting = None

        # `tafel games`: the 3-day game with its clock in days and hours.
        screen = await run("games", env, game_id)
        assert re.search(r"(2 d 23 h|3 d 0 h)", screen), screen

        listed = await ben.list_notifications()
        assert listed.unread == 2
        turn = next(n for n in listed.notifications if n.kind == N.NOTIFICATION_KIND_YOUR_TURN)
        screen = await run("inbox", env, "your notices (2 unread)", turn.notification_id)
        assert game_id in screen and made.challenge_id in screen, screen

        await run(f"inbox read {turn.notification_id}", env, "1 unread notice left")
        assert (await ben.list_notifications()).unread == 1
        screen = await run("inbox --unread", env, "your notices (1 unread)")
        assert turn.notification_id not in screen, screen
        await run("inbox clear --all", env, "0 unread notices left")
        assert not (await ben.list_notifications()).notifications
        await run("inbox", env, "no notices")

        # A vacation of two days: said with its end and what is left of the year's allowance.
        screen = await run("vacation start --hours 48", env, "you are on vacation until", "left this year:")
        assert (await ben.vacation()).active, screen
        game = (await ann.get_game(game_id)).summary
        assert list(game.vacation_seats) == [
            next(p.seat for p in game.players if p.player.username == ben.player.username)
        ]
        await run("vacation end", env, "you are not on vacation")
        assert not (await ben.vacation()).active
    finally:
        if waiting is not None:
            waiting.close()
        await ann.close()
        await ben.close()


async def test_notice_settings_from_the_command_line(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    cas = await account(address, "cas")
    env = as_user(address, cas)
    try:
        screen = await run(
            "notices --inbox opponent_moved=off --email your_turn=on --quiet 22:00-07:00 --digest on --digest-hour 8",
            env,
            "changed; your notice settings now:",
            "quiet hours: 22:00-07:00",
            "daily digest: at 08:00",
        )
        now = await cas.notification_settings()
        by_kind = {p.kind: p for p in now.preferences}
        assert not by_kind[N.NOTIFICATION_KIND_OPPONENT_MOVED].inbox and by_kind[N.NOTIFICATION_KIND_YOUR_TURN].email
        assert now.email_digest and now.digest_hour == 8, screen
        terminal = Terminal(f"{TAFEL} notices --time-zone Mars/Olympus", env, width=160)
        try:
            await asyncio.to_thread(terminal.wait_all, "refused:", "time zone", "EXITED 2")
        finally:
            terminal.close()
    finally:
        await cas.close()
