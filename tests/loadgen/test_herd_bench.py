"""The herd (tools/bench_herd.py; the Go players' failover in clients/loadgen/go/human.go) at a
test's size: two gateways, one killed, then the other stopped gracefully, under human-pace load;
every player it held back in its game on the other within the window, no move lost or doubled
and no clock fired, read from the games' records. Also: the checks see a lost and a doubled move."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from tools import bench_herd


@pytest.mark.usefixtures("go_players")
def test_players_of_a_killed_and_a_stopped_gateway_resume_on_the_other() -> None:
    args = argparse.Namespace(
        players=200,
        warmup=5.0,
        before=5.0,
        window=10.0,
        after=5.0,
        settle=3.0,
        think_mean=0.5,
        think_sigma=0.75,
        # The clock outlasts the think cap (15 s) and the outage: no clock may fire.
        per_move=20.0,
        pause=0.5,
        spectators=0.1,
        connect_rate=500,
        seed=41,
    )
    report = bench_herd.run(args)
    assert report["failures"] == []
    kill, stop = report["events"]
    # The killed gateway held every other player; the stopped one, all of them by then.
    assert kill["players_lost"] == 100 and kill["streams_lost"] == {"UNAVAILABLE": 100}
    assert stop["players_lost"] == 200 and stop["streams_lost"].get("RECONNECT", 0) > 0
    for event in (kill, stop):
        assert event["not_back_at_window_end"] == 0 and event["connected_after"] == 200
        assert event["back_ms"]["samples"] == event["players_lost"]
        assert 0 < event["back_ms"]["p50"] <= event["back_ms"]["max"] < 10_000
        # Most players are in a game: those came back to it, on the other gateway.
        assert event["resume_ms"]["samples"] > event["players_lost"] // 2
        assert event["errors_besides_lost_streams"] == {} and event["games_timed_out_seen"] == 0
    checks = report["checks"]
    assert checks["moves_lost"] == 0 and checks["moves_doubled"] == 0 and checks["clocks_fired"] == 0
    assert checks["games"] > 100 and checks["moves_answered_ok"] > 1_000
    assert checks["moves_in_records"] >= checks["moves_answered_ok"]


def test_the_checks_see_a_lost_and_a_doubled_move() -> None:
    ledger = {
        "g1": {"0": {"acked": [[1, 3], [3, 4]], "unanswered": []}, "1": {"acked": [[2, 3]], "unanswered": [[4, 0]]}},
        "g2": {"0": {"acked": [[1, 6]], "unanswered": []}},
    }
    games: dict[str, dict[str, Any]] = {
        # Seat 0's move at version 3 missing; seat 1's unanswered move applied (allowed).
        "g1": {"moves": [(1, 0, 3), (2, 1, 3), (4, 1, 0)], "clocks": [90.0, 200.0]},
        # Seat 0's move applied twice (versions 1 and 3).
        "g2": {"moves": [(1, 0, 6), (2, 1, 2), (3, 0, 6)], "clocks": []},
    }
    checks = bench_herd.check(ledger, games, halted_at=100.0)
    assert checks["moves_lost"] == 1 and checks["moves_doubled"] == 1
    assert checks["clocks_fired"] == 1  # the one after the players stopped is theirs to have let run
    assert checks["moves_answered_ok"] == 4 and checks["moves_unanswered_at_stop"] == 1
