"""kit/counters.py: loop counters expose what prometheus_client's counters expose for a scrape."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from kit.counters import LoopCounters, LoopHistograms


def _samples(registry: CollectorRegistry) -> list[str]:
    """The exposition's sample lines (the _created ones, which loop counters leave out, aside)."""
    text = generate_latest(registry).decode()
    return [line for line in text.splitlines() if line and "_created" not in line]


def test_a_scrape_reads_what_prometheus_client_would_have_shown() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    mine = LoopCounters("tafel_x_actions", "Actions, by path", ["path", "outcome"], registry=ours)
    reference = Counter("tafel_x_actions", "Actions, by path", ["path", "outcome"], registry=theirs)
    plain = LoopCounters("tafel_x_sent", "Sent", registry=ours)
    plain_reference = Counter("tafel_x_sent", "Sent", registry=theirs)
    applied = mine.labels("stream", "applied")
    for _ in range(3):
        applied.inc()
        reference.labels("stream", "applied").inc()
    mine.labels(path="unary", outcome="refused").inc(2)
    reference.labels(path="unary", outcome="refused").inc(2)
    plain.inc()
    plain_reference.inc()
    assert _samples(ours) == _samples(theirs)
    assert ours.get_sample_value("tafel_x_actions_total", {"path": "stream", "outcome": "applied"}) == 3


def test_a_counter_only_goes_up_and_labels_must_match() -> None:
    registry = CollectorRegistry()
    counters = LoopCounters("tafel_y", "Y", ["game"], registry=registry)
    with pytest.raises(ValueError):
        counters.labels("connect4").inc(-1)
    with pytest.raises(ValueError):
        counters.labels("connect4", "extra")
    with pytest.raises(ValueError):
        counters.inc()  # a family with labels counts on a label set
    assert counters.labels("connect4") is counters.labels(game="connect4")


def test_a_name_is_registered_once() -> None:
    registry = CollectorRegistry()
    LoopCounters("tafel_z", "Z", registry=registry)
    with pytest.raises(ValueError):
        Counter("tafel_z", "Z again", registry=registry)


def test_a_histogram_scrape_reads_what_prometheus_client_would_have_shown() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    buckets = (0.001, 0.01, 0.1, 1.0)
    mine = LoopHistograms("tafel_x_seconds", "Time", ["path"], buckets=buckets, registry=ours)
    reference = Histogram("tafel_x_seconds", "Time", ["path"], buckets=buckets, registry=theirs)
    # On a bound (le is inclusive), between bounds, past the last, and zero.
    for path, value in [("stream", 0.001), ("stream", 0.005), ("stream", 3.0), ("unary", 0.0), ("stream", 0.1)]:
        mine.labels(path).observe(value)
        reference.labels(path).observe(value)
    assert _samples(ours) == _samples(theirs)
    assert ours.get_sample_value("tafel_x_seconds_bucket", {"path": "stream", "le": "0.01"}) == 2
    assert ours.get_sample_value("tafel_x_seconds_count", {"path": "stream"}) == 4
