"""The terminal client through a platform restart, driven in tmux as a person would.

A game against a bot with the gateway stopped (SIGTERM, as Ctrl-C on `make run` stops it) and
started again on the same port after longer than a unary call waits for one (GAP_S); a game between
two terminals with the whole platform stopped and started again (Redis kept, as `make run` keeps
it). The screens say "Reconnecting…" in words meanwhile, refuse a move without sending it, come back
to the game as the server has it (whose turn, which version), and moves are accepted afterwards. No
screen ever shows gRPC's own text."""

from __future__ import annotations

import re
import time

from tests.clients.test_terminal import board_discs
from tests.clients.tmux import TAFEL, Terminal, client_env, needs_tmux
from tests.platforms import platform_fixture
from tools.platform import Platform

pytestmark = needs_tmux
DOWN_S = 12.0  # longer than the SDK's unary wait for a gateway (client.GAP_S, 10 s)
# gRPC's own words, which are for programmers: never on a person's screen.
GRPC_TEXT = re.compile(r"failed to connect|UNKNOWN|UNAVAILABLE|ipv4:|Connection refused|StatusCode|errno")


class WatchedTerminal(Terminal):
    """A terminal whose every captured screen is checked for gRPC's text (and kept, for the report)."""

    def __init__(self, command: str, env: dict[str, str]) -> None:
        super().__init__(command, env)
        self.screens: list[str] = []

    def screen(self) -> str:
        text = super().screen()
        self.screens.append(text)
        leaked = GRPC_TEXT.search(text)
        assert leaked is None, f"gRPC's text {leaked.group(0)!r} on screen:\n{text}"
        return text


platform = platform_fixture(games=("connect4",))


def status_line(screen: str) -> str:
    """The line under the board that says whose turn it is (or that it is reconnecting)."""
    return next(
        (line for line in screen.splitlines() if re.search(r"YOUR TURN|waiting for|Reconnecting|GAME OVER", line)),
        "",
    )


def move_and_wait_for_the_bot(terminal: Terminal, column: int) -> str:
    before = board_discs(terminal.wait_text("YOUR TURN", timeout_s=30))
    terminal.keys(str(column), "Enter")
    # Mine and the bot's answer, then my turn again.
    return terminal.wait_for(
        lambda s: board_discs(s) >= before + 2 and "YOUR TURN" in status_line(s), 30, "my disc and the bot's answer"
    )


def test_the_game_survives_a_gateway_restart_with_reconnecting_words(platform: Platform) -> None:
    env = client_env(platform.gateway_addresses[0])
    player = WatchedTerminal(f"{TAFEL} play connect4 --vs-bot 1 --per-move 300", env)
    try:
        player.wait_all("YOUR TURN", "Game r-", timeout_s=60)
        move_and_wait_for_the_bot(player, 4)

        platform.terminate("gateway-0")
        down_since = time.monotonic()
        screen = player.wait_for(lambda s: "Reconnecting…" in status_line(s), 15, "Reconnecting… in the status line")
        assert "YOUR TURN" not in screen, screen
        player.wait_text("Lost the connection to the game server. Reconnecting…", timeout_s=5)
        # A move while the server is away is not sent (and says so in words).
        player.keys("3", "Enter")
        player.wait_text("Not sent: the game server is not answering", timeout_s=10)
        # Still reconnecting past the point where today's client gave up (a unary call's wait).
        while time.monotonic() - down_since < DOWN_S:
            assert "Reconnecting…" in status_line(player.screen())
            time.sleep(0.5)

        platform.restart("gateway-0")
        screen = player.wait_for(
            lambda s: "YOUR TURN" in status_line(s) and "Connected to the game server again." in s,
            30,
            "the game again after the restart",
        )
        assert "Reconnecting…" not in status_line(screen), screen
        # A move after the restart is accepted (made against the server's version, not an old one)
        # and the bot, whose pool went through the same restart, answers it.
        screen = move_and_wait_for_the_bot(player, 3)
        assert screen.count("You dropped a disc in column 3.") == 1, screen
        assert "Move refused" not in screen, screen
        player.keys("x", "x")  # resign, confirmed: the game ends cleanly
        player.wait_text("GAME OVER", timeout_s=20)
        player.keys("q")
        player.exited()
    finally:
        player.close()


def restart_everything(platform: Platform) -> None:
    """Every process stopped (rules, gateway, bot pool), then started again on its own port; Redis
    and its data stay, as with Ctrl-C and `make run`."""
    # In `make run`'s order: rules services, gateways, then the bot pool (a client of the gateways).
    names = sorted((child.name for child in platform.children), key=lambda n: (n == "bot-pool", "gateway" in n))
    for name in reversed(names):
        platform.terminate(name)
    time.sleep(DOWN_S)
    for name in names:
        platform.restart(name)


def test_two_players_through_a_whole_platform_restart(platform: Platform) -> None:
    env = client_env(platform.gateway_addresses[0])
    host = WatchedTerminal(f"{TAFEL} play connect4 --new-room --per-move 300", env)
    guest: WatchedTerminal | None = None
    try:
        screen = host.wait_text("(host, you)", timeout_s=60)
        code = re.search(r"room ([A-Z0-9]{4,}) ·", screen).group(1)  # type: ignore[union-attr]
        guest = WatchedTerminal(f"{TAFEL} play connect4 --room {code}", env)
        host.wait_text("YOUR TURN", timeout_s=30)  # the host moves first
        guest.wait_text("waiting for", timeout_s=30)

        restart_everything(platform)
        for terminal in (host, guest):
            # (What the screens showed while it was down is checked by the first test; here the
            # restart is over by the time this looks, so the log says both things.)
            terminal.wait_all("Lost the connection to the game server. Reconnecting…", timeout_s=30)
            terminal.wait_for(
                lambda s: "Connected to the game server again." in s and "Reconnecting…" not in status_line(s),
                30,
                "the game again after the restart",
            )
        assert "YOUR TURN" in status_line(host.wait_text("YOUR TURN", timeout_s=10))

        # After an accepted move it is the other player's turn, on both screens.
        host.keys("4", "Enter")
        screen = host.wait_for(lambda s: "waiting for" in status_line(s), 10, "the guest's turn on the host's screen")
        assert "You dropped a disc in column 4." in host.wait_text("You dropped a disc in column 4.", timeout_s=10)
        guest.wait_for(lambda s: "YOUR TURN" in status_line(s) and "dropped a disc in column 4." in s, 20, "my turn")
        guest.keys("5", "Enter")
        guest.wait_for(lambda s: "waiting for" in status_line(s), 10, "the host's turn on the guest's screen")
        host.wait_for(lambda s: "YOUR TURN" in status_line(s) and "dropped a disc in column 5." in s, 20, "my turn")
        for terminal in (host, guest):
            assert "Move refused" not in terminal.screen()
    finally:
        host.close()
        if guest is not None:
            guest.close()
