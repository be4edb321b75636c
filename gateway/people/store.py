"""Follows and settings in Redis (keys: the "People" section of kit/redis/keys.py).

A follow is two writes in two players' slots: the follower's following hash (people/follow, which
also holds the cap), then the followed player's followers set. An unfollow removes them the other
way round. So at any moment a player in someone's followers set is one who follows them: presence
events and follower counts never reach or count someone who does not follow, and a crash between
the two writes leaves a follow that a retry of the same call (idempotent) completes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import grpc
from tafel.play.v1 import social_pb2

from gateway.auth import GUEST_PREFIX, Identity
from kit.errors import Refused, invalid
from kit.redis.keys import PRESENCE_LEASES, account_key, avoid_channel, followers_key, following_key, settings_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import text
from kit.redis.scripts import script

MAX_FOLLOWS = 1000
GUEST_SETTINGS_S = 86_400  # a guest's settings live with its session, at most a day
POLICIES = frozenset(social_pb2.ChallengePolicy.values()) - {social_pb2.CHALLENGE_POLICY_UNSPECIFIED}


def needs_account() -> Refused:
    return Refused(
        grpc.StatusCode.FAILED_PRECONDITION,
        "FOLLOW_NEEDS_ACCOUNT",
        "guests cannot follow or be followed; register first",
    )


def is_guest_name(username: str) -> bool:
    return username.strip().lower().startswith(GUEST_PREFIX)


@dataclass(frozen=True)
class Followed:
    player_id: str
    username: str
    at_ms: int


def _entry(at_ms: int, username: str) -> str:
    return f"{at_ms}|{username}"


def _parse(player_id: str, raw: bytes | str) -> Followed:
    at, _, name = text(raw).partition("|")
    return Followed(player_id, name, int(at or 0))


class PeopleStore:
    def __init__(self, redis: RedisLayer) -> None:
        self.redis = redis

    # -- following --------------------------------------------------------------------------------

    async def follow(self, me: str, target: str, username: str) -> Followed:
        """Idempotent: following again keeps the first follow (and completes a half-made one)."""
        now = int(time.time() * 1000)
        added = int(
            await self.redis.run(
                script("people/follow"), [following_key(me)], [target, _entry(now, username), MAX_FOLLOWS]
            )
        )
        if added < 0:
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "TOO_MANY_FOLLOWS",
                f"you follow {MAX_FOLLOWS} players, the most allowed; unfollow one first",
            )
        raw = await self.redis.call("HGET", following_key(me), target)
        followed = _parse(target, raw) if raw is not None else Followed(target, username, now)
        await self.redis.call("ZADD", followers_key(target), "NX", followed.at_ms, me)
        return followed

    async def unfollow(self, me: str, target: str) -> None:
        await self.redis.call("ZREM", followers_key(target), me)
        await self.redis.call("HDEL", following_key(me), target)

    async def following(self, me: str) -> list[Followed]:
        flat: Any = await self.redis.call("HGETALL", following_key(me))
        return [_parse(text(flat[i]), flat[i + 1]) for i in range(0, len(flat), 2)]

    async def follows(self, follower: str, followed: str) -> bool:
        return bool(await self.redis.call("HEXISTS", following_key(follower), followed))

    async def followers(self, player_id: str) -> list[str]:
        return [text(p) for p in await self.redis.call("ZRANGE", followers_key(player_id), 0, -1)]

    async def follower_count(self, player_id: str) -> int:
        return int(await self.redis.call("ZCARD", followers_key(player_id)))

    async def renamed(self, player_id: str, username: str) -> None:
        """The name beside the player's id in their followers' following lists."""
        for follower in await self.followers(player_id):
            raw = await self.redis.call("HGET", following_key(follower), player_id)
            if raw is not None:
                at_ms = _parse(player_id, raw).at_ms
                await self.redis.call("HSET", following_key(follower), player_id, _entry(at_ms, username))

    async def erase(self, player_id: str) -> None:
        """Every follow of the player's, both ways, their settings and their presence leases (the
        presence hash is one of the player's parts that account_life deletes)."""
        followed = [f.player_id for f in await self.following(player_id)]
        followers = await self.followers(player_id)
        commands: list[Any] = [("ZREM", followers_key(other), player_id) for other in followed]
        commands += [("HDEL", following_key(other), player_id) for other in followers]
        commands += [("DEL", following_key(player_id)), ("DEL", followers_key(player_id))]
        commands.append(("DEL", settings_key(player_id)))
        cursor = 0
        while True:  # the leases name the player: gateways holding them (a few at most)
            cursor, found = await self.redis.client.zscan(PRESENCE_LEASES, cursor, match=f"*|{player_id}", count=1000)
            commands += [("ZREM", PRESENCE_LEASES, member) for member, _ in found]
            if not int(cursor):
                break
        await self.redis.many(commands)

    # -- settings ---------------------------------------------------------------------------------

    async def settings(self, player_id: str) -> tuple[bool, int]:
        """(chat on, the challenge policy)."""
        chat, policy = await self.redis.call("HMGET", settings_key(player_id), "chat", "challenges")
        number = int(policy) if policy is not None else social_pb2.CHALLENGE_POLICY_EVERYONE
        return chat != b"0", number if number in POLICIES else social_pb2.CHALLENGE_POLICY_EVERYONE

    async def update_settings(self, me: Identity, chat: bool | None, policy: int) -> None:
        if policy and policy not in POLICIES:
            raise invalid(
                "BAD_CHALLENGE_POLICY", "choose who may challenge you from the list", field="challenge_policy"
            )
        key = settings_key(me.player_id)
        commands: list[Any] = []
        if chat is not None:
            commands.append(("HDEL", key, "chat") if chat else ("HSET", key, "chat", "0"))
        if policy:
            everyone = policy == social_pb2.CHALLENGE_POLICY_EVERYONE
            commands.append(("HDEL", key, "challenges") if everyone else ("HSET", key, "challenges", str(policy)))
        if me.guest and commands:
            ttl = int(min(GUEST_SETTINGS_S, max(1.0, me.expires_at - time.time())))
            commands.append(("EXPIRE", key, ttl))
        if chat is not None:  # the player's open chat watches (any gateway) go quiet or on at once
            commands.append((await self.redis.publish_verb(), avoid_channel(me.player_id), b"1"))
        await self.redis.many(commands)

    async def may_challenge(self, challenger: str, challenged: str) -> bool:
        """Whether the challenged player's policy takes a challenge by name from the challenger (a
        block is checked by the caller)."""
        policy = (await self.settings(challenged))[1]
        if policy == social_pb2.CHALLENGE_POLICY_NOBODY:
            return False
        if policy == social_pb2.CHALLENGE_POLICY_FOLLOWED:
            return await self.follows(challenged, challenger)
        return True

    async def display_name(self, username: str) -> str:
        raw = await self.redis.call("HGET", account_key(username), "dn")
        return text(raw) if raw is not None else ""
