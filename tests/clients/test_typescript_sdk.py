"""The TypeScript SDK (clients/typescript) under Node's test runner, against a real platform on
loopback: whole games of all three games, a watch and a search resuming after a dropped connection,
typed refusals and retries, over native gRPC, Connect and gRPC-Web (the web edge); the Play stream
over native gRPC."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from tools.platform import Platform

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "clients" / "typescript"


def _summary(output: str) -> dict[str, int]:
    """The TAP reporter's closing counts ("# pass 16", "# fail 0", ...)."""
    return {
        name: int(count)
        for name, count in re.findall(r"^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$", output, re.M)
    }


def test_typescript_sdk_under_node(platform: Platform) -> None:
    assert shutil.which("node") and shutil.which("npm"), "Node 20 and npm are needed for the TypeScript SDK"
    # npm ci, buf generate and tsc when anything changed (`make test` has done it already).
    subprocess.run(["make", "-s", "ts"], cwd=ROOT, check=True, timeout=600)
    assert platform.web_urls, "the platform started no web edge"
    env = {
        **os.environ,
        "TAFEL_TEST_GATEWAY": platform.gateway_addresses[0],
        "TAFEL_TEST_WEB_URL": platform.web_urls[0],
    }
    tests = sorted(str(p.relative_to(SDK)) for p in (SDK / "dist" / "test").glob("*.test.js"))
    assert tests, "no compiled TypeScript tests"
    run = subprocess.run(
        ["node", "--test", "--test-reporter=tap", "--test-timeout=120000", *tests],
        cwd=SDK,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = run.stdout + run.stderr
    counts = _summary(output)
    assert run.returncode == 0, output
    assert counts.get("fail") == 0 and counts.get("cancelled") == 0, output
    assert counts.get("skipped") == 0 and counts.get("todo") == 0, output
    # Every suite ran and passed on every transport (a suite's line is "ok N - <what> over <how>").
    passed = set(re.findall(r"^ok \d+ - (.+ over .+)$", output, re.M))
    for transport in ("native gRPC", "Connect", "gRPC-Web"):
        for suite in ("whole games", "refusals", "watching"):
            assert f"{suite} over {transport}" in passed, output
    assert "play stream over native gRPC" in passed, output  # Play is native gRPC only
    assert counts.get("pass", 0) >= 26, output
