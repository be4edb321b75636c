"""The terminal client in Dutch and German, on a real pseudo-terminal: a game of Connect
Four against a bot with --lang nl, a Plus 4 room's lobby with LANG=de_DE.UTF-8, and a server's
refusal in Dutch. Each screen is walked against the English catalogue: no English sentence that
has a translation may show."""

from __future__ import annotations

import json
import re
import string
import subprocess
import sys
from pathlib import Path

from tafel.i18n_tools import TEMPLATE, read

from tests.clients.tmux import TAFEL, Terminal, client_env, needs_tmux
from tools.platform import ROOT, Platform

pytestmark = needs_tmux


def english_fragments() -> set[str]:
    """The English words of the catalogue a translated screen must not show: each message's text
    between its placeholders, where it is long enough to be a phrase (a lone "chat" or "Bot" is the
    same in Dutch)."""
    out: set[str] = set()
    for message in read(TEMPLATE):
        for text in message.id if isinstance(message.id, tuple) else (message.id,):
            for literal, *_ in string.Formatter().parse(text or ""):
                piece = literal.strip(" .,:;()—-")
                if len(piece) >= 12 and " " in piece and not piece.startswith(("`", "tafel ")):
                    out.add(piece)
    return out


ENGLISH = english_fragments()


def english_on(screen: str) -> list[str]:
    return sorted(piece for piece in ENGLISH if piece in screen)


def test_connect4_against_a_bot_in_dutch_remembered(platform: Platform, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    env = client_env(platform.gateway_addresses[0], TAFEL_CONFIG=str(config), LANG="C.UTF-8")
    player = Terminal(f"{TAFEL} --lang nl play connect4 --vs-bot 1", env)
    try:
        # The header is painted on its own refresh: wait for it too (on a busy machine the board came first).
        screen = player.wait_all(
            "JIJ BENT AAN DE BEURT", "● jij", "○ Bot (niveau 1)", "per zet)", "Vier op een rij", timeout_s=60
        )
        assert "Vier op een rij" in screen.splitlines()[0], screen  # the header names the game in Dutch
        player.keys("4", "Enter")
        screen = player.wait_text("Je liet een schijf in kolom 4 vallen.", timeout_s=20)
        player.wait_text("laatste zet", timeout_s=10)
        player.keys("q")
        screen = player.wait_text("druk nog eens op q om weg te gaan", timeout_s=10)
        footer = screen.strip().splitlines()[-1]
        assert "opgeven" in footer and "remise" in footer and "stoppen" in footer, footer
        assert not english_on(screen), english_on(screen)
        player.keys("Escape")
        player.wait_text("JIJ BENT AAN DE BEURT", timeout_s=10)  # (a key right after Escape reads as Alt+key)
        player.keys("x")  # resign: asked first, then the game ends, in Dutch
        player.wait_text("Dit spel opgeven? Druk nog eens op x", timeout_s=10)
        player.keys("x")
        screen = player.wait_all("SPEL AFGELOPEN", "door opgave", "Je hebt opgegeven.", timeout_s=20)
        assert not english_on(screen), english_on(screen)
        player.keys("q")
        assert "weggegaan" in player.exited() or "door opgave" in player.screen()
    finally:
        player.close()
    # --lang was remembered: the next run speaks Dutch without it (its help, here).
    assert json.loads(config.read_text())["lang"] == "nl"
    run_env = {**env, "PYTHONPATH": f"{ROOT / 'clients' / 'python'}", "LANG": "de_DE.UTF-8"}
    helped = subprocess.run(
        [sys.executable, "-m", "tafel.cli.main", "--help"], env=run_env, capture_output=True, text=True, check=True
    ).stdout
    assert "een spel spelen" in helped and "play a game" not in helped, helped


def test_a_plus4_room_in_german_from_lang(platform: Platform, tmp_path: Path) -> None:
    env = client_env(platform.gateway_addresses[0], TAFEL_CONFIG=str(tmp_path / "none.json"), LANG="de_DE.UTF-8")
    host = Terminal(f"{TAFEL} play plus4 --new-room", env)
    try:
        screen = host.wait_all("Teile den Code", "1 von 2 Plätzen besetzt", "(frei)", "(Gastgeber, du)", timeout_s=60)
        assert re.search(r"Raum [A-Z0-9]{4,} · Plus 4 ·", screen), screen
        assert "jetzt starten" in screen and "Raum verlassen" in screen, screen  # the footer
        assert not english_on(screen), english_on(screen)
        host.keys("q")
        assert "Raum" in host.exited()
    finally:
        host.close()


def test_a_refusal_in_dutch(platform: Platform, tmp_path: Path) -> None:
    """The server refuses a malformed game id (BAD_GAME_ID, with an English sentence): the player
    reads the Dutch sentence for the code."""
    env = client_env(platform.gateway_addresses[0], TAFEL_CONFIG=str(tmp_path / "none.json"), LANG="nl_NL.UTF-8")
    terminal = Terminal(f"{TAFEL} watch 'no such game!'", env)
    try:
        screen = terminal.exited()
        assert "geweigerd: dat is geen geldig spel-id" in screen, screen
        assert "game_id" not in screen and not english_on(screen), screen
    finally:
        terminal.close()
