"""Pages of a listing kept in one sorted set (a leaderboard, a personal-best board, the
tournaments): an offset, handed out as an opaque token that names the listing it belongs to, so a
token of one listing is refused by another."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from kit.errors import invalid
from kit.redis.layer import RedisLayer
from kit.redis.replies import text

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20


def encode_offset(listing: str, offset: int) -> str:
    raw = json.dumps([listing, offset], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode_offset(listing: str, token: str) -> int:
    if not token:
        return 0
    try:
        if len(token) > 256:
            raise ValueError
        data: Any = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        name, offset = data
        if name != listing or not isinstance(offset, int) or offset < 0:
            raise ValueError
        return offset
    except (binascii.Error, ValueError, TypeError):
        raise invalid("BAD_PAGE_TOKEN", "page_token is not a token this listing issued") from None


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
