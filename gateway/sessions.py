"""Revoked sessions (SignOut): known to every gateway without a Redis round trip per call.

A revocation is written to Redis (a hash of revoked session ids with their tokens' expiry, and a
hash of players signed out everywhere with the time before which their tokens no longer count) and
published on one channel. Every gateway loads both hashes when it (re)subscribes and applies each
published revocation to its in-memory tables, so checking a token stays a dictionary look-up.
Entries leave once no token they could refuse is still unexpired. The channel comes through the
process's pub/sub (kit/redis/pubsub.py): each time Redis confirms it (after a reconnect too) the
hashes are read again, so what was published while the connection was down is not missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from redis.exceptions import RedisError

from kit.redis.keys import REVOKED_SESSIONS, SESSIONS_CHANNEL, SIGNED_OUT_PLAYERS
from kit.redis.layer import RedisLayer
from kit.redis.pipe import Command
from kit.redis.pubsub import PubSub, Subscription
from kit.redis.replies import pairs
from kit.retry import Attempts, Backoff
from kit.tasks import spawn

log = logging.getLogger("tafel.gateway.sessions")
LOAD_BACKOFF = Backoff(first_s=0.1, cap_s=5.0)


class Revocations:
    def __init__(self, redis: RedisLayer, token_ttl_s: int) -> None:
        self.redis = redis
        self.token_ttl_s = token_ttl_s
        self.sessions: dict[str, float] = {}
        self.players: dict[str, int] = {}
        self._subscription: Subscription | None = None
        self._loading: asyncio.Task[None] | None = None
        self.subscribed = asyncio.Event()  # set once the revocations have been read after subscribing

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
        await self.redis.many(
            [("HSET", REVOKED_SESSIONS, session_id, str(expires_at)), ("PUBLISH", SESSIONS_CHANNEL, payload)]
        )

    async def revoke_player(self, player_id: str, before_ms: int) -> None:
        payload = f"p:{player_id}:{before_ms}"
        self._apply(payload)
        await self.redis.many(
            [("HSET", SIGNED_OUT_PLAYERS, player_id, str(before_ms)), ("PUBLISH", SESSIONS_CHANNEL, payload)]
        )

    async def load(self) -> None:
        """Read every revocation, dropping those no unexpired token can match any more."""
        now = time.time()
        replies: Any = await self.redis.many([("HGETALL", REVOKED_SESSIONS), ("HGETALL", SIGNED_OUT_PLAYERS)])
        sessions, players = pairs(replies[0]), pairs(replies[1])
        stale_sessions = [sid for sid, expires in sessions.items() if float(expires) <= now]
        stale_players = [pid for pid, before in players.items() if int(before) / 1000 + self.token_ttl_s <= now]
        for sid, expires in sessions.items():
            if sid not in stale_sessions:
                self.sessions[sid.decode()] = float(expires)
        for pid, before in players.items():
            if pid not in stale_players:
                self.players[pid.decode()] = max(int(before), self.players.get(pid.decode(), 0))
        forget: list[Command] = []
        if stale_sessions:
            forget.append(("HDEL", REVOKED_SESSIONS, *stale_sessions))
        if stale_players:
            forget.append(("HDEL", SIGNED_OUT_PLAYERS, *stale_players))
        await self.redis.many(forget)
        for gone in [session for session, expires in self.sessions.items() if expires <= now]:
            del self.sessions[gone]

    def start(self, pubsub: PubSub) -> None:
        if self._subscription is None:
            pubsub.start()
            self._subscription = pubsub.subscribe(SESSIONS_CHANNEL, self._on_message, on_live=self._on_live)

    async def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.cancel()
            self._subscription = None
        loading, self._loading = self._loading, None
        if loading is not None:
            loading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await loading

    def _on_message(self, channel: bytes, payload: bytes) -> None:
        self._apply(payload.decode(errors="replace"))

    def _on_live(self, again: bool) -> None:
        # Subscribed (again): read the hashes now, so nothing published before is missed.
        if self._loading is not None:
            self._loading.cancel()
        # It retries Redis errors itself; anything else is a bug, logged by its supervisor (the
        # next confirmation, after a reconnect, loads again).
        self._loading = spawn(self._load_until_read(), "session revocations", log=log)

    async def _load_until_read(self) -> None:
        attempts = Attempts(LOAD_BACKOFF)
        while True:
            try:
                await self.load()
            except RedisError:
                log.warning("cannot read the revocations; retrying")
                await attempts.failed()
                continue
            self.subscribed.set()
            return
