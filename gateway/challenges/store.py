"""Challenges in Redis (keys: the "Challenges" section of kit/redis/keys.py). A challenge is a hash
of its status and its protobuf; every change of status goes through challenges/settle (a compare
and set), so of two answers at once (two players taking one open challenge, an answer racing the
expiry) exactly one wins, and only the winner tells the players."""

from __future__ import annotations

import secrets
import time
from typing import Any

import grpc
from tafel.play.v1 import challenges_pb2

from kit.errors import Refused
from kit.redis.keys import (
    CHALLENGES_DUE,
    CHALLENGES_OPEN,
    challenge_key,
    challenge_pair_key,
    challenge_request_key,
    player_key,
)
from kit.redis.layer import RedisLayer
from kit.redis.replies import pairs, text
from kit.redis.scripts import script

KEEP_S = 86_400  # a settled challenge is kept this long (GetChallenge, retries)
PENDING, STARTING, ACCEPTED, DECLINED, CANCELLED, EXPIRED = (
    "pending",
    "starting",
    "accepted",
    "declined",
    "cancelled",
    "expired",
)
STATUS = {
    PENDING: challenges_pb2.CHALLENGE_STATUS_PENDING,
    STARTING: challenges_pb2.CHALLENGE_STATUS_PENDING,  # being accepted: still pending to others
    ACCEPTED: challenges_pb2.CHALLENGE_STATUS_ACCEPTED,
    DECLINED: challenges_pb2.CHALLENGE_STATUS_DECLINED,
    CANCELLED: challenges_pb2.CHALLENGE_STATUS_CANCELLED,
    EXPIRED: challenges_pb2.CHALLENGE_STATUS_EXPIRED,
}


def new_challenge_id() -> str:
    return secrets.token_hex(8)


def is_challenge_id(value: str) -> bool:
    return len(value) == 16 and all(c in "0123456789abcdef" for c in value)


def not_found() -> Refused:
    return Refused(grpc.StatusCode.NOT_FOUND, "CHALLENGE_NOT_FOUND", "there is no such challenge")


def parties(challenge: challenges_pb2.Challenge) -> list[str]:
    """Whom a challenge's events go to."""
    ids = [challenge.challenger.player_id]
    if challenge.HasField("challenged") and challenge.challenged.player_id:
        ids.append(challenge.challenged.player_id)
    return ids


class ChallengeStore:
    def __init__(self, redis: RedisLayer) -> None:
        self.redis = redis

    async def load(self, challenge_id: str) -> tuple[str, challenges_pb2.Challenge]:
        if not is_challenge_id(challenge_id):
            raise not_found()
        row = pairs(await self.redis.call("HGETALL", challenge_key(challenge_id)))
        if b"p" not in row:
            raise not_found()
        return text(row[b"s"]), challenges_pb2.Challenge.FromString(row[b"p"])

    async def earlier(self, player_id: str, request_id: str) -> str | None:
        found = await self.redis.call("GET", challenge_request_key(player_id, request_id))
        return text(found) if found is not None else None

    async def claim_pair(self, challenger: str, challenged: str, challenge_id: str, ttl_ms: int) -> bool:
        """One pending challenge between two players at a time."""
        key = challenge_pair_key(challenger, challenged)
        return bool(await self.redis.call("SET", key, challenge_id, "NX", "PX", ttl_ms))

    async def create(self, challenge: challenges_pb2.Challenge, request_id: str) -> bool:
        """Store a new pending challenge; False when the request made one already."""
        cid = challenge.challenge_id
        remember = challenge_request_key(challenge.challenger.player_id, request_id)
        if not await self.redis.call("SET", remember, cid, "NX", "EX", KEEP_S):
            return False
        expires_ms = challenge.expires_at.ToMilliseconds()
        ttl_s = max(1, (expires_ms - int(time.time() * 1000)) // 1000) + KEEP_S
        commands: list[Any] = [
            ("HSET", challenge_key(cid), "s", PENDING, "p", challenge.SerializeToString()),
            ("EXPIRE", challenge_key(cid), ttl_s),
            ("ZADD", CHALLENGES_DUE, expires_ms, cid),
        ]
        if challenge.open:
            commands.append(("ZADD", CHALLENGES_OPEN, challenge.created_at.ToMilliseconds(), cid))
        for pid in parties(challenge):
            commands += [
                ("ZADD", player_key(pid, "challenges"), expires_ms, cid),
                # Every challenge a player was in while it is kept: an erased account's go with it.
                ("SADD", player_key(pid, "challenge-log"), cid),
                ("EXPIRE", player_key(pid, "challenge-log"), ttl_s),
            ]
        await self.redis.many(commands)
        return True

    async def move(self, expected: str, status: str, challenge: challenges_pb2.Challenge) -> int:
        """challenges/settle: 1 moved, 0 not in `expected`, -1 gone."""
        return int(
            await self.redis.run(
                script("challenges/settle"),
                [challenge_key(challenge.challenge_id)],
                [expected, status, challenge.SerializeToString(), KEEP_S],
            )
        )

    async def settled(self, challenge: challenges_pb2.Challenge, pair_of: tuple[str, str] | None) -> None:
        """Out of the pending lists once it is no longer pending."""
        cid = challenge.challenge_id
        commands: list[Any] = [("ZREM", CHALLENGES_DUE, cid), ("ZREM", CHALLENGES_OPEN, cid)]
        commands += [("ZREM", player_key(pid, "challenges"), cid) for pid in parties(challenge)]
        if pair_of is not None:
            commands.append(("DEL", challenge_pair_key(*pair_of)))
        await self.redis.many(commands)

    async def add_taker(self, challenge: challenges_pb2.Challenge) -> None:
        """An open challenge's taker: into its challenge log (the challenge names it now)."""
        key = player_key(challenge.challenged.player_id, "challenge-log")
        await self.redis.many([("SADD", key, challenge.challenge_id), ("EXPIRE", key, KEEP_S * 2)])

    async def pending_of(self, player_id: str) -> list[challenges_pb2.Challenge]:
        ids: Any = await self.redis.call("ZRANGE", player_key(player_id, "challenges"), 0, 199)
        return await self._pending([text(i) for i in ids])

    async def open(self, limit: int = 100) -> list[challenges_pb2.Challenge]:
        ids: Any = await self.redis.call("ZREVRANGE", CHALLENGES_OPEN, 0, limit - 1)
        return await self._pending([text(i) for i in ids])

    async def _pending(self, ids: list[str]) -> list[challenges_pb2.Challenge]:
        rows = await self.redis.many([("HGETALL", challenge_key(cid)) for cid in ids])
        out = []
        for raw in rows:
            row = pairs(raw)
            if row.get(b"s") == PENDING.encode():
                out.append(challenges_pb2.Challenge.FromString(row[b"p"]))
        return out

    async def due(self, now_ms: int, limit: int = 100) -> list[str]:
        ids: Any = await self.redis.call("ZRANGEBYSCORE", CHALLENGES_DUE, "-inf", now_ms, "LIMIT", 0, limit)
        return [text(i) for i in ids]
