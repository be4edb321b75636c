"""The terminal client driven as a person would: a real pseudo-terminal (tmux), keys sent, the
screen read. Connect Four against a bot to the end with a spectator watching, the replay of that
game, and the one-line answers to a wrong game id, a down server and a mistyped user name."""

from __future__ import annotations

import re
import uuid

from tests.clients.tmux import TAFEL, Terminal, client_env, game_id_on, needs_tmux
from tools.platform import Platform

pytestmark = needs_tmux
COLUMNS_TO_TRY = "4352617"
BOARD_ROW = re.compile(r"^\s{2,}((?:[ ·●○()]{3})+)\s*$")


def board_discs(screen: str) -> int:
    """Discs on the drawn board (its rows only: the legend has symbols too)."""
    rows = [m.group(1) for line in screen.splitlines() if (m := BOARD_ROW.match(line))]
    return sum(row.count("●") + row.count("○") for row in rows)


def play_connect4_to_the_end(terminal: Terminal) -> str:
    for _ in range(60):
        screen = terminal.wait_text("YOUR TURN", "GAME OVER", timeout_s=60)
        if "GAME OVER" in screen:
            return screen
        before = board_discs(screen)
        for column in COLUMNS_TO_TRY:
            terminal.keys(column, "Enter")
            try:
                terminal.wait_for(lambda s, b=before: board_discs(s) > b or "GAME OVER" in s, 5, "my disc")
                break
            except AssertionError:
                continue  # that column was full ("Move refused" in the log): try the next
    return terminal.wait_text("GAME OVER", timeout_s=60)


def test_connect4_against_a_bot_with_a_spectator_then_the_replay(platform: Platform) -> None:
    env = client_env(platform.gateway_addresses[0])
    player = Terminal(f"{TAFEL} play connect4 --vs-bot 1 --watchable", env)
    spectator: Terminal | None = None
    try:
        player.wait_text("to watch it: `tafel watch", timeout_s=60)
        # Seat 1 (the room's host) moves first. The legend names both players with their symbols,
        # and shows both clocks.
        screen = player.wait_all("YOUR TURN", "● you", "○ Bot (level 1)", "to move", "a move)", timeout_s=60)
        game_id = game_id_on(screen)
        # The header names the game once (it is drawn a moment after the board, hence the wait).
        screen = player.wait_for(lambda s: game_id in s.splitlines()[0], 10, "the header")
        assert screen.splitlines()[0].count(game_id) == 1, screen
        spectator = Terminal(f"{TAFEL} watch {game_id}", env)
        spectator.wait_text("watching", timeout_s=30)
        watched = spectator.wait_for(lambda s: "quit" in s.strip().splitlines()[-1], 10, "the footer")
        footer = watched.strip().splitlines()[-1]
        assert "quit" in footer and "resign" not in footer and "move" not in footer, footer
        assert "you" not in watched.split("╭")[0].replace("your", ""), watched  # a spectator is nobody's "you"

        player.keys("4", "Enter")
        player.wait_text("You dropped a disc in column 4.", timeout_s=20)
        # The last disc is marked.
        player.wait_for(lambda s: "last move" in s and ("(●)" in s or "(○)" in s), 20, "the last move marked")
        spectator.wait_for(lambda s: re.search(r"\S+ dropped a disc in column 4\.", s) is not None, 20, "the drop")

        # q asks first: the game goes on without the player.
        player.keys("q")
        player.wait_text("press q again to leave", timeout_s=10)
        player.keys("Escape")

        play_connect4_to_the_end(player)
        screen = player.wait_all("GAME OVER", "Press q to quit", "Game over:", timeout_s=20)  # the log says so too
        assert any(verdict in screen for verdict in ("you won", "you lost", "draw")), screen
        spectator.wait_text("GAME OVER", timeout_s=30)
        player.keys("q")
        final = player.exited()
        assert any(verdict in final for verdict in ("you won", "you lost", "draw")), final
    finally:
        player.close()
        if spectator is not None:
            spectator.close()

    replay = Terminal(f"{TAFEL} replay {game_id}", env)
    try:
        screen = replay.wait_all("step 1 of", "1  2  3", timeout_s=30)
        total = int(re.search(r"step 1 of (\d+)", screen).group(1))  # type: ignore[union-attr]
        assert board_discs(screen) == 0 and total >= 8
        replay.keys("Right", "Right", "Right")
        # Created, then three drops.
        replay.wait_for(lambda s: "step 4 of" in s and board_discs(s) == 3, 10, "three discs at step 4")
        replay.keys("End")
        replay.wait_for(lambda s: f"step {total} of {total}" in s and ("won" in s or "draw" in s), 10, "the last step")
        replay.keys("q")
        replay.exited()
    finally:
        replay.close()


def test_error_lines_and_accounts(platform: Platform) -> None:
    env = client_env(platform.gateway_addresses[0])
    name = f"t{uuid.uuid4().hex[:10]}"
    commands = [
        f"{TAFEL} watch no-such-game",
        f"{TAFEL} games --server 127.0.0.1:9",  # a global option after the subcommand; nothing listens
        f"env TAFEL_PASSWORD=pw-{name} {TAFEL} games --user {name}",  # mistyped (unknown) name: no account made
        f"env TAFEL_PASSWORD=pw-{name} {TAFEL} --user {name} games",  # still none
        f"env TAFEL_PASSWORD=pw-{name} {TAFEL} games --user {name} --register",
        f"env TAFEL_PASSWORD=pw-{name} {TAFEL} games --user {name}",  # now it signs in
        f"env TAFEL_PASSWORD=wrong-password {TAFEL} games --user {name} --register",
    ]
    terminal = Terminal(" ; ".join(f"echo '>>' ; {c}" for c in commands), env, width=160)
    try:
        screen = terminal.exited(60)
        outputs = [part.strip() for part in screen.split(">>")[1:]]
        assert len(outputs) == len(commands), screen
        watch, down, unknown, unknown_again, registered, signed_in, wrong = outputs
        assert watch.splitlines()[0] == "not found: there is no game 'no-such-game' (`tafel games --live` lists them)"
        assert down.splitlines()[0].startswith("cannot reach the tafel server at 127.0.0.1:9")
        assert "make run" in down.splitlines()[0]
        for answer in (unknown, unknown_again):
            assert "wrong user name or password" in answer and "--register" in answer.splitlines()[0], answer
        assert f"registered the new account '{name}'" in registered
        assert "registered" not in signed_in and "finished games" in signed_in, signed_in
        assert "exists and the password is wrong" in wrong
        assert "Traceback" not in screen
    finally:
        terminal.close()


def test_a_tournament_created_joined_started_and_followed_from_the_client(platform: Platform) -> None:
    env = client_env(platform.gateway_addresses[0])
    organiser = f"o{uuid.uuid4().hex[:10]}"
    secret = {"TAFEL_PASSWORD": f"pw-{organiser}"}
    create = Terminal(
        f"{TAFEL} tournament create 'Friday cup' --rounds 1 --user {organiser} --register", {**env, **secret}
    )
    players: list[Terminal] = []
    try:
        screen = create.exited(30)
        tournament_id = re.search(r"id (t[0-9a-f]+)\.", screen).group(1)  # type: ignore[union-attr]
        players = [Terminal(f"{TAFEL} tournament join {tournament_id}", env) for _ in range(2)]
        first = players[0].wait_text("you joined", timeout_s=30)
        assert "joined Friday cup" in first
        players[0].wait_for(lambda s: re.search(r"guest-\S+ joined", s) is not None, 30, "the other player joining")
        start = Terminal(f"{TAFEL} tournament start {tournament_id} --user {organiser}", {**env, **secret})
        try:
            assert "started Friday cup with 2 players" in start.exited(30)
        finally:
            start.close()
        for player in players:
            player.wait_text("YOUR TURN", "waiting for", timeout_s=30)  # each one's game opened by itself
        players[0].keys("x", "x")  # resign, confirmed
        for player in players:
            player.wait_text("GAME OVER", timeout_s=30)
            player.keys("q")  # back to the feed
        for player in players:
            feed = player.wait_text("the tournament is over", timeout_s=60)
            assert "round 1 started" in feed and "board 1:" in feed, feed
            assert re.search(r"round 1, board 1: (you|guest-\S+) ahead of (you|guest-\S+)", feed), feed
            assert "player_joined" not in feed and "standings:" in feed
    finally:
        create.close()
        for player in players:
            player.close()


def test_finished_games_are_listed_with_their_result(platform: Platform) -> None:
    name = f"g{uuid.uuid4().hex[:10]}"
    env = client_env(platform.gateway_addresses[0], TAFEL_PASSWORD=f"pw-{name}", TAFEL_USER=name)
    terminal = Terminal(f"{TAFEL} play connect4 --vs-bot 1 --register; {TAFEL} games", env)
    try:
        screen = terminal.wait_all("YOUR TURN", "Game r-", timeout_s=60)
        game_id = game_id_on(screen)
        terminal.keys("x")
        terminal.wait_text("Press x again to resign", timeout_s=10)
        terminal.keys("x")
        terminal.wait_text("GAME OVER", timeout_s=20)
        terminal.keys("q")
        screen = terminal.exited(30)
        table = screen.split("your finished games")[1]
        row = next(line for line in table.splitlines() if game_id in line)
        assert "Connect Four" in row and "you lost" in row and name in row, screen
    finally:
        terminal.close()
