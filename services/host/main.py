"""The entry point every rules service shares: `python -m services.<game>` calls `serve_rules`."""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

from tafel_rules.game import Rules

from kit import logs, timesource
from kit.catalogue import rules_url
from kit.health import HEALTH_TIMEOUT_S, redis_reachable, scripts_loadable
from kit.redis.layer import RedisLayer
from kit.redis.migrations import LayoutMismatch, check_layout
from kit.redis.scripts import RULES_SCRIPTS
from kit.server import BindError, RunningServer, install_event_loop, run_until_signalled, start_server
from kit.settings import ConfigError, RulesSettings
from services.host.codec import GameCodec
from services.host.metrics import RulesMetrics
from services.host.service import RulesServicer, add_rules_service, service_names
from services.host.store import GameStore


async def start_rules_service(
    rules: Rules[Any, Any, Any, Any, Any], codec: GameCodec[Any, Any, Any, Any, Any], settings: RulesSettings
) -> tuple[RunningServer, RulesServicer[Any, Any, Any, Any, Any], RedisLayer]:
    """Start a rules service (tests call this with port 0) and return it with its parts; the
    caller closes the layer after the server. Data in a layout this code does not read is refused
    (LayoutMismatch: kit/redis/migrations), before anything is served."""
    layer = RedisLayer.connect(settings.server.redis_url)
    try:
        await check_layout(layer)
    except BaseException:
        await layer.close()
        raise
    store = GameStore(layer, live_ttl_s=settings.live_ttl_s, finished_ttl_s=settings.finished_ttl_s)
    metrics = RulesMetrics(rules.name)
    servicer = RulesServicer(
        rules,
        codec,
        store,
        metrics,
        cache_games=settings.cache_games,
        rules_url=rules_url(rules.name, settings.rules_base_url),
    )
    running = await start_server(
        settings.server,
        lambda server: add_rules_service(servicer, server),
        service_names(),
    )
    metrics.serve(settings.server.metrics_port, settings.server.host)
    # SERVING only while Redis answers and the service's scripts are loaded (docs/health.md).
    timeout_s = min(settings.server.health_check_s, HEALTH_TIMEOUT_S)
    checks = [redis_reachable(layer, timeout_s), scripts_loadable(layer, RULES_SCRIPTS, timeout_s)]
    await running.watch_health(checks, settings.server.health_check_s, logging.getLogger(f"tafel.{rules.name}"))
    return running, servicer, layer


def serve_rules(rules: Rules[Any, Any, Any, Any, Any], codec: GameCodec[Any, Any, Any, Any, Any]) -> None:
    try:
        settings = RulesSettings.from_env()
    except ConfigError as error:
        print(f"{rules.name}: configuration error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    log = logs.configure(settings.server.log_level, f"tafel.{rules.name}")
    timesource.announce()
    install_event_loop()

    async def main() -> None:
        running, _, layer = await start_rules_service(rules, codec, settings)

        log.info(
            "serving",
            extra={"game": rules.name, "address": f"{settings.server.host}:{running.port}"},
        )
        print(f"LISTENING {rules.name} {settings.server.host}:{running.port}", flush=True)
        await run_until_signalled(running, settings.server.grace_s, layer.close)
        log.info("stopped", extra={"game": rules.name})

    try:
        asyncio.run(main())
    except BindError as error:
        print(f"{rules.name}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    except LayoutMismatch as error:
        log.error(f"not serving: {error}")
        raise SystemExit(3) from None
