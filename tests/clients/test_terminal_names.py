"""Names in the terminal client, in a real pseudo-terminal (tmux): a guest who
plays as "Jörg de Vries" (--name) against a level-2 bot reads the bot as "Bot (level 2)" in the
legend and in the game's log, never as a guest name."""

from __future__ import annotations

from tests.clients.tmux import TAFEL, Terminal, client_env, needs_tmux
from tools.platform import Platform

pytestmark = needs_tmux


def test_a_named_guest_plays_a_bot_shown_as_a_bot(platform: Platform) -> None:
    env = client_env(platform.gateway_addresses[0])
    player = Terminal(f"{TAFEL} play connect4 --vs-bot 2 --name 'Jörg de Vries'", env)
    try:
        screen = player.wait_all("YOUR TURN", "● you", "○ Bot (level 2)", timeout_s=30)
        assert "guest-" not in screen, screen
        player.keys("4", "Enter")
        player.wait_text("Bot (level 2) dropped a disc in column", timeout_s=30)
        player.keys("q")
        player.wait_text("press q again to leave", timeout_s=10)
        player.keys("q")
        player.exited()
    finally:
        player.close()
