"""Each player's notice settings (NotificationSettings): which kinds are kept in the inbox and
e-mailed, quiet hours, the time zone and the daily digest. One key per player
(kit/redis/keys.py notice_settings_key), written only once the player changes something; a player
who never did has the defaults, built here."""

from __future__ import annotations

import time
import zoneinfo
from functools import cache
from typing import Any

from tafel.play.v1 import notices_pb2

from gateway.auth import Identity
from kit.errors import invalid
from kit.redis.keys import notice_settings_key
from kit.redis.layer import RedisLayer

KINDS = tuple(k for k in notices_pb2.NotificationKind.values() if k != notices_pb2.NOTIFICATION_KIND_UNSPECIFIED)
EMAILED = frozenset(
    {
        notices_pb2.NOTIFICATION_KIND_TIME_RUNNING_OUT,
        notices_pb2.NOTIFICATION_KIND_CHALLENGE_RECEIVED,
        notices_pb2.NOTIFICATION_KIND_ROUND_STARTING_SOON,
        notices_pb2.NOTIFICATION_KIND_ANNOUNCEMENT,
    }
)
DEFAULT_DIGEST_HOUR = 8  # local time
GUEST_SETTINGS_S = 86_400  # a guest's settings live with its session, at most a day
MINUTES_A_DAY = 1440


def defaults() -> notices_pb2.NotificationSettings:
    """Every kind in the inbox, e-mail for the four kinds the proto names (once an address is
    confirmed), no quiet hours, UTC, the daily digest at 08:00."""
    settings = notices_pb2.NotificationSettings(email_digest=True, digest_hour=DEFAULT_DIGEST_HOUR)
    for kind in KINDS:
        settings.preferences.add(kind=kind, inbox=True, email=kind in EMAILED)
    return settings


@cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def time_zone(name: str) -> zoneinfo.ZoneInfo:
    """The zone a settings' time_zone names ("" = UTC); a stored name no longer known reads as UTC."""
    try:
        return zoneinfo.ZoneInfo(name or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return zoneinfo.ZoneInfo("UTC")


def bad(message: str, field: str) -> Any:
    return invalid("BAD_NOTIFICATION_SETTINGS", message, field=field)


def merged(
    current: notices_pb2.NotificationSettings, new: notices_pb2.NotificationSettings
) -> notices_pb2.NotificationSettings:
    """`new` checked and laid over `current`: its preferences replace those of the kinds it lists
    (the others keep theirs); quiet hours, time zone and the digest are `new`'s. Refuses
    BAD_NOTIFICATION_SETTINGS / BAD_TIME_ZONE before anything is stored."""
    given: dict[int, notices_pb2.NoticePreference] = {}
    for preference in new.preferences:
        if preference.kind not in KINDS:
            raise bad(f"unknown notice kind {preference.kind}", "settings.preferences.kind")
        if preference.kind in given:
            raise bad("each notice kind at most once", "settings.preferences.kind")
        given[preference.kind] = preference
    quiet = new.quiet_hours
    if quiet.start_minute >= MINUTES_A_DAY or quiet.end_minute >= MINUTES_A_DAY:
        raise bad("quiet hours are minutes after midnight, 0-1439", "settings.quiet_hours")
    if new.digest_hour > 23:
        raise bad("the digest hour is 0-23", "settings.digest_hour")
    zone = new.time_zone.strip()
    if zone and zone not in _zones():
        raise invalid(
            "BAD_TIME_ZONE", 'not an IANA time zone name (e.g. "Europe/Amsterdam")', field="settings.time_zone"
        )
    out = notices_pb2.NotificationSettings(time_zone=zone, email_digest=new.email_digest, digest_hour=new.digest_hour)
    out.quiet_hours.CopyFrom(quiet)
    have = {p.kind: p for p in current.preferences}
    for default in defaults().preferences:
        chosen = given.get(default.kind) or have.get(default.kind) or default
        out.preferences.add(kind=default.kind, inbox=chosen.inbox, email=chosen.email)
    return out


class NoticeSettingsStore:
    """The read every part uses (mail: `get` for the e-mail switches, quiet hours, zone and
    digest; the inbox: `wants_inbox`) and the service's write."""

    def __init__(self, redis: RedisLayer) -> None:
        self.redis = redis

    async def get(self, player_id: str) -> notices_pb2.NotificationSettings:
        """The player's settings, every kind listed (the defaults for what they never changed)."""
        raw = await self.redis.call("GET", notice_settings_key(player_id))
        if raw is None:
            return defaults()
        stored = notices_pb2.NotificationSettings.FromString(raw)
        full = defaults()
        full.quiet_hours.CopyFrom(stored.quiet_hours)
        full.time_zone, full.email_digest, full.digest_hour = stored.time_zone, stored.email_digest, stored.digest_hour
        have = {p.kind: p for p in stored.preferences}
        for preference in full.preferences:  # a kind added since the player saved: its defaults
            if preference.kind in have:
                preference.inbox, preference.email = have[preference.kind].inbox, have[preference.kind].email
        return full

    async def wants_inbox(self, player_id: str, kind: int) -> bool:
        settings = await self.get(player_id)
        return next((p.inbox for p in settings.preferences if p.kind == kind), True)

    async def update(self, me: Identity, new: notices_pb2.NotificationSettings) -> notices_pb2.NotificationSettings:
        settings = merged(await self.get(me.player_id), new)
        key = notice_settings_key(me.player_id)
        if me.guest:
            ttl = int(min(GUEST_SETTINGS_S, max(1.0, me.expires_at - time.time())))
            await self.redis.call("SET", key, settings.SerializeToString(), "EX", ttl)
        else:
            await self.redis.call("SET", key, settings.SerializeToString())
        return settings

    async def erase(self, player_id: str) -> None:
        await self.redis.call("DEL", notice_settings_key(player_id))
