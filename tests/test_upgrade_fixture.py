"""Upgrades keep live games: a platform's Redis written at layout version 1 (tests/data/layout/v1.json,
made by `python -m tools.layout_fixture` through the public API) is loaded into an empty Redis,
migrated by the command a deploy runs, and served by a real platform of this code: the fixture's
players sign in, play every live game on to its end, and find their record, ratings and tournament.

The fixture stays at the version it was written at; a migration added later must carry it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient
from tafel.play.v1 import tournaments_pb2

from kit.redis.migrations import CURRENT
from tests.keyspace import alone
from tools.layout_fixture import load
from tools.platform import Platform

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "data" / "layout"
DB = "upgrade"


def fixture(version: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"v{version}.json").read_text())
    assert data["layout_version"] == version
    return data


@pytest.fixture(scope="module")
def migrated(redis_url: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The oldest fixture loaded into a Redis of its own and migrated with the deploy's command."""
    data = fixture(1)
    with alone(redis_url, DB) as url:
        assert load(url, data) == len(data["keys"])
        done = subprocess.run(
            [sys.executable, "-m", "tools.migrate"],
            cwd=ROOT,
            env={**os.environ, "REDIS_URL": url},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"version {CURRENT}" in done.stdout
        yield url, data


@pytest.fixture(scope="module")
def platform(migrated: tuple[str, dict[str, Any]]) -> Iterator[Platform]:
    running = Platform(redis_url=migrated[0], fixed_ports=False, bot_pool=False).start()
    try:
        yield running
    finally:
        running.stop()


async def signed_in(platform: Platform, story: dict[str, Any]) -> dict[str, TafelClient]:
    clients = {}
    for name in story["players"]:
        client = await TafelClient.connect(platform.gateway_addresses[0], own_connection=True)
        player = await client.sign_in(name, story["password"])
        assert player.username == name
        clients[name] = client
    return clients


async def test_every_live_game_of_the_fixture_plays_on_to_its_end(
    platform: Platform, migrated: tuple[str, dict[str, Any]]
) -> None:
    story = migrated[1]["story"]
    clients = await signed_in(platform, story)
    try:
        plays = []
        for game, live in story["live_games"].items():
            before = await clients["fx-ada"].get_game(live["game_id"])
            assert before.summary.status.version > 0 and not before.summary.status.over, game
            for name, seat in live["seats"].items():
                plays.append(play_game(clients[name], live["game_id"], seat, strategy_for(game, 1), timeout_s=240))
        outcomes = await asyncio.wait_for(asyncio.gather(*plays), timeout=280)
        assert len(outcomes) == 2 * len(story["live_games"]) == 6
        for game, live in story["live_games"].items():
            after = await clients["fx-ada"].get_game(live["game_id"])
            assert after.summary.status.over, game
            record = await clients["fx-bo"].get_record(live["game_id"])  # written by this code at the end
            assert record.HasField("outcome") and len(record.actions) == after.summary.status.version, game
    finally:
        for client in clients.values():
            await client.close()


async def test_accounts_ratings_records_and_the_tournament_are_readable(
    platform: Platform, migrated: tuple[str, dict[str, Any]]
) -> None:
    story = migrated[1]["story"]
    clients = await signed_in(platform, story)
    try:
        ada = clients["fx-ada"]
        assert (await ada.me()).username == "fx-ada"
        finished = await ada.get_record(story["finished_game"])
        assert finished.HasField("outcome") and len(finished.actions) >= 7
        board = await clients["fx-cy"].leaderboard("connect4")
        assert {"fx-ada", "fx-bo"} <= {entry.player.username for entry in board.entries}
        tournament = await clients["fx-cy"].get_tournament(story["tournament"])
        assert tournament.name == "Fixture cup"
        assert tournament.state == tournaments_pb2.TOURNAMENT_STATE_REGISTERING
        assert tournament.organiser.username == "fx-ada"
        assert [p.username for p in tournament.players] == ["fx-bo", "fx-cy"]
    finally:
        for client in clients.values():
            await client.close()
