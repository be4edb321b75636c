"""Newest-first paging of a sorted set (gateway/paging.py) against a real Redis."""

from __future__ import annotations

import uuid

from redis.asyncio import Redis

from gateway.paging import PageCursor, zpage_newest
from kit.redis.layer import RedisLayer


async def test_newest_first_paging_survives_equal_scores(redis: Redis) -> None:
    key = f"test:page:{uuid.uuid4().hex}"
    await redis.zadd(key, {f"m{i:02d}": 100 if i < 7 else i for i in range(12)})
    seen: list[str] = []
    after = None
    while True:
        rows, more = await zpage_newest(RedisLayer.around(redis), key, 3, after)
        seen += [member for member, _ in rows]
        if not more:
            break
        after = (rows[-1][1], rows[-1][0])
        assert PageCursor.decode(PageCursor("x", *after).encode(), ("x",)) == PageCursor("x", *after)
    assert sorted(seen) == sorted(f"m{i:02d}" for i in range(12)) and len(seen) == 12
    await redis.delete(key)
