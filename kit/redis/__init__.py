"""The Redis layer: the one place that connects to Redis, names keys and runs scripts."""
