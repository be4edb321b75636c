"""Plus 4 and Colour Square in the terminal client, in a real pseudo-terminal (tmux): Plus 4 against
a bot to the end with the bonus disc; Colour Square alone to the end, placing in every row and on a
joker field (↑/↓ must reach the board); a Colour Square room between two terminal clients, started
early by its host, where the white die cannot be queued twice."""

from __future__ import annotations

import re

from tests.clients.tmux import TAFEL, Terminal, client_env, needs_tmux
from tools.platform import Platform

pytestmark = needs_tmux
COLOURS = "RYGB"
DIE_KEYS = {"R": "r", "Y": "y", "G": "g", "B": "b"}
COLOUR_WORDS = {"R": "red", "Y": "yellow", "G": "green", "B": "blue"}


def moves_made(screen: str) -> int:
    """The move count the board shows (-1 in a frame drawn before the board)."""
    match = re.search(r"move (\d+) of at most", screen)
    return int(match.group(1)) if match else -1


def test_plus4_against_a_bot_to_the_end_with_the_bonus_disc(platform: Platform) -> None:
    terminal = Terminal(f"{TAFEL} play plus4 --vs-bot 1 --target 2", client_env(platform.gateway_addresses[0]))
    try:
        terminal.wait_text("Game r-", timeout_s=60)
        # The target is shown; the legend names the players with their symbols.
        screen = terminal.wait_all("YOUR TURN", "goal: first to 2 points", "● you", "+ bonus ◆", timeout_s=60)
        assert "rounds won" not in screen  # a points game has no rounds
        terminal.keys("b")
        terminal.wait_text("next push: BONUS disc", timeout_s=10)
        terminal.keys("1", "Enter")
        terminal.wait_text("You pushed the bonus disc into column 1.", timeout_s=20)
        screen = terminal.wait_all("your bonus disc is used", "(bonus used)", timeout_s=20)
        assert "◆" in screen.split("goal:")[0]  # the bonus disc on the board
        # Push into column 1 until the game ends: every push is an ordinary disc and none is refused
        # (the bonus toggle went stale before: the next push was refused with NO_BONUS_DISC).
        # Up to the move limit: with the bot's supply empty its turns are skipped and all the
        # pushes are ours, so half the limit is not enough (seen: move 213 of 400 after 200 pushes).
        for _ in range(400):
            screen = terminal.wait_text("YOUR TURN", "GAME OVER", timeout_s=60)
            if "GAME OVER" in screen:
                break
            before = moves_made(terminal.wait_all("YOUR TURN", "of at most", timeout_s=20))
            terminal.keys("1", "Enter")
            screen = terminal.wait_for(lambda s, b=before: "GAME OVER" in s or moves_made(s) > b, 20, "my push")
            assert "Move refused" not in screen, screen
        # The status can say GAME OVER before the log has the last events: wait for the log's end.
        screen = terminal.wait_all("GAME OVER", "Game over:", timeout_s=30)
        assert any(verdict in screen for verdict in ("you won", "you lost", "draw")), screen
        assert "disc_pushed" not in screen and "{" not in screen  # sentences, not protobuf text
        assert re.search(r"(You|\S+) completed a line: \d points?\.", screen) or "move 400 of" in screen, screen
        terminal.keys("q")
        terminal.exited()
    finally:
        terminal.close()


class Sheet:
    """The test's own plan of a solo sheet: which cells it filled, where the cursor is."""

    def __init__(self) -> None:
        self.next_square = {colour: 0 for colour in COLOURS}  # each colour fills squares 0..15 in order
        self.cursor = (0, 0)

    def remaining(self, colour: str) -> int:
        return 16 - self.next_square[colour]

    def pick(self) -> list[str]:
        """Two different colours with cells left, the fullest first (one when only one is left)."""
        left = sorted((c for c in COLOURS if self.remaining(c)), key=lambda c: -self.remaining(c))
        return left[:2]

    def keys_to(self, square: int) -> list[str]:
        row, column = divmod(square, 4)
        down = (row - self.cursor[0]) % 4
        right = (column - self.cursor[1]) % 4
        self.cursor = (row, column)
        return ["Down"] * down + ["Right"] * right


def test_coloursquare_solo_to_the_end_in_every_row_and_a_joker(platform: Platform) -> None:
    terminal = Terminal(f"{TAFEL} play coloursquare --solo", client_env(platform.gateway_addresses[0]))
    sheet = Sheet()
    rows_placed: set[int] = set()
    try:
        terminal.wait_text("Game r-", timeout_s=60)
        terminal.wait_all("place 2 coloured dice", "tafel sheet A", "jokers: · ·", "= 0", timeout_s=60)
        # Round 1: the red die onto a joker field, the yellow one into the first square.
        terminal.keys("r", "j", "y", "Enter", "p")
        screen = terminal.wait_all("round 2 of", "jokers", timeout_s=20)
        joker = re.search(r"jokers: ([1-6]) ·", screen)  # the first field only
        assert joker, screen  # the joker field holds the red die's value: not a Python list
        assert f"-{joker.group(1)} jokers" in screen, screen  # and it counts in the breakdown
        sheet.next_square["Y"] = 1
        for round_number in range(2, 60):
            screen = terminal.wait_text(f"round {round_number} of", "GAME OVER", timeout_s=30)
            if "GAME OVER" in screen:
                break
            colours = sheet.pick()
            terminal.wait_text("place 2 coloured dice", timeout_s=10)  # the view's must-place, in words
            for colour in colours:
                square = sheet.next_square[colour]
                sheet.next_square[colour] += 1
                rows_placed.add(square // 4)
                terminal.keys(DIE_KEYS[colour], *sheet.keys_to(square), "Enter")
            if len(colours) == 1:  # one cell left, and a free joker field: the second die must go there
                terminal.keys(DIE_KEYS[next(c for c in COLOURS if c != colours[0])], "j")
            terminal.keys("p")
            screen = terminal.wait_text(f"round {round_number + 1} of", "GAME OVER", timeout_s=20)
            assert "Move refused" not in screen, screen
        screen = terminal.wait_all("GAME OVER", "circled", timeout_s=30)
        assert rows_placed == {0, 1, 2, 3} and not any(sheet.remaining(c) for c in COLOURS)
        head = screen.split("you:")[0]
        assert "rolled" not in head and "R0 Y0" not in screen, screen  # no roll after the end
        assert re.search(r"you: -?\d+ points", screen) and "circled" in screen, screen
        assert "wrong" in screen or "ok" in screen  # every square closed
        terminal.keys("q")
        terminal.exited()
    finally:
        terminal.close()


def test_a_coloursquare_room_between_two_terminals_started_early(platform: Platform) -> None:
    env = client_env(platform.gateway_addresses[0])
    host = Terminal(f"{TAFEL} play coloursquare --new-room", env)
    guest: Terminal | None = None
    try:
        screen = host.wait_all("press s to start now", "(free)", "(host, you)", timeout_s=60)
        code = re.search(r"room ([A-Z0-9]{4,}) ·", screen).group(1)  # type: ignore[union-attr]
        seats = re.search(r"1 of (\d+) seats taken", screen)
        assert seats and int(seats.group(1)) > 2 and "(free)" in screen, screen  # it says what it waits for
        host_name = re.search(r"1\. (\S+) \(host, you\)", screen).group(1)  # type: ignore[union-attr]
        guest = Terminal(f"{TAFEL} play coloursquare --room {code}", env)
        screen = guest.wait_all(f"or for {host_name} to start", "(you)", timeout_s=30)
        guest_name = re.search(r"2\. (\S+) \(you\)", screen).group(1)  # type: ignore[union-attr]
        host.wait_text("2 of", timeout_s=20)
        host.keys("s")

        host.wait_all("place 2 coloured dice", f"{guest_name}: 0 points", "you: 0 points", timeout_s=30)  # both sheets
        guest.wait_all("place the white die", f"{host_name}: 0 points", "you: 0 points", timeout_s=30)

        host.keys("r", "Enter", "Right", "g", "Enter")
        screen = host.wait_text("to send: R in the red cell of row 1, column 1, G in the green cell of row 1, column 2")
        host.keys("p")
        guest.keys("t", "Enter")  # the white die into the yellow cell of the first square
        # Queued a second time: said at once, in words, and not queued, so the move
        # sent is the one placement the server accepts.
        guest.keys("Right", "Enter")
        guest.wait_text("The white die is already placed", timeout_s=10)
        guest.keys("p")
        guest.wait_all(
            "Round 1 is over.",
            f"{host_name} placed R in the red cell of row 1, column 1 and G in the green cell",
            "You placed W in the yellow cell of row 1, column 1.",
            timeout_s=30,
        )
        host.wait_text(f"{guest_name} placed W in the yellow cell of row 1, column 1.", timeout_s=30)

        guest.keys("q")
        guest.wait_text("press q again to leave", timeout_s=10)
        guest.keys("q")
        assert "left; the game goes on" in guest.exited()
    finally:
        host.close()
        if guest is not None:
            guest.close()
