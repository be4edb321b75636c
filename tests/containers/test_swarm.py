"""A rolling upgrade on Docker's own orchestrator (tools/swarm.py): the stack from deploy/compose.yaml
with two replicas of every server, every rules service and then the gateway updated to a new image
(start-first, health-gated) while games are played: no move lost or doubled, no game stuck, no call
reaching a player as an error. `make swarm-upgrade` runs the full size (50 games) for the figures."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.containers.conftest import ROOT, docker


def test_a_rolling_upgrade_under_live_games_loses_nothing() -> None:
    assert docker("info", "--format", "{{.Swarm.LocalNodeState}}") != "active", "a swarm is already active here"
    done = subprocess.run(
        [sys.executable, "-m", "tools.swarm", "upgrade", "--games", "10", "--warm-up", "10", "--after", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["games_finished"] == report["games_started"] > 10
    assert report["games_stuck"] == 0 and not report["problems"] and not report["errors"]
    assert set(report["updates_s"]) == {"connect4", "plus4", "coloursquare", "gateway"}
    # The tool leaves no swarm, stack or network behind.
    assert docker("info", "--format", "{{.Swarm.LocalNodeState}}") == "inactive"
