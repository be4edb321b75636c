"""Page tokens, one scheme for every listing: an opaque token (URL-safe base64 of a short JSON
list) that names the listing or phase it belongs to first, so a token of one listing is refused by
another, and is checked whole before anything of it reaches Redis (BAD_PAGE_TOKEN).

Two kinds of place in a listing ride in it: an offset, for a listing kept in one sorted set read by
rank (a leaderboard, a personal-best board, the tournaments, notices); and a cursor (a score and a
member), for a listing that changes while it is paged (games live, a player's games and records),
where an offset would skip or repeat rows.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from dataclasses import dataclass
from typing import Any

from kit.errors import invalid
from kit.redis.layer import RedisLayer
from kit.redis.replies import text

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20
_MAX_TOKEN = 512  # characters: a token this gateway issues is far shorter


def _encode(parts: list[Any]) -> str:
    raw = json.dumps(parts, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _decode(token: str) -> Any:
    """The JSON a token carries; ValueError (or binascii.Error, TypeError) for anything else."""
    if len(token) > _MAX_TOKEN:
        raise ValueError
    return json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))


def _bad_token() -> Exception:
    return invalid("BAD_PAGE_TOKEN", "page_token is not a token this listing issued")


def encode_offset(listing: str, offset: int) -> str:
    return _encode([listing, offset])


def decode_offset(listing: str, token: str) -> int:
    if not token:
        return 0
    try:
        name, offset = _decode(token)
        if name != listing or not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise ValueError
        return offset
    except (binascii.Error, ValueError, TypeError):
        raise _bad_token() from None


@dataclass(frozen=True)
class PageCursor:
    """Where the next page of a listing by score starts: after `member` at `score`, in `phase` (a
    listing read from several sorted sets in turn names the one it is in)."""

    phase: str
    score: float
    member: str

    def encode(self) -> str:
        return _encode([self.phase, self.score, self.member])

    @classmethod
    def decode(cls, token: str, phases: tuple[str, ...]) -> PageCursor | None:
        """The cursor a page token names (None for no token), or Refused(INVALID_ARGUMENT) for
        anything this gateway did not issue: a crafted token must never reach Redis (NaN is a
        score Redis refuses, and its error would read as an outage that clients retry forever)."""
        if not token:
            return None
        try:
            phase, score, member = _decode(token)
            if not isinstance(phase, str) or phase not in phases or not isinstance(member, str):
                raise ValueError
            if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score):
                raise ValueError
            return cls(phase, float(score), member)
        except (binascii.Error, ValueError, TypeError):
            raise _bad_token() from None


async def zpage_newest(
    layer: RedisLayer, key: str, size: int, after: tuple[float, str] | None
) -> tuple[list[tuple[str, float]], bool]:
    """Members of a sorted set from the highest score down, after (score, member) when given.
    Returns up to `size` members and whether more follow."""
    results: list[tuple[str, float]] = []
    top: Any = "+inf" if after is None else after[0]
    offset = 0
    while len(results) <= size:
        want = size + 1 - len(results) + 16
        rows: Any = await layer.client.zrevrangebyscore(key, top, "-inf", start=offset, num=want, withscores=True)
        if not rows:
            break
        offset += len(rows)
        for raw, score in rows:
            member = raw.decode() if isinstance(raw, bytes) else str(raw)
            # Equal scores come in descending member order: skip up to and including the cursor.
            if after is not None and score == after[0] and member >= after[1]:
                continue
            results.append((member, float(score)))
        if len(rows) < want:
            break
    return results[:size], len(results) > size


def page_size_of(value: int) -> int:
    if value < 0:
        raise invalid("BAD_PAGE_SIZE", "page_size must not be negative")
    return min(value or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


async def ranked_page(
    redis: RedisLayer, listing: str, page_size: int, page_token: str, me: str
) -> tuple[list[str], int, str, int | None, int]:
    """(member ids of the page, its offset, the next page's token, `me`'s 0-based rank or None,
    how many the listing holds), highest score first, in one round trip."""
    size = page_size_of(page_size)
    offset = decode_offset(listing, page_token)
    commands: list[tuple[str | int, ...]] = [("ZREVRANGE", listing, offset, offset + size - 1), ("ZCARD", listing)]
    if me:
        commands.append(("ZREVRANK", listing, me))
    raw = await redis.many(commands)
    total = int(raw[1])
    token = encode_offset(listing, offset + size) if offset + size < total else ""
    rank = int(raw[2]) if me and raw[2] is not None else None
    return [text(member) for member in raw[0]], offset, token, rank, total
