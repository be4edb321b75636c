"""One platform (real processes, as `make run` starts it) for the conformance tests; the clients
need a clock minimum low enough for the kit's short-clock scenario."""

from __future__ import annotations

from tests.platforms import platform_fixture

client_platform = platform_fixture("conformance", bot_pool=False)
