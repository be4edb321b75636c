"""Prometheus metrics of a gateway process, in a registry of its own."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from kit.metrics import loop_tasks_gauge


class GatewayMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.actions = Counter(
            "tafel_gateway_actions",
            "Player actions answered, by transport and outcome",
            ["transport", "outcome"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "tafel_gateway_action_seconds",
            "Time to answer one action (rules service and clock included)",
            ["transport"],
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1.0, 5.0),
            registry=self.registry,
        )
        self.play_streams = Gauge("tafel_gateway_play_streams", "Open Play streams", registry=self.registry)
        self.watch_streams = Gauge("tafel_gateway_watch_streams", "Open WatchGame streams", registry=self.registry)
        self.events_sent = Counter(
            "tafel_gateway_events_sent", "Game events delivered to clients", registry=self.registry
        )
        self.timeouts = Counter("tafel_gateway_timeouts", "Turn deadlines handled", registry=self.registry)

    def gauge(self, name: str, documentation: str, read: Callable[[], float]) -> None:
        Gauge(name, documentation, registry=self.registry).set_function(read)

    def serve(self, port: int, host: str = "127.0.0.1") -> None:
        if port:
            loop_tasks_gauge(self.registry)
            start_http_server(port, addr=host, registry=self.registry)
