"""Every conformance scenario by name: the game scenarios (scenarios.py), the social ones
(social.py, the client's --events mode) and the tournaments' (tournaments.py, --tournament),
and running one with its time limit. Its own module so that social.py can build on scenarios.py's
helpers without an import cycle."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from tafel.conformance.scenarios import SCENARIOS as GAME_SCENARIOS
from tafel.conformance.scenarios import Failed, Result, Settings
from tafel.conformance.social import SOCIAL
from tafel.conformance.tournaments import TOURNAMENTS

SCENARIOS: dict[str, Callable[[Settings], Awaitable[dict[str, Any]]]] = {**GAME_SCENARIOS, **SOCIAL, **TOURNAMENTS}


async def run_scenario(name: str, settings: Settings) -> Result:
    started = time.monotonic()
    try:
        details = await asyncio.wait_for(SCENARIOS[name](settings), settings.timeout_s * 2)
        return Result(name, True, "passed", time.monotonic() - started, details)
    except Failed as failure:
        return Result(name, False, str(failure), time.monotonic() - started)
    except TimeoutError:
        return Result(name, False, f"did not finish within {settings.timeout_s * 2:.0f} s", time.monotonic() - started)
