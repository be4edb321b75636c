"""Raw replies of the pipelined connection (RedisLayer.call / many) as Python values: bulk
strings arrive as bytes, a hash as a flat field, value, field, value list."""

from __future__ import annotations

from typing import Any


def text(raw: Any) -> str:
    """A bulk string (or a number) as text."""
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def pairs(flat: list[Any]) -> dict[bytes, Any]:
    """An HGETALL (or any field, value, ...) reply as a dict."""
    return dict(zip(flat[::2], flat[1::2], strict=True))
