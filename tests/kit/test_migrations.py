"""The layout's version and its migration (kit/redis/migrations, tools/migrate.py) on a real Redis
(a Cluster with TAFEL_TEST_REDIS=cluster): stamping, steps in order, a half-done migration run again,
two at once, the servers' refusal, and the command's exit codes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kit.redis.keys import SCHEMA_LOCK, SCHEMA_VERSION, account_key
from kit.redis.layer import RedisLayer
from kit.redis.migrations import (
    CURRENT,
    UNVERSIONED,
    LayoutMismatch,
    MigrationBusy,
    Step,
    check_layout,
    migrate,
    scan_keys,
    stored_version,
)
from tests.keyspace import emptied
from tools import migrate as migrate_tool

ROOT = Path(__file__).resolve().parents[2]
DB = "migrations"


@pytest.fixture
async def empty(redis_url: str) -> AsyncIterator[RedisLayer]:
    """A layer on an empty keyspace of its own (every master emptied, on a cluster)."""
    layer = RedisLayer.connect(emptied(redis_url, DB), max_connections=8)
    try:
        yield layer
    finally:
        await layer.close()


def steps_writing(log: list[int], fail_at: int | None = None) -> tuple[Step, ...]:
    """Steps 2 and 3: each notes that it ran and marks every account (idempotent: HSET)."""

    def step(version: int) -> Step:
        async def apply(layer: RedisLayer) -> None:
            log.append(version)
            if version == fail_at:
                raise RuntimeError("step failed")
            async for key in scan_keys(layer, "tafel:{u:*}:account"):
                await layer.call("HSET", key, f"m{version}", "1")

        return Step(version, f"mark accounts {version}", apply)

    return (step(2), step(3))


async def test_an_empty_redis_is_stamped_by_a_server_and_by_the_migration(empty: RedisLayer) -> None:
    assert await check_layout(empty) == CURRENT
    assert await stored_version(empty) == CURRENT
    await empty.call("DEL", SCHEMA_VERSION)
    done = await migrate(empty, steps_writing([]))
    assert (done.before, done.after, done.applied, done.stamped) == (None, 3, [], True)
    assert await stored_version(empty) == 3
    assert await empty.call("EXISTS", SCHEMA_LOCK) == 0  # released


async def test_unversioned_data_is_version_1_then_each_step_runs_once_in_order(empty: RedisLayer) -> None:
    await empty.call("HSET", account_key("ada"), "id", "p-ada")
    ran: list[int] = []
    done = await migrate(empty, steps_writing(ran))
    assert (done.before, done.after, [s.version for s in done.applied], done.stamped) == (UNVERSIONED, 3, [2, 3], True)
    assert ran == [2, 3]
    assert await empty.call("HMGET", account_key("ada"), "m2", "m3") == [b"1", b"1"]
    again = await migrate(empty, steps_writing(ran))  # idempotent: nothing left to do
    assert (again.before, again.after, again.applied, again.stamped) == (3, 3, [], False)
    assert ran == [2, 3]


async def test_a_step_that_fails_leaves_the_version_of_the_last_one_done(empty: RedisLayer) -> None:
    await empty.call("HSET", account_key("bo"), "id", "p-bo")
    ran: list[int] = []
    with pytest.raises(RuntimeError):
        await migrate(empty, steps_writing(ran, fail_at=3))
    assert await stored_version(empty) == 2 and await empty.call("EXISTS", SCHEMA_LOCK) == 0
    done = await migrate(empty, steps_writing(ran))  # run again: only step 3
    assert [s.version for s in done.applied] == [3] and ran == [2, 3, 3]


async def test_two_migrations_at_once_apply_each_step_once(empty: RedisLayer, redis_url: str) -> None:
    await empty.call("HSET", account_key("cy"), "id", "p-cy")
    ran: list[int] = []
    slow = tuple(Step(s.version, s.summary, _slowed(s)) for s in steps_writing(ran))
    other = RedisLayer.connect(empty.url, max_connections=8)
    try:
        first, second = await asyncio.gather(migrate(empty, slow), migrate(other, slow))
    finally:
        await other.close()
    assert sorted(len(done.applied) for done in (first, second)) == [0, 2]
    assert ran == [2, 3] and await stored_version(empty) == 3


def _slowed(step: Step):  # type: ignore[no-untyped-def]
    async def apply(layer: RedisLayer) -> None:
        await asyncio.sleep(0.3)  # long enough for the other migration to meet the lock
        await step.apply(layer)

    return apply


async def test_a_migration_waits_only_so_long_for_the_lock(empty: RedisLayer) -> None:
    await empty.call("SET", SCHEMA_LOCK, "someone-else", "PX", 5000)
    with pytest.raises(MigrationBusy, match="held the lock"):
        await migrate(empty, (), wait_s=0.3)
    assert await empty.call("GET", SCHEMA_LOCK) == b"someone-else"  # theirs, untouched


async def test_servers_refuse_a_layout_they_do_not_read(empty: RedisLayer) -> None:
    await empty.call("HSET", account_key("di"), "id", "p-di")
    # Unversioned data of layout 1 under code that reads 2: the migration was not run.
    with pytest.raises(LayoutMismatch, match=r"version 1, this code reads version 2: run `python -m tools.migrate`"):
        await check_layout(empty, code=2)
    assert await stored_version(empty) is None  # nothing stamped on a refusal
    await empty.call("SET", SCHEMA_VERSION, "7")
    with pytest.raises(LayoutMismatch, match="version 7, newer than this code's 1"):
        await check_layout(empty)
    await empty.call("SET", SCHEMA_VERSION, "1")
    assert await check_layout(empty) == 1


def run_module(module: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def run_migrate(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_module("tools.migrate", *args, env={**os.environ, **(env or {})})


async def test_the_command_says_what_it_did_with_exit_codes_a_deploy_can_use(empty: RedisLayer) -> None:
    url = empty.url
    check = run_migrate("--redis-url", url, "--check")
    assert check.returncode == migrate_tool.OK and "no tafel data" in check.stdout
    await empty.call("HSET", account_key("ed"), "id", "p-ed")
    check = run_migrate("--check", env={"REDIS_URL": url})
    assert check.returncode == migrate_tool.NEEDED and "unversioned" in check.stdout, check.stdout
    done = run_migrate(env={"REDIS_URL": url})
    assert done.returncode == migrate_tool.OK and "unversioned data: stamped version 1" in done.stdout, done.stdout
    again = run_migrate("--redis-url", url)
    assert again.returncode == migrate_tool.OK and "nothing to do" in again.stdout
    assert run_migrate("--redis-url", url, "--check").returncode == migrate_tool.OK
    await empty.call("SET", SCHEMA_VERSION, "9")
    newer = run_migrate("--redis-url", url)
    assert newer.returncode == migrate_tool.NEWER and "newer than this code" in newer.stdout
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    usage = run_module("tools.migrate", env=env)
    assert usage.returncode == migrate_tool.USAGE and "REDIS_URL" in usage.stderr
    down = run_migrate("--redis-url", "redis://127.0.0.1:1/0")
    assert down.returncode == migrate_tool.FAILED and "failed" in down.stdout


async def test_a_rules_service_refuses_to_start_on_newer_data_and_says_why(empty: RedisLayer) -> None:
    await empty.call("SET", SCHEMA_VERSION, "9")
    env = {**os.environ, "REDIS_URL": empty.url, "TAFEL_PORT": "0", "TAFEL_INTERNAL_SECRET": "s" * 32}
    started = run_module("services.connect4", env=env)
    assert started.returncode == 3, started.stderr[-2000:]
    assert "LISTENING" not in started.stdout
    assert "not serving: the Redis layout is version 9, newer than this code's 1" in started.stderr


async def test_a_gateway_refuses_to_start_on_data_the_migration_has_not_reached(empty: RedisLayer) -> None:
    await empty.call("SET", SCHEMA_VERSION, "0")  # an older layout than this code's
    env = {
        **os.environ,
        "REDIS_URL": empty.url,
        "TAFEL_PORT": "0",
        "TAFEL_TOKEN_SECRET": "t" * 32,
        "TAFEL_INTERNAL_SECRET": "s" * 32,
        **{f"TAFEL_RULES_{game.upper()}": "off" for game in ("connect4", "plus4", "coloursquare")},
    }
    started = run_module("gateway", env=env)
    assert started.returncode == 3, started.stderr[-2000:]
    assert "version 0, this code reads version 1: run `python -m tools.migrate`" in started.stderr
