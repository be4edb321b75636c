"""Ratings to pair by when the gateway has no rating book: a Redis hash per game."""

from __future__ import annotations

import math

from kit.redis.keys import ratings_source_key
from kit.redis.layer import RedisLayer

DEFAULT_RATING = 1500.0


class HashRatings:
    """Ratings from `ratings_source_key(game)` (player id -> rating, the first number of the
    value); DEFAULT_RATING when absent or unreadable."""

    def __init__(self, layer: RedisLayer) -> None:
        self.layer = layer

    async def rating(self, player_id: str, game: str) -> float:
        return parse_rating(await self.layer.call("HGET", ratings_source_key(game), player_id))


def parse_rating(raw: bytes | str | None) -> float:
    if raw is None:
        return DEFAULT_RATING
    text = raw.decode() if isinstance(raw, bytes) else raw
    head = text.replace(",", " ").replace("|", " ").replace(":", " ").split()
    try:
        value = float(head[0]) if head else DEFAULT_RATING
    except ValueError:
        return DEFAULT_RATING
    return value if math.isfinite(value) else DEFAULT_RATING
