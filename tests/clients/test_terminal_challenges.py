"""The terminal's challenges and offers, driven as a person would (tmux) against a player on the SDK:
`tafel challenge NAME connect4 --per-move 30s --seat first` waits for the answer and opens the game;
a draw offered by the other side is accepted with d; m offers a rematch, which opens the next game
once accepted. `tafel challenges` lists one to you in words and declines it with a reason.
`tafel challenge --bot 1 connect4` opens the game once the pool's bot sits down."""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid

from tafel.client import TafelClient
from tafel.events import AccountEventStream
from tafel.play.v1 import challenges_pb2 as C
from tafel.play.v1 import play_pb2

from tests.clients.tmux import TAFEL, Terminal, client_env, needs_tmux
from tools.platform import Platform

pytestmark = needs_tmux
PASSWORD = "correct horse battery"


async def account(address: str, prefix: str) -> TafelClient:
    client = await TafelClient.connect(address)
    await client.register(f"{prefix}{uuid.uuid4().hex[:6]}", PASSWORD)
    return client


async def next_of(events: AccountEventStream, kind: str, timeout_s: float = 30.0) -> C.AccountEvent:
    while True:
        event = await events.next_event(timeout_s)
        if event.WhichOneof("kind") == kind:
            return event


async def test_challenge_draw_and_rematch_in_the_terminal(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    ann, bert = await account(address, "ann"), await account(address, "bert")
    env = client_env(address, TAFEL_USER=ann.player.username, TAFEL_PASSWORD=PASSWORD)
    terminal = Terminal(f"{TAFEL} challenge {bert.player.username} connect4 --per-move 30s --seat first", env)
    try:
        async with bert.event_stream() as events:
            made = (await next_of(events, "challenge")).challenge
            assert made.challenger.username == ann.player.username
            assert made.time_control.per_move.seconds == 30 and made.seat_preference == C.SEAT_PREFERENCE_FIRST
            await asyncio.to_thread(terminal.wait_all, "Waiting for an answer", "30 seconds a move")
            game_id = (await bert.accept_challenge(made.challenge_id)).game_id
            await asyncio.to_thread(terminal.wait_all, "YOUR TURN", game_id, timeout_s=30)

            await bert.make_offer(game_id, "draw")
            await asyncio.to_thread(terminal.wait_text, "offers a draw: press d to accept", timeout_s=20)
            terminal.keys("d")
            await asyncio.to_thread(terminal.wait_all, "GAME OVER", "a draw was agreed", timeout_s=20)
            assert (await bert.get_game(game_id)).summary.status.outcome.reason == "DRAW_AGREED"

            terminal.keys("m")
            offer = await next_of(events, "offer")
            while offer.offer.kind != play_pb2.OFFER_KIND_REMATCH:
                offer = await next_of(events, "offer")
            assert offer.offer.by.player.username == ann.player.username
            rematch = await bert.answer_offer(game_id, "rematch", True)
            # The terminal goes straight on to the rematch: seats rotated, bert moves first now.
            await asyncio.to_thread(terminal.wait_all, rematch.new_game_id, "waiting for", timeout_s=30)
            terminal.keys("q")
            await asyncio.to_thread(terminal.wait_text, "press q again to leave", timeout_s=10)
            terminal.keys("q")
            await asyncio.to_thread(terminal.exited)
    finally:
        terminal.close()
        await ann.close()
        await bert.close()


async def test_challenges_listed_and_declined_with_a_reason(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    cleo, dirk = await account(address, "cleo"), await account(address, "dirk")
    env = {"TAFEL_SERVER": address, "TAFEL_USER": dirk.player.username, "TAFEL_PASSWORD": PASSWORD}
    try:
        made = await cleo.create_challenge("connect4", username=dirk.player.username, rated=True, per_move_s=120)

        def tafel(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [*TAFEL.split(), *args], env={**os.environ, **env, "COLUMNS": "200"},
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip

        listed = await asyncio.to_thread(tafel, "challenges")
        assert listed.returncode == 0, listed.stderr
        assert made.challenge_id in listed.stdout and cleo.player.username in listed.stdout, listed.stdout
        assert "Connect Four, rated, 2 minutes a move" in listed.stdout, listed.stdout
        assert "CHALLENGE_STATUS" not in listed.stdout and "DECLINE_REASON" not in listed.stdout
        declined = await asyncio.to_thread(tafel, "challenges", "decline", made.challenge_id, "--reason", "too-slow")
        assert declined.returncode == 0, declined.stderr
        assert "(the clock is too slow for them)" in declined.stdout, declined.stdout
        answer = await cleo.get_challenge(made.challenge_id)
        assert answer.status == C.CHALLENGE_STATUS_DECLINED and answer.decline_reason == C.DECLINE_REASON_TOO_SLOW
    finally:
        await cleo.close()
        await dirk.close()


async def test_a_bot_challenged_from_the_terminal_sits_down_and_the_game_opens(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    finn = await account(address, "finn")
    env = client_env(address, TAFEL_USER=finn.player.username, TAFEL_PASSWORD=PASSWORD)
    terminal = Terminal(f"{TAFEL} challenge --bot 1 connect4 --seat first", env)
    try:
        await asyncio.to_thread(terminal.wait_all, "YOUR TURN", "Bot (level 1)", timeout_s=30)
        terminal.keys("q")
        await asyncio.to_thread(terminal.wait_text, "press q again to leave", timeout_s=10)
        terminal.keys("q")
        await asyncio.to_thread(terminal.exited)
    finally:
        terminal.close()
        await finn.close()
