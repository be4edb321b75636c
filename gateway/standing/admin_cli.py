"""`tafel-admin`: the staff's terminal.

`tafel-admin grant NAME ROLE [--reason TEXT]` and `tafel-admin staff` run on the server side,
straight against the deployment's Redis (REDIS_URL from the environment, as the servers read it, or
--redis-url): that is how the first admin is made, by whoever holds the deployment's secrets,
never through an API call. The entry is in the audit log with the server as the actor.

Every other subcommand (reports, lookup, warn, suspend, ban, audit, ...) is a client of the
moderation API over gRPC, signed in as a staff account: the Python SDK's
`tafel.cli.moderation.main`; tools/tafel_admin.py (the console script) sends each to its side.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from redis.exceptions import RedisError

from gateway.standing.roles import ROLE_NAMES, ROLES_BY_NAME
from gateway.standing.store import StandingStore
from kit.errors import Refused
from kit.redis.layer import RedisLayer

SERVER_SIDE = ("grant", "staff")  # the subcommands run here; tools/tafel_admin.py sends the rest on


def parser() -> argparse.ArgumentParser:
    parse = argparse.ArgumentParser(prog="tafel-admin", description="Grant roles on the server (grant, staff).")
    parse.add_argument("--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    sub = parse.add_subparsers(dest="command", required=True)
    grant = sub.add_parser("grant", help="give an account a role (player takes a staff role away)")
    grant.add_argument("username")
    grant.add_argument("role", choices=sorted(ROLES_BY_NAME))
    grant.add_argument("--reason", default="granted on the server with tafel-admin")
    sub.add_parser("staff", help="list the accounts with a staff role")
    return parse


async def run(args: argparse.Namespace) -> int:
    layer = RedisLayer.connect(args.redis_url, max_connections=2)
    store = StandingStore(layer)
    try:
        if args.command == "grant":
            row = await store.set_role(None, args.username, ROLES_BY_NAME[args.role], args.reason)
            print(f"{row.username} is now {args.role}")
        else:
            staff = await store.staff()
            if not staff:
                print("no staff yet: make the first admin with `tafel-admin grant NAME admin`")
            for _, role, username in staff:
                print(f"{username:<24} {ROLE_NAMES[role]}")
        return 0
    except Refused as refused:
        print(f"tafel-admin: {refused.message}", file=sys.stderr)
        return 1
    except (RedisError, OSError):
        print(f"tafel-admin: cannot reach Redis at {args.redis_url}", file=sys.stderr)
        return 4
    finally:
        await layer.close()


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(run(parser().parse_args(argv)))
