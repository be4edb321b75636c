"""tools/redis_census.py: a script's own commands counted inside it, scripts told apart by SHA, and
the census of a real Redis's slowlog."""

from __future__ import annotations

import threading

import redis

from kit.redis.scripts import all_scripts, script
from tools.redis_census import COMMIT, SCRIPT_CLIENT, attribute, record, report, script_names
from tools.redis_server import start_redis

COMMIT_SHA = script(COMMIT).sha
CLAIM_SHA = script("matchmaking/claim_enqueue", sharded=True).sha
NAMES = {COMMIT_SHA: COMMIT, CLAIM_SHA: "matchmaking/claim_enqueue"}
CLIENT = b"127.0.0.1:5000"


def entry(command: str, duration: int, client: bytes = CLIENT) -> dict[str, object]:
    return {"command": command.encode(), "duration": duration, "client_address": client}


def test_a_scripts_commands_are_counted_in_the_script_that_follows_them() -> None:
    entries = [
        entry("HMGET s v l", 2, SCRIPT_CLIENT),
        entry("HSET s v 2", 3, SCRIPT_CLIENT),
        entry(f"EVALSHA {COMMIT_SHA} 4 a b c d", 20),
        entry("ZADD z 1 m", 1),  # a top-level command: its own row, nothing pending
        entry("HGET t x", 1, SCRIPT_CLIENT),
        entry(f"EVALSHA {CLAIM_SHA} 9 k", 40),
        entry(f"EVALSHA {COMMIT_SHA} 4 a b c d", 30),  # nothing of its own logged: none counted
    ]
    rows = attribute(entries, NAMES)
    assert set(rows) == {f"EVALSHA {COMMIT}", "EVALSHA matchmaking/claim_enqueue", "ZADD"}
    commit = rows[f"EVALSHA {COMMIT}"]
    assert (commit.calls, commit.usec, dict(commit.inner)) == (2, 50, {"HMGET": 1, "HSET": 1})
    claim = rows["EVALSHA matchmaking/claim_enqueue"]
    assert (claim.calls, claim.usec, dict(claim.inner)) == (1, 40, {"HGET": 1})
    assert (rows["ZADD"].calls, rows["ZADD"].inner) == (1, {})


def test_an_unknown_script_is_named_by_its_sha() -> None:
    rows = attribute([entry("EVALSHA 0123456789abcdef 0", 5)], NAMES)
    assert list(rows) == ["EVALSHA 01234567"]


def test_the_report_is_per_move_and_by_share() -> None:
    entries = [entry(f"EVALSHA {COMMIT_SHA} 0", 30) for _ in range(4)]
    entries += [entry("PEXPIRE q 1", 1, SCRIPT_CLIENT), entry(f"EVALSHA {CLAIM_SHA} 0", 80)]
    lines = report(attribute(entries, NAMES), top=5)
    assert lines[0].startswith("4 moves")
    assert "EVALSHA rules/commit" in lines[2] and "60.0%" in lines[2] and "1.000" in lines[2]
    assert "matchmaking/claim_enqueue" in lines[3] and "0.250" in lines[3] and "PEXPIRE 1.0" in lines[3]
    assert report(attribute([entry("GET k", 1)], NAMES), top=5)[1:] == []  # no move: no table


def test_every_runnable_script_is_known_in_both_dialects() -> None:
    names = script_names()
    for each in all_scripts():
        assert names[each.sha] == each.name
        assert names[script(each.name, sharded=True).sha] == each.name


def test_a_real_redis_logs_a_scripts_commands_before_it_and_keeps_its_settings() -> None:
    server = start_redis()
    try:
        client = redis.Redis(port=server.port)
        sha = client.script_load("redis.call('SET', KEYS[1], 'x') return redis.call('GET', KEYS[1])")
        before = client.config_get("slowlog-*")
        timer = threading.Timer(0.2, lambda: client.evalsha(sha, 1, "k"))
        timer.start()
        entries = record(server.url, 0.6)
        timer.join()
        assert client.config_get("slowlog-*") == before
        rows = attribute(entries, {sha: "test/set_get"})
        row = rows["EVALSHA test/set_get"]
        assert (row.calls, dict(row.inner)) == (1, {"SET": 1, "GET": 1})
    finally:
        server.stop()
