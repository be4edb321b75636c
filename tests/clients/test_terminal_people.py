"""The terminal's chat line, friends and profiles, driven as a person would (tmux): two
players in a room's game say a line each with `/`, which the other's screen shows under the board,
and a refusal is said in words; `tafel follow`, `tafel friends` (the followed player playing which
game) and `tafel profile NAME` (ratings with their history line, the last game, the result against
you) print what they should."""

from __future__ import annotations

import asyncio
import re
import uuid

from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient
from tafel.play.v1.play_pb2 import ROLE_MODERATOR
from tafel.staff import StaffClient

from tests.clients.test_sdk_standing import grant
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


async def test_a_chat_line_from_one_terminal_shows_in_the_other(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    ann, bert = await account(address, "ann"), await account(address, "bert")
    host = Terminal(f"{TAFEL} play connect4 --new-room --per-move 300", as_user(address, ann))
    guest: Terminal | None = None
    try:
        screen = await asyncio.to_thread(host.wait_text, "(host, you)", timeout_s=60)
        code = re.search(r"room ([A-Z0-9]{4,}) ·", screen).group(1)  # type: ignore[union-attr]
        guest = Terminal(f"{TAFEL} play connect4 --room {code}", as_user(address, bert))
        await asyncio.to_thread(host.wait_all, "YOUR TURN", "chat · players", timeout_s=30)
        await asyncio.to_thread(guest.wait_all, "waiting for", "chat · players", timeout_s=30)

        host.keys("/", "good luck, have fun", "Enter")
        await asyncio.to_thread(guest.wait_text, f"{ann.player.username}: good luck, have fun", timeout_s=15)
        await asyncio.to_thread(host.wait_text, "you: good luck, have fun", timeout_s=15)
        guest.keys("/", "thanks, you too", "Enter")
        await asyncio.to_thread(host.wait_text, f"{bert.player.username}: thanks, you too", timeout_s=15)

        # The keys are the board's again once the line is sent: 4 and Enter drop a disc.
        host.keys("4", "Enter")
        await asyncio.to_thread(host.wait_text, "You dropped a disc in column 4.", timeout_s=15)
        # Escape closes a line unsent; a line too fast is refused in words.
        guest.keys("/", "never mind", "Escape")
        await asyncio.sleep(0.5)  # a lone Escape is told from the start of a key sequence by a pause
        for n in range(5):
            guest.keys("/", f"spam {n}", "Enter")
        screen = await asyncio.to_thread(guest.wait_text, "Not sent:", timeout_s=15)
        assert "never mind" not in screen and "you: spam 3" in screen, screen

        # Bert reports Ann's latest line from the command line; the moderators get it with the
        # lines around it.
        game_id = (await ann.list_my_games()).games[0].game_id
        report = Terminal(
            f"{TAFEL} report {ann.player.username} --reason abuse --game {game_id} --chat", as_user(address, bert)
        )
        try:
            await asyncio.to_thread(report.wait_all, f"Reported {ann.player.username}", "EXITED 0")
        finally:
            report.close()
        moderator = await account(address, "mod")
        await grant(platform, moderator.player.username, ROLE_MODERATOR)
        await moderator.sign_in(moderator.player.username, PASSWORD)  # the role comes with a new session
        filed = [r async for r in StaffClient(moderator).all_reports()]
        mine = [r for r in filed if r.reported.username == ann.player.username]
        assert mine and mine[0].chat_context, filed
        line = next(m for m in mine[0].chat_context if m.message_id == mine[0].message_id)
        assert line.text == "good luck, have fun" and "thanks, you too" in [m.text for m in mine[0].chat_context]
        await moderator.close()

    finally:
        host.close()
        if guest is not None:
            guest.close()
        await ann.close()
        await bert.close()


async def test_friends_and_profile_print_presence_ratings_and_results(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    cleo, dirk, emil = await account(address, "cleo"), await account(address, "dirk"), await account(address, "emil")
    env = as_user(address, cleo)
    try:
        # A rated game cleo and dirk play to the end, then dirk at a table with emil.
        made = await cleo.create_challenge("connect4", username=dirk.player.username, rated=True, seat="first")
        rated = (await dirk.accept_challenge(made.challenge_id)).game_id
        await asyncio.gather(
            play_game(cleo, rated, 0, strategy_for("connect4", 3)),
            play_game(dirk, rated, 1, strategy_for("connect4", 1)),
        )
        async with dirk.event_stream():
            made = await emil.create_challenge("connect4", username=dirk.player.username)
            live = (await dirk.accept_challenge(made.challenge_id)).game_id

            follow = Terminal(f"{TAFEL} follow {dirk.player.username}", env)
            try:
                await asyncio.to_thread(follow.wait_all, f"You follow {dirk.player.username}", "EXITED 0")
            finally:
                follow.close()
            friends = Terminal(f"{TAFEL} friends", env)
            try:
                await asyncio.to_thread(friends.wait_all, "EXITED 0", dirk.player.username)
                assert f"playing Connect Four (tafel watch {live})" in friends.screen(), friends.screen()
            finally:
                friends.close()

            profile = Terminal(f"{TAFEL} profile {dirk.player.username}", env, width=140)
            try:
                screen = await asyncio.to_thread(profile.wait_all, "EXITED 0", "last games")
            finally:
                profile.close()
        outcome = (await cleo.get_record(rated)).outcome
        assert "joined" in screen and "followers  1" in screen and "you follow them" in screen, screen
        assert "playing Connect Four" in screen, screen
        assert rated in screen and "(rated)" in screen, screen
        assert re.search(r"Connect Four.*\d{3,4} .* [▁▂▃▄▅▆▇█]+", screen), screen  # the rating and its line
        counts = (
            "1 win, 0 losses, 0 draws"
            if list(outcome.winners) == [0]
            else ("0 wins, 0 losses, 1 draw" if outcome.draw else "0 wins, 1 loss, 0 draws")
        )
        assert f"you against them: {counts}" in screen, screen
    finally:
        for client in (cleo, dirk, emil):
            await client.close()
