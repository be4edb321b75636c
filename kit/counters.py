"""Prometheus counters and histograms updated on a process's event-loop thread and read when
Prometheus scrapes.

prometheus_client's Counter.inc asks whether the metric is observable (two Python calls), then
updates its value under a lock: four Python calls and a lock per count; Histogram.observe does the
same twice and walks its buckets in Python. A Play stream counts three times a move and observes
once, a rules service counts and observes once, every move. Here each is plain numbers, updated by
the one thread that runs the process's loop (asyncio.to_thread work never counts); a scrape, on
the metrics server's own thread, only reads them. The exposition is prometheus_client's for a
counter or histogram family (`<name>_total`; `_bucket`, `_count`, `_sum`), without `_created`.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar, cast

from prometheus_client import CollectorRegistry, Gauge
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import INF, floatToGoString

_go_float = cast(Callable[[float], str], floatToGoString)  # (untyped in prometheus_client)


_Child = TypeVar("_Child")


class _Family(Collector, Generic[_Child]):
    """A metric family's name, help and label names, and its children by label values."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str]) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self._children: dict[tuple[str, ...], _Child] = {}

    @abstractmethod
    def _child(self) -> _Child:
        """A new label set's child."""

    def labels(self, *values: str, **named: str) -> _Child:
        """A label set's child, made on first use (keep it: asking costs a dict lookup)."""
        if named:
            if values:
                raise ValueError("give label values by position or by name, not both")
            values = tuple(named[label] for label in self.labelnames)
        if len(values) != len(self.labelnames):
            raise ValueError(f"{self.name} has labels {self.labelnames}, got {values}")
        key = tuple(str(value) for value in values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self._child()
        return child


class LoopCounter:
    """One label set's count: `inc()`, from the loop's thread only."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("a counter only goes up")
        self.value += amount


class LoopCounters(_Family[LoopCounter]):
    """A counter family registered with `registry`: `labels(...)` gives a label set's LoopCounter,
    `inc()` counts a family without labels."""

    def __init__(
        self, name: str, documentation: str, labelnames: Sequence[str] = (), registry: CollectorRegistry | None = None
    ) -> None:
        super().__init__(name.removesuffix("_total"), documentation, labelnames)
        self._plain = self.labels() if not self.labelnames else None
        if registry is not None:
            registry.register(self)

    def _child(self) -> LoopCounter:
        return LoopCounter()

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


class LoopHistogram:
    """One label set's histogram: `observe()`, from the loop's thread only."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds  # ascending upper bounds, the last +Inf
        self.counts = [0] * len(bounds)  # per bucket, not cumulative
        self.sum = 0.0

    def observe(self, amount: float) -> None:
        self.sum += amount
        self.counts[bisect_left(self.bounds, amount)] += 1  # the first bound >= amount: le is inclusive


class LoopHistograms(_Family[LoopHistogram]):
    """A histogram family registered with `registry`: `labels(...)` gives a label set's
    LoopHistogram (keep it). `buckets` as prometheus_client's (+Inf added when missing)."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Sequence[str] = (),
        *,
        buckets: Sequence[float],
        registry: CollectorRegistry | None = None,
    ) -> None:
        bounds = sorted(float(bound) for bound in buckets)
        if not bounds or bounds[-1] != INF:
            bounds.append(INF)
        super().__init__(name, documentation, labelnames)
        self.bounds = tuple(bounds)
        self._les = [_go_float(bound) for bound in bounds]  # the `le` labels, as prometheus_client writes them
        if registry is not None:
            registry.register(self)

    def _child(self) -> LoopHistogram:
        return LoopHistogram(self.bounds)

    def describe(self) -> Iterable[Metric]:
        return [HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)]

    def collect(self) -> Iterable[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for values, child in list(self._children.items()):
            counts, total = list(child.counts), child.sum  # (read once: the loop goes on counting)
            cumulative = 0
            buckets = []
            for le, count in zip(self._les, counts, strict=True):
                cumulative += count
                buckets.append((le, float(cumulative)))
            family.add_metric(values, buckets, total)
        return [family]


def loop_tasks_gauge(registry: CollectorRegistry) -> None:
    """`tafel_event_loop_tasks`: the running loop's unfinished asyncio tasks, read at each scrape, so
    a soak (tools/soak.py) sees a task leak. Called on the loop's thread; the scrape's thread reads
    the set (asyncio.all_tasks retries a copy the loop changed meanwhile)."""
    loop = asyncio.get_running_loop()
    Gauge("tafel_event_loop_tasks", "Unfinished asyncio tasks of the process's loop", registry=registry).set_function(
        lambda: float(len(asyncio.all_tasks(loop)))
    )
