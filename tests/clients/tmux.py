"""A real pseudo-terminal for the terminal client's tests: a private tmux server per terminal, keys
sent as a person types them, the screen read back with capture-pane. Every wait has a deadline."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tools.platform import ROOT

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal")
TAFEL = f"{shlex.quote(sys.executable)} -m tafel.cli.main"
KEY_GAP_S = 0.08  # between keys, as a fast typist: the app handles them in order either way


class Terminal:
    def __init__(self, command: str, env: dict[str, str], *, width: int = 110, height: int = 50) -> None:
        self.socket = f"tafel-test-{uuid.uuid4().hex[:8]}"
        merged = {"PYTHONPATH": os.environ.get("PYTHONPATH", ""), "TERM": "xterm-256color", **env}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in merged.items())
        subprocess.run(
            [
                "tmux",
                "-L",
                self.socket,
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                str(width),
                "-y",
                str(height),
                # Exported for every command of a `;` chain; COLUMNS/LINES would override the pane's size.
                f"cd {ROOT} && export {exports} && unset COLUMNS LINES; {command}; echo EXITED $?; sleep 120",
            ],
            check=True,
        )

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, "capture-pane", "-p", "-t", "t"], capture_output=True, text=True, check=True
        ).stdout

    def keys(self, *keys: str) -> None:
        for key in keys:
            subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", "t", key], check=True)
            time.sleep(KEY_GAP_S)

    def wait_for(self, predicate: Callable[[str], bool], timeout_s: float = 30.0, what: str = "") -> str:
        deadline = time.monotonic() + timeout_s
        while True:
            text = self.screen()
            if predicate(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"screen never showed {what or 'what was expected'}; last screen:\n{text}")
            time.sleep(0.2)

    def wait_text(self, *texts: str, timeout_s: float = 30.0) -> str:
        """Waits until any of `texts` is on screen."""
        return self.wait_for(lambda s: any(t in s for t in texts), timeout_s, " or ".join(map(repr, texts)))

    def wait_all(self, *texts: str, timeout_s: float = 30.0) -> str:
        """Waits until all of `texts` are on screen at once (a frame can show a widget's new
        content before the layout has grown to fit it: wait for what is checked, not a neighbour)."""
        return self.wait_for(lambda s: all(t in s for t in texts), timeout_s, " and ".join(map(repr, texts)))

    def exited(self, timeout_s: float = 20.0) -> str:
        return self.wait_text("EXITED", timeout_s=timeout_s)

    def close(self) -> None:
        path = subprocess.run(
            ["tmux", "-L", self.socket, "display-message", "-p", "#{socket_path}"], capture_output=True, text=True
        ).stdout.strip()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False, capture_output=True)
        if path:
            Path(path).unlink(missing_ok=True)  # tmux leaves its socket file behind


def client_env(address: str, **more: str) -> dict[str, str]:
    return {"TAFEL_SERVER": address, **more}


def game_id_on(screen: str) -> str:
    match = re.search(r"game (r-[A-Za-z0-9_-]+)", screen, re.IGNORECASE)
    assert match, f"no game id on screen:\n{screen}"
    return match.group(1)
