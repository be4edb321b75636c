"""Metrics every tier exposes beside its own (prometheus_client's, in the tier's registry)."""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry, Gauge


def loop_tasks_gauge(registry: CollectorRegistry) -> None:
    """`tafel_event_loop_tasks`: the running loop's unfinished asyncio tasks, read at each scrape, so
    a soak (tools/soak.py) sees a task leak. Called on the loop's thread; the scrape's thread reads
    the set (asyncio.all_tasks retries a copy the loop changed meanwhile)."""
    loop = asyncio.get_running_loop()
    Gauge("tafel_event_loop_tasks", "Unfinished asyncio tasks of the process's loop", registry=registry).set_function(
        lambda: float(len(asyncio.all_tasks(loop)))
    )
