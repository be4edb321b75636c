"""A player's rating as a pool stores it: "rating rd volatility games last_played_ms" (the first
number is the rating: the format the matchmaker's rating source reads)."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.ratings.glicko2 import Rating


@dataclass(frozen=True)
class Stored:
    rating: Rating
    games: int
    last_ms: int

    def encode(self) -> str:
        r = self.rating
        return f"{r.rating:.6f} {r.rd:.6f} {r.volatility:.9f} {self.games} {self.last_ms}"

    @classmethod
    def decode(cls, raw: bytes | str | None) -> Stored | None:
        if raw is None:
            return None
        text = raw.decode() if isinstance(raw, bytes) else raw
        try:
            parts = text.split()
            return cls(Rating(float(parts[0]), float(parts[1]), float(parts[2])), int(parts[3]), int(parts[4]))
        except (IndexError, ValueError):
            return None
