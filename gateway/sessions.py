"""Revoked sessions (SignOut): known to every gateway without a Redis round trip per call.

A revocation is written to Redis (a hash of revoked session ids with their tokens' expiry, and a
hash of players signed out everywhere with the time before which their tokens no longer count) and
published on one channel. Every gateway loads both hashes when it (re)subscribes and applies each
published revocation to its in-memory tables, so checking a token stays a dictionary look-up.
Entries leave once no token they could refuse is still unexpired.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

log = logging.getLogger("tafel.gateway.sessions")

REVOKED_SESSIONS = "tafel:sessions:revoked"  # hash: session id -> when it can be forgotten (s)
SIGNED_OUT_PLAYERS = "tafel:sessions:signed-out"  # hash: player id -> revoke tokens issued before (ms)
CHANNEL = "tafel:sessions:revocations"


class Revocations:
    def __init__(self, redis: Redis, token_ttl_s: int) -> None:
        self.redis = redis
        self.token_ttl_s = token_ttl_s
        self.sessions: dict[str, float] = {}
        self.players: dict[str, int] = {}
        self._task: asyncio.Task[None] | None = None
        self.subscribed = asyncio.Event()

    def revoked(self, player_id: str, session_id: str, issued_ms: int) -> bool:
        if session_id and session_id in self.sessions:
            return True
        before = self.players.get(player_id)
        return before is not None and issued_ms < before

    def _apply(self, payload: str) -> None:
        kind, _, rest = payload.partition(":")
        key, _, value = rest.rpartition(":")
        try:
            if kind == "s":
                self.sessions[key] = float(value)
            elif kind == "p":
                self.players[key] = max(int(value), self.players.get(key, 0))
        except ValueError:
            log.warning("ignoring a malformed revocation message")

    async def revoke_session(self, session_id: str, expires_at: float) -> None:
        payload = f"s:{session_id}:{expires_at}"
        self._apply(payload)
        await self.redis.hset(REVOKED_SESSIONS, session_id, str(expires_at))
        await self.redis.publish(CHANNEL, payload)

    async def revoke_player(self, player_id: str, before_ms: int) -> None:
        payload = f"p:{player_id}:{before_ms}"
        self._apply(payload)
        await self.redis.hset(SIGNED_OUT_PLAYERS, player_id, str(before_ms))
        await self.redis.publish(CHANNEL, payload)

    async def load(self) -> None:
        """Read every revocation, dropping those no unexpired token can match any more."""
        now = time.time()
        sessions: Any = await self.redis.hgetall(REVOKED_SESSIONS)
        players: Any = await self.redis.hgetall(SIGNED_OUT_PLAYERS)
        stale_sessions = [sid for sid, expires in sessions.items() if float(expires) <= now]
        stale_players = [pid for pid, before in players.items() if int(before) / 1000 + self.token_ttl_s <= now]
        for sid, expires in sessions.items():
            if sid not in stale_sessions:
                self.sessions[sid.decode()] = float(expires)
        for pid, before in players.items():
            if pid not in stale_players:
                self.players[pid.decode()] = max(int(before), self.players.get(pid.decode(), 0))
        if stale_sessions:
            await self.redis.hdel(REVOKED_SESSIONS, *stale_sessions)
        if stale_players:
            await self.redis.hdel(SIGNED_OUT_PLAYERS, *stale_players)
        for sid in [sid for sid, expires in self.sessions.items() if expires <= now]:
            del self.sessions[sid]

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="session-revocations")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        backoff = 0.1
        while True:
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(CHANNEL)
                await self.load()  # after subscribing: nothing published in between is missed
                self.subscribed.set()
                backoff = 0.1
                async for message in pubsub.listen():
                    data = message.get("data")
                    if isinstance(data, bytes):
                        self._apply(data.decode(errors="replace"))
            except RedisError:
                log.warning("revocation channel lost; resubscribing")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
