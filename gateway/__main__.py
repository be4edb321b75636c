"""`python -m gateway`: the public gateway (configuration: gateway/settings.py)."""

from __future__ import annotations

import asyncio
import sys

from gateway.settings import GatewaySettings
from gateway.web.settings import WebSettings
from kit import logs
from kit.server import install_event_loop
from kit.settings import ConfigError


def main() -> None:
    try:
        settings = GatewaySettings.from_env()
        web = WebSettings.from_env()
    except ConfigError as error:
        print(f"gateway: configuration error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    logs.configure(settings.server.log_level, "tafel.gateway")
    install_event_loop()
    from gateway.server import serve

    asyncio.run(serve(settings, web))


if __name__ == "__main__":
    main()
