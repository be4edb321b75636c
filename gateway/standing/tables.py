"""Roles and sanctions in force, as every gateway knows them: a mirror (kit/redis/mirror.py) of
STAFF_ROLES and SANCTIONS, kept by STANDING_CHANNEL. A change is published with the player's id;
each gateway reads that player's two entries again and tells its listeners (the guard ends the
player's open streams when a suspension or ban arrives), so a sanction reaches every gateway in one
pub/sub delivery and one read: well under a second."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError

from gateway.standing.model import SanctionRecord, decode_sanctions, now_ms
from gateway.standing.roles import PLAYER, ROLES_BY_NAME
from kit.redis.keys import SANCTIONS, STAFF_ROLES, STANDING_CHANNEL
from kit.redis.layer import RedisLayer
from kit.redis.mirror import Mirror
from kit.redis.replies import pairs
from kit.tasks import spawn

log = logging.getLogger("tafel.gateway.standing")


def parse_role(raw: bytes | str | None) -> tuple[int, str]:
    """A STAFF_ROLES value "<role>|<username>" -> (role, username)."""
    if not raw:
        return PLAYER, ""
    text = raw.decode() if isinstance(raw, bytes) else raw
    name, _, username = text.partition("|")
    return ROLES_BY_NAME.get(name, PLAYER), username


class StandingTables(Mirror):
    channel = STANDING_CHANNEL
    log = log

    def __init__(self, redis: RedisLayer) -> None:
        super().__init__()
        self.redis = redis
        self.roles: dict[str, int] = {}
        self.sanctions: dict[str, tuple[SanctionRecord, ...]] = {}
        self.listeners: list[Callable[[str], None]] = []

    def role(self, player_id: str) -> int:
        return self.roles.get(player_id, PLAYER)

    def barred(self, player_id: str, at_ms: int | None = None) -> SanctionRecord | None:
        """The suspension or ban in force for the player (the longest), or None."""
        found = self.sanctions.get(player_id)
        if not found:
            return None
        at = now_ms() if at_ms is None else at_ms
        barring = [s for s in found if s.bars and s.in_force(at)]
        if not barring:
            return None
        return max(barring, key=lambda s: (s.ends_ms == 0, s.ends_ms))

    def in_force(self, player_id: str, at_ms: int | None = None) -> list[SanctionRecord]:
        at = now_ms() if at_ms is None else at_ms
        return [s for s in self.sanctions.get(player_id, ()) if s.in_force(at)]

    def apply(self, player_id: str, role_raw: Any, sanctions_raw: Any) -> None:
        role, _ = parse_role(role_raw)
        if role == PLAYER:
            self.roles.pop(player_id, None)
        else:
            self.roles[player_id] = role
        sanctions = decode_sanctions(sanctions_raw)
        if sanctions:
            self.sanctions[player_id] = sanctions
        else:
            self.sanctions.pop(player_id, None)
        for listener in self.listeners:
            listener(player_id)

    async def load(self) -> None:
        replies: Any = await self.redis.many([("HGETALL", STAFF_ROLES), ("HGETALL", SANCTIONS)])
        roles, sanctions = pairs(replies[0]), pairs(replies[1])
        for pid in (
            set(self.roles) | set(self.sanctions) | {p.decode() for p in roles} | {p.decode() for p in sanctions}
        ):
            key = pid.encode()
            self.apply(pid, roles.get(key), sanctions.get(key))

    async def refresh(self, player_id: str) -> None:
        """Read one player's entries again (after a change made here or announced elsewhere)."""
        replies: Any = await self.redis.many([("HGET", STAFF_ROLES, player_id), ("HGET", SANCTIONS, player_id)])
        self.apply(player_id, replies[0], replies[1])

    def on_message(self, channel: bytes, payload: bytes) -> None:
        spawn(self._refresh_logged(payload.decode(errors="replace")), "standing refresh", log=log)

    async def _refresh_logged(self, player_id: str) -> None:
        try:
            await self.refresh(player_id)
        except RedisError:
            # The next load after the pub/sub reconnects reads everything again.
            log.warning("cannot read a player's standing", extra={"player_id": player_id})
