"""Matchmaking: queues in Redis, paired by one atomic Lua script (see core.py)."""

from gateway.matchmaking.core import *  # noqa: F403  (the split into one idea per file follows)
from gateway.matchmaking.core import DEFAULT_REDIS_SLOTS, LimitedScript, bucket_keys, new_ticket_id
from gateway.matchmaking.wakeups import Wakeups

__all__ = ["DEFAULT_REDIS_SLOTS", "LimitedScript", "Wakeups", "bucket_keys", "new_ticket_id"]
