"""Prometheus counters bumped on a process's event-loop thread and read when Prometheus scrapes.

prometheus_client's Counter.inc asks whether the metric is observable (two Python calls), then
updates its value under a lock: four Python calls and a lock per count. A Play stream counts three
times a move and a rules service once, every move. These counters are a plain number each, bumped
by the one thread that runs the process's loop (asyncio.to_thread work never counts); a scrape,
on the metrics server's own thread, only reads them. The exposition is prometheus_client's for a
counter family (`<name>_total` per label set), without the `_created` samples.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector


class LoopCounter:
    """One label set's count: `inc()`, from the loop's thread only."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("a counter only goes up")
        self.value += amount


class LoopCounters(Collector):
    """A counter family registered with `registry`: `labels(...)` gives a label set's LoopCounter
    (keep it: asking costs a dict lookup), `inc()` counts a family without labels."""

    def __init__(
        self, name: str, documentation: str, labelnames: Sequence[str] = (), registry: CollectorRegistry | None = None
    ) -> None:
        self.name = name.removesuffix("_total")
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self._children: dict[tuple[str, ...], LoopCounter] = {}
        self._plain = self.labels() if not self.labelnames else None
        if registry is not None:
            registry.register(self)

    def labels(self, *values: str, **named: str) -> LoopCounter:
        if named:
            if values:
                raise ValueError("give label values by position or by name, not both")
            values = tuple(named[label] for label in self.labelnames)
        if len(values) != len(self.labelnames):
            raise ValueError(f"{self.name} has labels {self.labelnames}, got {values}")
        key = tuple(str(value) for value in values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = LoopCounter()
        return child

    def inc(self, amount: float = 1.0) -> None:
        if self._plain is None:
            raise ValueError(f"{self.name} has labels: count on labels(...)")
        self._plain.inc(amount)

    def describe(self) -> Iterable[Metric]:
        return [CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)]

    def collect(self) -> Iterable[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for values, child in list(self._children.items()):  # (a copy: the loop may add one meanwhile)
            family.add_metric(values, child.value)
        return [family]

