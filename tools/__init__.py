"""Developer and operator entry points: running the platform, benchmarks, code-generation helpers."""
