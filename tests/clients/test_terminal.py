"""The terminal client driven as a person would: a real pseudo-terminal (tmux), keys sent, the
screen read. It plays Connect Four against a level-1 bot from the bot pool to the end."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from tools.platform import ROOT, Platform

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal")
COLUMNS_TO_TRY = "4352617"


class Terminal:
    def __init__(self, command: str, env: dict[str, str]) -> None:
        self.socket = f"tafel-test-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        subprocess.run(
            [
                "tmux",
                "-L",
                self.socket,
                "new-session",
                "-d",
                "-s",
                "play",
                "-x",
                "100",
                "-y",
                "40",
                f"cd {ROOT} && env {exports} {command}; echo EXITED; sleep 60",
            ],
            check=True,
        )

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, "capture-pane", "-p", "-t", "play"], capture_output=True, text=True, check=True
        ).stdout

    def keys(self, *keys: str) -> None:
        for key in keys:
            subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", "play", key], check=True)
            time.sleep(0.15)

    def wait_for(self, predicate, timeout_s: float = 30.0) -> str:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            text = self.screen()
            if predicate(text):
                return text
            time.sleep(0.2)
        raise AssertionError(f"screen never matched; last screen:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False)


def discs(screen: str) -> int:
    board = screen.split("YOUR TURN")[0].split("waiting for")[0].split("GAME OVER")[0]
    return board.count("●")


def test_play_connect4_against_a_level_1_bot_to_the_end(platform: Platform) -> None:
    env = {"TAFEL_SERVER": platform.gateway_addresses[0], "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    terminal = Terminal(f"{sys.executable} -m tafel.cli.main play connect4 --vs-bot 1", env)
    try:
        screen = terminal.wait_for(lambda s: "YOUR TURN" in s or "waiting for seat" in s, 60)
        assert "1  2  3" in screen.replace("[", " ").replace("]", " ")  # the board is drawn
        for _ in range(60):
            screen = terminal.wait_for(lambda s: "YOUR TURN" in s or "GAME OVER" in s, 60)
            if "GAME OVER" in screen:
                break
            before = discs(screen)
            for column in COLUMNS_TO_TRY:
                terminal.keys(column, "Enter")
                try:
                    terminal.wait_for(lambda s, b=before: discs(s) > b or "GAME OVER" in s, 5)
                    break
                except AssertionError:
                    continue  # that column was full ("move refused" in the log): try the next
        screen = terminal.wait_for(lambda s: "GAME OVER" in s, 60)
        assert any(verdict in screen for verdict in ("you won", "you lost", "draw"))
        assert "Press q to quit" in screen
        terminal.keys("q")
        final = terminal.wait_for(lambda s: "EXITED" in s, 20)
        assert any(verdict in final for verdict in ("you won", "you lost", "draw"))
    finally:
        terminal.close()
