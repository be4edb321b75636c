"""The checkout's `tafel-conformance`: the SDK's conformance runner (tafel.conformance.runner),
which may start a platform of its own when --server is left out (Redis, the rules services, two
gateways on loopback, as `make run` does; tools/platform.py). The SDK's runner knows nothing of
this launcher, so an installed SDK (clients/python's wheel) needs no checkout: it checks against
the --server it is given.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from tafel.conformance import runner

from tools.platform import Platform


class KitPlatform:
    """A platform of the kit's own: its gateways killed and restarted by index (gateway-restart)."""

    def __init__(self) -> None:
        env = {
            "TAFEL_TOKEN_SECRET": secrets.token_hex(32),
            "TAFEL_LOG_LEVEL": "WARNING",
            "TAFEL_GRACE_S": "1",
            "TAFEL_MIN_PER_MOVE_S": "0.5",  # lets act-before-clock use a short clock
        }
        # Two gateways: gateway-restart kills one mid-game while the other carries on.
        self.platform = Platform(gateways=2, fixed_ports=False, extra_env=env, bot_pool=False).start()
        self.addresses = list(self.platform.gateway_addresses)

    def kill(self, index: int) -> None:
        self.platform.kill(f"gateway-{index}")

    def restart(self, index: int) -> None:
        self.platform.restart(f"gateway-{index}")

    def stop(self) -> None:
        self.platform.stop()


def main(argv: Sequence[str] | None = None) -> None:
    runner.main(argv, start_platform=KitPlatform)


if __name__ == "__main__":
    main()
