"""Prometheus metrics of a rules service, in a registry of its own (no module-level collectors)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from kit.metrics import loop_tasks_gauge


class RulesMetrics:
    def __init__(self, game: str, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        labels = {"game": game}
        self.moves = Counter(
            "tafel_rules_moves", "Actions answered, by outcome", ["game", "outcome"], registry=self.registry
        )
        self.latency = Histogram(
            "tafel_rules_apply_seconds",
            "Time to answer one action",
            ["game"],
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1.0),
            registry=self.registry,
        ).labels(**labels)
        self.games_created = Counter(
            "tafel_rules_games_created", "Games created", ["game"], registry=self.registry
        ).labels(**labels)
        self.open_streams = Gauge(
            "tafel_rules_open_streams", "Open ApplyMoves streams", ["game"], registry=self.registry
        ).labels(**labels)
        self.cached_games = Gauge(
            "tafel_rules_cached_games", "Decoded game states held in memory", ["game"], registry=self.registry
        ).labels(**labels)
        self._game = game
        self._outcomes: dict[str, Counter] = {}

    def count(self, outcome: str) -> None:
        # Label children are cached: `labels()` costs a few µs, on every move.
        child = self._outcomes.get(outcome)
        if child is None:
            child = self._outcomes[outcome] = self.moves.labels(game=self._game, outcome=outcome)
        child.inc()

    def serve(self, port: int, host: str = "127.0.0.1") -> None:
        if port:
            loop_tasks_gauge(self.registry)
            start_http_server(port, addr=host, registry=self.registry)
