"""`python -m tools.migrate [--redis-url URL] [--check]`: bring a Redis's tafel data to the layout
this code reads (kit/redis/migrations, docs/migrations.md).

Run it before new servers start on existing data: the deploy does, and so does `make run`. It
stamps an empty Redis with the current version, stamps tafel data that has no version as version
1, then applies each missing step in order under a lock (a second run waits for the first, then
finds nothing to do). Running it again is harmless. A Redis Cluster URL (redis+cluster://) works:
every master is scanned.

REDIS_URL comes from the environment, as the servers' does, unless --redis-url is given.

Exit status: 0 the data is at this code's version (or, with --check, already was); 1 with --check,
a migration is needed; 2 a usage or configuration error; 3 the data is newer than this code;
4 Redis could not be reached, another migration held the lock too long, or a step failed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from redis.exceptions import RedisError

from kit.redis.layer import RedisLayer
from kit.redis.migrations import (
    STEPS,
    LayoutMismatch,
    MigrationBusy,
    Step,
    current_version,
    migrate,
    pending,
    stored_version,
)

OK, NEEDED, USAGE, NEWER, FAILED = 0, 1, 2, 3, 4


def say(line: str) -> None:
    print(f"migrate: {line}", flush=True)


async def run(url: str, check: bool, wait_s: float, steps: tuple[Step, ...] = STEPS) -> int:
    target = current_version(steps)
    layer = RedisLayer.connect(url, max_connections=4)
    try:
        if check:
            found, missing = await pending(layer, steps)
            if found is None:
                say(f"no tafel data; the servers stamp version {target} at their start")
                return OK
            stored = await stored_version(layer)
            if not missing and stored is not None:
                say(f"the data is at version {found}, the version this code reads")
                return OK
            todo = ", ".join(f"{step.version} ({step.summary})" for step in missing) or f"stamp version {found}"
            say(
                f"the data is at version {found}{'' if stored is not None else ' (unversioned)'}; "
                f"this code reads {target}: to do: {todo}"
            )
            return NEEDED
        done = await migrate(layer, steps, wait_s=wait_s, say=say)
        if done.before is None:
            say(f"no tafel data: stamped version {done.after}")
        elif done.applied:
            say(f"migrated from version {done.before} to {done.after}")
        elif done.stamped:
            say(f"unversioned data: stamped version {done.after}")
        else:
            say(f"the data is at version {done.after} already; nothing to do")
        return OK
    except LayoutMismatch as error:
        say(str(error))
        return NEWER
    except MigrationBusy as error:
        say(str(error))
        return FAILED
    except (RedisError, OSError) as error:
        say(f"Redis at {url} failed: {error}")
        return FAILED
    finally:
        await layer.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.migrate",
        description="Bring the Redis layout to the version this code reads (docs/migrations.md).",
    )
    parser.add_argument("--redis-url", help="the Redis (or redis+cluster://) URL; default: $REDIS_URL")
    parser.add_argument("--check", action="store_true", help="only say what would be done (exit 1 when something is)")
    parser.add_argument("--wait", type=float, default=120.0, help="seconds to wait for another migration's lock")
    args = parser.parse_args(argv)
    url = args.redis_url or os.environ.get("REDIS_URL", "")
    if not url:
        print("migrate: no Redis given: set REDIS_URL or pass --redis-url", file=sys.stderr)
        return USAGE
    return asyncio.run(run(url, args.check, args.wait))


if __name__ == "__main__":
    raise SystemExit(main())
