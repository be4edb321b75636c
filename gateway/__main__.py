"""`python -m gateway`: the public gateway. Every setting is read here, once (gateway/settings.py),
and handed to the composition root (gateway/server.py)."""

from __future__ import annotations

import kit.grpc_polling  # noqa: F401  (first: gRPC reads its experiments when imported)

# isort: split
import asyncio
import sys

from gateway.settings import GatewaySettings
from kit import logs, timesource
from kit.openfiles import open_files_to_hard_limit
from kit.redis.migrations import LayoutMismatch
from kit.server import BindError, install_event_loop
from kit.settings import ConfigError


def main() -> None:
    try:
        settings = GatewaySettings.from_env()
    except ConfigError as error:
        print(f"gateway: configuration error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    log = logs.configure(settings.server.log_level, "tafel.gateway")
    timesource.announce()
    open_files_to_hard_limit()  # a descriptor per connected player
    install_event_loop()
    from gateway.server import serve

    try:
        asyncio.run(serve(settings))
    except BindError as error:
        print(f"gateway: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    except LayoutMismatch as error:
        log.error(f"not serving: {error}")
        raise SystemExit(3) from None


if __name__ == "__main__":
    main()
