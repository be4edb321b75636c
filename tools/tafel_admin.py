"""The `tafel-admin` console script: `grant` and `staff` run on the server against Redis
(gateway/standing/admin_cli.py); every other subcommand is the staff's client of the moderation API
(the Python SDK's tafel.cli.moderation). Here, in tools/, because the gateway may not import the
SDK nor the SDK the gateway."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    options = argparse.ArgumentParser(add_help=False)
    for option in ("--redis-url", "--server", "--user", "--password"):  # those that take a value
        options.add_argument(option)
    _, rest = options.parse_known_args(args)
    command = next((a for a in rest if not a.startswith("-")), "")
    from gateway.standing.admin_cli import SERVER_SIDE

    if command in SERVER_SIDE or not command:
        from gateway.standing.admin_cli import main as on_server

        return on_server(args)
    from tafel.cli.moderation import main as moderate

    return int(moderate(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
