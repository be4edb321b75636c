"""The Redis layout's version, the check every server makes at start, and the migration that moves
data from one version to the next (docs/migrations.md).

Version 1 is the layout kit/redis/keys.py describes today. Every change to it ships with a step
(one module in this package, listed in `STEPS`) that turns data of the version before into it;
`python -m tools.migrate` (tools/migrate.py) runs the steps a Redis still lacks, under a lock, and
the deploy runs it before new servers take traffic. Servers read one layout only: at start they
compare the stored version with `CURRENT` and refuse to serve any other (`check_layout`).

The version lives in `SCHEMA_VERSION`; tafel data without it is an unversioned deployment of
layout 1 (`UNVERSIONED`), which is what every Redis held before the version existed.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from kit.redis.keys import SCHEMA_LOCK, SCHEMA_VERSION
from kit.redis.layer import RedisLayer
from kit.redis.scripts import script

log = logging.getLogger("tafel.migrations")
UNVERSIONED = 1  # the version of tafel data that has no SCHEMA_VERSION key
MIGRATE_COMMAND = "python -m tools.migrate"
_SCHEMA_TAG = "{schema}"


@dataclass(frozen=True)
class Step:
    """Turns data of layout `version - 1` into layout `version`. `apply` must be idempotent: a
    migration that died half-way runs the step again from its start. It may read and write any
    tafel key; on a Redis Cluster it reaches every master through `scan_keys`."""

    version: int
    summary: str  # one line: what changes, for the tool's output
    apply: Callable[[RedisLayer], Awaitable[None]]


# The steps, in order: STEPS[i].version == i + 2. A step is a module of its own in this package
# (vNNNN_<what>.py, defining STEP) listed here; none yet, layout 1 being the first versioned one.
STEPS: tuple[Step, ...] = ()


def current_version(steps: Sequence[Step] = STEPS) -> int:
    """The layout this code reads and writes: the last step's, or 1."""
    return steps[-1].version if steps else 1


CURRENT = current_version()


class LayoutMismatch(Exception):
    """The data's layout is not the one this code reads; the message says what to run."""


class MigrationBusy(Exception):
    """Another migration held the lock for longer than this one would wait."""


async def stored_version(layer: RedisLayer) -> int | None:
    """The version in SCHEMA_VERSION, None when there is none."""
    raw = await layer.call("GET", SCHEMA_VERSION)
    return None if raw is None else int(raw)


async def scan_keys(layer: RedisLayer, pattern: str) -> AsyncIterator[str]:
    """Every key matching `pattern`, on a single Redis or on every master of a cluster (redis-py's
    cluster client scans each primary). A key may come twice; steps must not mind."""
    client: Any = layer.client
    async for key in client.scan_iter(match=pattern, count=1000):
        yield key.decode() if isinstance(key, bytes) else str(key)


async def holds_data(layer: RedisLayer) -> bool:
    """Whether any tafel key other than the version's own is there (stops at the first)."""
    async for key in scan_keys(layer, "tafel:*"):
        if _SCHEMA_TAG not in key:
            return True
    return False


async def data_version(layer: RedisLayer) -> int | None:
    """The version the data is at: the stored one, UNVERSIONED for tafel data without it, None for
    a Redis with no tafel data at all."""
    stored = await stored_version(layer)
    if stored is not None:
        return stored
    return UNVERSIONED if await holds_data(layer) else None


def mismatch_message(found: int, code: int = CURRENT) -> str:
    if found > code:
        return (
            f"the Redis layout is version {found}, newer than this code's {code}: run a build that reads "
            f"version {found} (a migration only moves forward; data must not be served by older code)"
        )
    return (
        f"the Redis layout is version {found}, this code reads version {code}: "
        f"run `{MIGRATE_COMMAND}` (with this REDIS_URL) first, then start the servers again"
    )


async def check_layout(layer: RedisLayer, code: int = CURRENT) -> int | None:
    """At a server's start: the data's version, when it is the one this code reads; else
    LayoutMismatch saying what to run. A Redis with no tafel data is stamped with `code` (so a fresh
    Redis needs no step before `make run` or a test), and so is unversioned data when `code` is
    the version it is at; both by SET NX, so every server and a migration agree on the stamp.
    None, with a warning, when Redis cannot be reached: a server may start before its Redis and
    answers UNAVAILABLE until it is there, as it always has (the deploy's migration, which must
    reach Redis, has checked the layout by then)."""
    try:
        stored = await stored_version(layer)
    except (RedisConnectionError, RedisTimeoutError, OSError) as error:
        log.warning("the Redis layout's version was not checked: Redis cannot be reached", extra={"error": str(error)})
        return None
    if stored is None:
        if await layer.call("EXISTS", SCHEMA_LOCK):
            raise LayoutMismatch(f"a migration is running on this Redis (`{MIGRATE_COMMAND}`): start once it is done")
        found = UNVERSIONED if await holds_data(layer) else code
        if found == code and not await layer.call("SET", SCHEMA_VERSION, str(code), "NX"):
            found = await stored_version(layer) or found  # someone stamped first: theirs stands
        stored = found
    if stored != code:
        raise LayoutMismatch(mismatch_message(stored, code))
    return stored


@dataclass
class Migrated:
    before: int | None  # the data's version found (None: no tafel data)
    after: int
    applied: list[Step] = field(default_factory=list)
    stamped: bool = False  # SCHEMA_VERSION was written without a step (empty or unversioned data)


async def pending(layer: RedisLayer, steps: Sequence[Step] = STEPS) -> tuple[int | None, list[Step]]:
    """The data's version and the steps it lacks (no lock: for --check)."""
    found = await data_version(layer)
    target = current_version(steps)
    if found is not None and found > target:
        raise LayoutMismatch(mismatch_message(found, target))
    return found, [step for step in steps if found is not None and step.version > found]


async def migrate(
    layer: RedisLayer,
    steps: Sequence[Step] = STEPS,
    *,
    wait_s: float = 120.0,
    lease_ms: int = 30_000,
    say: Callable[[str], None] = lambda line: None,
) -> Migrated:
    """Bring the data to the last step's version: stamp an empty Redis with it, stamp unversioned
    data UNVERSIONED, then apply each missing step in order, moving the version after each. One
    migration at a time (SCHEMA_LOCK, a lease kept alive while it runs); a second one waits up to
    `wait_s` for the lock and then finds nothing left to do."""
    target = current_version(steps)
    token = secrets.token_hex(16)
    await _acquire(layer, token, wait_s, lease_ms, say)
    lost = asyncio.Event()
    keeper = asyncio.ensure_future(_keep(layer, token, lease_ms, lost))
    try:
        found = await data_version(layer)
        if found is not None and found > target:
            raise LayoutMismatch(mismatch_message(found, target))
        done = Migrated(before=found, after=found or target)
        stored = await stored_version(layer)
        if stored is None:
            done.after = target if found is None else UNVERSIONED
            await _advance(layer, None, done.after, token)
            done.stamped = True
        for step in steps:
            if step.version <= done.after:
                continue
            if lost.is_set():
                raise MigrationBusy("the migration lock was lost (Redis unreachable for the lease's length?)")
            say(f"step {step.version}: {step.summary}")
            await step.apply(layer)
            await _advance(layer, step.version - 1, step.version, token)
            done.after = step.version
            done.applied.append(step)
        if done.after != target:
            raise LayoutMismatch(f"the Redis layout is version {done.after}, and no step leads from it to {target}")
        return done
    finally:
        keeper.cancel()
        await asyncio.gather(keeper, return_exceptions=True)
        await layer.run(script("leases/release"), [SCHEMA_LOCK], [token])


async def _acquire(layer: RedisLayer, token: str, wait_s: float, lease_ms: int, say: Callable[[str], None]) -> None:
    deadline = asyncio.get_running_loop().time() + wait_s
    told = False
    while not await layer.call("SET", SCHEMA_LOCK, token, "NX", "PX", lease_ms):
        if asyncio.get_running_loop().time() >= deadline:
            raise MigrationBusy(f"another migration has held the lock ({SCHEMA_LOCK}) for over {wait_s:.0f} s")
        if not told:
            say("another migration is running; waiting for it to finish")
            told = True
        await asyncio.sleep(0.2)


async def _keep(layer: RedisLayer, token: str, lease_ms: int, lost: asyncio.Event) -> None:
    while True:
        await asyncio.sleep(lease_ms / 3000)
        try:
            if not await layer.run(script("leases/renew"), [SCHEMA_LOCK], [token, lease_ms]):
                lost.set()
                return
        except Exception:  # a blip: the next renewal, or the step's own write, will tell
            continue


async def _advance(layer: RedisLayer, before: int | None, after: int, token: str) -> None:
    reply: Any = await layer.run(
        script("schema/advance"), [SCHEMA_VERSION, SCHEMA_LOCK], ["" if before is None else before, after, token]
    )
    code = int(reply[0])
    if code == 0:
        raise MigrationBusy("the migration lock was lost before the version could move; run the migration again")
    if code == 2:
        found = bytes(reply[1]).decode() or "none"
        raise MigrationBusy(f"the version moved under this migration (found {found}, expected {before}); run it again")
