"""`tafel tournament` for directors and arenas, run as a person would from a shell:
create a Swiss with an invitation code, edit it, start it, correct a result, announce, read the
audit log, ban a player, end it early and export it as CSV files; a player who is not a director
is refused in Dutch; an arena created with --minutes, its standings with streaks and a player's
pause and return."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import uuid
from pathlib import Path

from tafel.client import TafelClient
from tafel.play.v1 import tournaments_pb2 as tp

from tests.clients.tmux import TAFEL, client_env
from tests.platforms import platform_fixture
from tools.platform import Platform

PASSWORD = "correct horse battery"


platform = platform_fixture(
    env={"TAFEL_ARENA_MIN_S": "5", "TAFEL_ARENA_WAVE_S": "0.2", "TAFEL_ARENA_STANDINGS_S": "0.2"}
)


async def account(address: str, prefix: str) -> TafelClient:
    client = await TafelClient.connect(address)
    await client.register(f"{prefix}{uuid.uuid4().hex[:6]}", PASSWORD)
    return client


def shell(address: str, client: TafelClient, **env: str) -> object:
    """`tafel ARGS...` as `client`'s account; returns (exit status, what it printed)."""
    user = client_env(address, TAFEL_USER=client.player.username, TAFEL_PASSWORD=PASSWORD)

    async def tafel(*args: str) -> tuple[int, str]:
        def run() -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [*TAFEL.split(), *args], env={**os.environ, **user, "COLUMNS": "200", **env},
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip

        done = await asyncio.to_thread(run)
        return done.returncode, done.stdout + done.stderr

    return tafel


async def test_a_director_runs_a_swiss_from_the_shell(platform: Platform, tmp_path: Path) -> None:
    address = platform.gateway_addresses[0]
    org, ann, bob = [await account(address, p) for p in ("dir", "ann", "bob")]
    tafel = shell(address, org)
    code, out = await tafel(  # type: ignore[operator]
        "tournament", "create", "Club night", "--format", "swiss", "--rounds", "2", "--code", "club-2026",
        "--manual-rounds", "on",
    )  # fmt: skip
    assert code == 0, out
    tid = re.search(r"id (t[0-9a-f]+)", out).group(1)  # type: ignore[union-attr]
    for player in (ann, bob):
        await player.join_tournament(tid, invitation_code="club-2026")

    code, out = await tafel("tournament", "edit", tid, "--new-name", "Club night (Friday)", "--capacity", "12")  # type: ignore[operator]
    assert code == 0 and "changed Club night (Friday)" in out, out
    assert "needs an invitation code: club-2026" in out and "a director starts each round" in out, out
    assert (await ann.get_tournament(tid)).capacity == 12
    # Not a director: refused, in the player's language.
    code, out = await shell(address, ann, LANG="nl_NL.UTF-8")("tournament", "edit", tid, "--capacity", "4")  # type: ignore[operator]
    assert code != 0 and "alleen de wedstrijdleiding" in out, out

    code, out = await tafel("tournament", "start", tid)  # type: ignore[operator]
    assert code == 0, out
    round_one = await org.tournament_round(tid, 1)
    game = next(g for g in round_one.games if g.game_id)
    ranks = ",".join("1" if p.player_id == ann.player.player_id else "2" for p in game.players)
    code, out = await tafel(  # type: ignore[operator]
        "tournament", "correct", tid, "--round", "1", "--board", str(game.board), "--ranks", ranks,
        "--reason", "a disputed flag",
    )  # fmt: skip
    assert code == 0 and "corrected" in out and f"{ann.player.username} 1" in out, out
    code, out = await tafel("tournament", "announce", tid, "Round", "2", "after", "the", "break.")  # type: ignore[operator]
    assert code == 0 and "announced to 2 players" in out, out

    code, out = await tafel("tournament", "standings", tid)  # type: ignore[operator]
    assert code == 0 and "Buchholz" in out and ann.player.username in out, out
    code, out = await tafel("tournament", "remove", tid, bob.player.username, "--ban", "--reason", "rude in chat")  # type: ignore[operator]
    assert code == 0 and f"banned {bob.player.username}" in out, out
    code, out = await tafel("tournament", "audit", tid)  # type: ignore[operator]
    assert code == 0, out
    for action in ("UpdateTournament", "CorrectResult", "Announce", "RemovePlayer"):
        assert action in out, out
    assert "a disputed flag" in out and "rude in chat" in out, out

    code, out = await tafel("tournament", "terminate", tid, "--reason", "the hall closes")  # type: ignore[operator]
    assert code == 0 and "final standings" in out, out
    assert (await ann.get_tournament(tid)).terminated

    folder = tmp_path / "export"
    code, out = await tafel("tournament", "export", tid, "--csv", str(folder))  # type: ignore[operator]
    assert code == 0, out
    written = sorted(p.name.rsplit("-", 1)[-1] for p in folder.iterdir())
    assert written == ["games.csv", "pairings.csv", "standings.csv"], written
    standings = next(folder.glob("*standings.csv")).read_text(encoding="utf-8")
    assert ann.player.username in standings
    for client in (org, ann, bob):
        await client.close()


async def test_an_arena_from_the_shell(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    org, ann, bob, cid = [await account(address, p) for p in ("aro", "arn", "arb", "arc")]
    code, out = await shell(address, org)("tournament", "create", "Lunch", "--format", "arena", "--minutes", "1")  # type: ignore[operator]
    assert code == 0, out
    tid = re.search(r"id (t[0-9a-f]+)", out).group(1)  # type: ignore[union-attr]
    arena = await org.get_tournament(tid)
    assert arena.format == tp.TOURNAMENT_FORMAT_ARENA and arena.arena_duration.seconds == 60
    for player in (ann, bob, cid):
        await player.join_tournament(tid)
    await org.start_tournament(tid)

    as_ann = shell(address, ann)
    code, out = await as_ann("tournament", "pause", tid)  # type: ignore[operator]
    assert code == 0 and "paused: you are not paired again" in out, out
    code, out = await as_ann("tournament", "standings", tid)  # type: ignore[operator]
    assert code == 0 and "streak" in out and "(paused)" in out, out
    code, out = await as_ann("tournament", "back", tid)  # type: ignore[operator]
    assert code == 0 and "back: you are paired" in out, out
    code, out = await shell(address, org)("tournament", "terminate", tid)  # type: ignore[operator]
    assert code == 0, out
    for client in (org, ann, bob, cid):
        await client.close()
