"""The whole platform played in containers (deploy/compose.yaml: Redis, the three rules services, two
gateways, the bot pool), through the published ports on 127.0.0.1 only: a game of each game, the
browser app's page, a gateway that crashes mid-game, Redis restarted."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Awaitable, Callable

import pytest

from tests.containers.conftest import GATEWAYS, WEB, Deployment, docker
from tools.audited_play import Acks, guests, play_out, record_problem, room_game


async def test_connect4_through_matchmaking_across_both_gateways(deployment: Deployment) -> None:
    # One player on each gateway: the match and every move cross gateways through Redis.
    a, b = [(await guests(1, target))[0] for target in GATEWAYS]
    try:
        first = time.monotonic()
        matches = await asyncio.wait_for(asyncio.gather(a.find_match("connect4"), b.find_match("connect4")), 60)
        print(f"matched in {time.monotonic() - first:.2f} s")
        assert matches[0].game_id == matches[1].game_id
        acks = Acks()
        outcomes = await play_out([a, b], matches[0].game_id, [m.seat for m in matches], "connect4", acks)
        assert outcomes[0] == outcomes[1] and outcomes[0].reason
        assert not await record_problem(a, matches[0].game_id, acks, outcomes[0])
    finally:
        for client in (a, b):
            await client.close()


async def test_plus4_in_a_private_room(deployment: Deployment) -> None:
    host, guest = await guests(2, list(GATEWAYS))
    try:
        game_id, seats = await room_game(host, [guest], "plus4")
        acks = Acks()
        outcomes = await play_out([host, guest], game_id, seats, "plus4", acks)
        assert outcomes[0] == outcomes[1] and outcomes[0].reason
        assert not await record_problem(host, game_id, acks, outcomes[0])
    finally:
        for client in (host, guest):
            await client.close()


async def test_colour_square_against_the_bot_pool(deployment: Deployment) -> None:
    (host,) = await guests(1, list(GATEWAYS))
    try:
        room = await host.create_room("coloursquare", seats=3, per_move_s=60)
        for _ in range(2):
            await host.request_bot(room.code, 1)  # the bot pool container answers
        started = await asyncio.wait_for(host.wait_room_started(room.code), 60)
        view = await host.get_game(started.game_id)
        acks = Acks()
        (outcome,) = await play_out([host], started.game_id, [view.seat], "coloursquare", acks)
        assert outcome.reason and len(outcome.ranks) == 3
        record = await host.get_record(started.game_id)
        assert len(record.players) == 3 and len(record.actions) > len(acks.versions)  # the bots moved too
    finally:
        await host.close()


def test_the_browser_app_loads_from_the_container(deployment: Deployment) -> None:
    """The page and its bundle come from the gateway container's web edge (the image's copy), and a
    person can sign in as a guest and sees the games."""
    from playwright.sync_api import expect, sync_playwright

    from tests.web_app.app import TIMEOUT_MS, sign_in_as_guest
    from tests.web_app.conftest import CHROMIUM

    with urllib.request.urlopen(f"{WEB[0]}/", timeout=10) as response:
        assert response.status == 200 and b"app.js" in response.read()
    if not CHROMIUM.exists():
        pytest.fail(f"no Chromium at {CHROMIUM} (.ci/run installs it)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            name = sign_in_as_guest(page, WEB[1])
            assert name
            expect(page.locator(".game-card")).to_have_count(3, timeout=TIMEOUT_MS)
        finally:
            browser.close()


async def played_through(disturb: Callable[[], Awaitable[object]], per_move_s: float) -> None:
    """Two players on both gateways play Connect Four; `disturb` runs at the sixth acknowledged
    move; the game ends, the same for both, with every acknowledged move once in its record."""
    a, b = await guests(2, list(GATEWAYS))
    try:
        game_id, seats = await room_game(a, [b], "connect4", per_move_s=per_move_s)
        acks = Acks()
        playing = asyncio.ensure_future(play_out([a, b], game_id, seats, "connect4", acks, think_s=0.25))
        await asyncio.wait_for(acks.reached.wait(), 60)
        await disturb()
        outcomes = await playing
        assert outcomes[0] == outcomes[1]
        # The process that answered a move may die before its answer leaves: one answer, no move.
        assert not await record_problem(a, game_id, acks, outcomes[0], lost_answers=1)
    finally:
        for client in (a, b):
            await client.close()


async def test_a_gateway_that_crashes_mid_game_is_restarted_and_the_game_goes_on(deployment: Deployment) -> None:
    """The gateway's process dies as in a crash (SIGKILL from outside; `docker kill` would count as
    an operator's stop, which a restart policy does not undo): Docker starts it again, the players'
    clients carry on through the other gateway meanwhile, and the game ends with every move once."""
    gateway = deployment.containers("gateway")[0]
    restarts = int(deployment.state(gateway, ".RestartCount"))

    async def crash() -> None:
        os.kill(int(deployment.state(gateway, ".State.Pid")), signal.SIGKILL)

    await played_through(crash, per_move_s=60)
    deployment.wait_healthy(gateway)
    assert int(deployment.state(gateway, ".RestartCount")) == restarts + 1


async def test_redis_restarted_loses_no_acknowledged_move(deployment: Deployment) -> None:
    (redis,) = deployment.containers("redis")

    async def restart() -> None:
        await asyncio.to_thread(docker, "restart", "--time", "10", redis)

    await played_through(restart, per_move_s=120)


def test_images_carry_their_labels_and_run_as_nobody(deployment: Deployment) -> None:
    revision = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    labels = docker(
        "image", "inspect", "--format", '{{index .Config.Labels "org.opencontainers.image.revision"}}', "tafel:latest"
    )
    assert labels.removesuffix("-dirty") == revision
    assert docker("image", "inspect", "--format", "{{.Config.User}}", "tafel:latest") == "10001:10001"
    gateway = deployment.containers("gateway")[0]
    assert deployment.state(gateway, ".HostConfig.ReadonlyRootfs") == "true"
    # Nothing published beyond the gateways' ports, and only on loopback.
    published = docker(
        "ps", "--filter", f"label=com.docker.compose.project={deployment.project}", "--format", "{{.Ports}}"
    )
    for line in published.splitlines():
        for binding in filter(None, (part.strip() for part in line.split(","))):
            if "->" in binding:
                assert binding.startswith("127.0.0.1:"), binding
