"""The TypeScript SDK (clients/typescript) under Node's test runner, against a real platform on
loopback: whole games of all three games, a watch and a search resuming after a dropped connection,
typed refusals and retries, block / mute / report and an account's life, the account's
event stream resumed after a cut, challenges, offers and a rematch, a game's chat
resumed after a cut and a followed player's presence, profile and settings, a directed
Swiss and an arena's pause, over native
gRPC, Connect and gRPC-Web (the web edge); the Play stream over native gRPC, reopening after a cut
connection. Then against a platform with TLS (a private CA: native gRPC and the HTTPS edge, a
refused certificate), and against two gateways one of which is stopped gracefully mid-game (the
Play streams move to the other)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.certificates import make_certificates
from tests.keyspace import with_db
from tests.platforms import ENV, platform_fixture
from tools.platform import Platform

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "clients" / "typescript"


def _summary(output: str) -> dict[str, int]:
    """The TAP reporter's closing counts ("# pass 16", "# fail 0", ...)."""
    return {
        name: int(count)
        for name, count in re.findall(r"^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$", output, re.M)
    }


def _node_tests(folder: str, env: dict[str, str], timeout_s: float = 240) -> tuple[str, dict[str, int], set[str]]:
    """Runs the compiled tests in dist/<folder>/*.test.js; returns the output, the closing counts
    and the passed lines ("ok N - <name>"), having checked that nothing failed or was skipped."""
    assert shutil.which("node") and shutil.which("npm"), "Node 20 and npm are needed for the TypeScript SDK"
    # npm ci, buf generate and tsc when anything changed (`make test` has done it already).
    subprocess.run(["make", "-s", "ts"], cwd=ROOT, check=True, timeout=600)
    tests = sorted(str(p.relative_to(SDK)) for p in (SDK / "dist" / folder).glob("*.test.js"))
    assert tests, f"no compiled TypeScript tests in dist/{folder}"
    run = subprocess.run(
        ["node", "--test", "--test-reporter=tap", "--test-timeout=120000", *tests],
        cwd=SDK,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    output = run.stdout + run.stderr
    counts = _summary(output)
    assert run.returncode == 0, output
    assert counts.get("fail") == 0 and counts.get("cancelled") == 0, output
    assert counts.get("skipped") == 0 and counts.get("todo") == 0, output
    return output, counts, set(re.findall(r"^ok \d+ - (.+)$", output, re.M))


def test_typescript_sdk_under_node(platform: Platform) -> None:
    assert platform.web_urls, "the platform started no web edge"
    env = {"TAFEL_TEST_GATEWAY": platform.gateway_addresses[0], "TAFEL_TEST_WEB_URL": platform.web_urls[0]}
    output, counts, passed = _node_tests("test", env)
    # Every suite ran and passed on every transport (a suite's line is "ok N - <what> over <how>").
    for transport in ("native gRPC", "Connect", "gRPC-Web"):
        for suite in (
            "whole games",
            "refusals",
            "watching",
            "safety and account life",
            "challenges and offers",
            "chat and following",
            "notices, vacations and e-mail",
            "tournament directing",
            "correspondence searches",
        ):
            assert f"{suite} over {transport}" in passed, output
    assert "play stream over native gRPC" in passed, output  # Play is native gRPC only
    # The documented bot (examples/challenge-bot.ts) in its own process, challenged by a player.
    assert "the challenge bot accepts, plays, offers a rematch, declines a draw" in passed, output
    assert counts.get("pass", 0) >= 43, output


@pytest.fixture(scope="module")
def tls_platform(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Platform, Path]]:
    if shutil.which("openssl") is None:
        pytest.fail("the TLS tests need the openssl command")
    folder = tmp_path_factory.mktemp("ts-certs")
    make_certificates(folder)
    # Every process serves TLS from the test CA's server certificate (the rules services too; the
    # gateway trusts that CA for them); the web edge serves HTTPS from the same certificate.
    env = {
        **ENV,
        "TAFEL_TLS_CERT": str(folder / "server.pem"),
        "TAFEL_TLS_KEY": str(folder / "server.key"),
        "TAFEL_RULES_TLS_CA": str(folder / "ca.pem"),
    }
    running = Platform(
        redis_url=with_db(redis_url, "typescript over TLS"),
        fixed_ports=False,
        bot_pool=False,
        games=("connect4",),
        extra_env=env,
    ).start()
    try:
        yield running, folder / "ca.pem"
    finally:
        running.stop()


def test_typescript_sdk_over_tls(tls_platform: tuple[Platform, Path]) -> None:
    platform, ca = tls_platform
    assert platform.web_urls and platform.web_urls[0].startswith("https://"), platform.web_urls
    env = {
        "TAFEL_TEST_TLS_GATEWAY": platform.gateway_addresses[0],
        "TAFEL_TEST_TLS_WEB_URL": platform.web_urls[0],
        "TAFEL_TEST_TLS_CA": str(ca),
    }
    output, counts, passed = _node_tests("test/tls", env)
    for transport in ("native gRPC", "Connect", "gRPC-Web"):
        assert f"TLS over {transport}" in passed, output
    assert counts.get("pass", 0) >= 9, output


two_gateways = platform_fixture("two gateways", scope="function", gateways=2, bot_pool=False, games=("connect4",))


def test_typescript_play_streams_move_when_a_gateway_stops_gracefully(two_gateways: Platform) -> None:
    first = next(child for child in two_gateways.children if child.name == "gateway-0")
    env = {
        "TAFEL_TEST_GATEWAYS": ",".join(two_gateways.gateway_addresses),
        "TAFEL_TEST_STOP_PID": str(first.process.pid),
    }
    output, counts, _ = _node_tests("test/drain", env)
    assert counts.get("pass") == 1, output
    # The test stopped it with SIGTERM: a graceful stop (drained, exited by itself), not a crash.
    assert first.process.wait(timeout=30) == 0, first.output[-20:]
