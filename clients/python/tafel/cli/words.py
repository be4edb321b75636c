"""How the terminal names the platform's values to a person: times in local time, durations, roles,
sanction kinds, report reasons and audit actions in words (never an enum's name such as
SANCTION_KIND_BAN). Shared by the player's commands (safety.py) and the staff's (moderation.py).
The tables hold English marked for the catalogue (N_); the functions say them in the language in use."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from tafel.admin.v1 import admin_pb2
from tafel.i18n import N_, _, date_time, ngettext
from tafel.play.v1 import challenges_pb2, play_pb2, safety_pb2

ROLES: dict[int, str] = {
    play_pb2.ROLE_PLAYER: N_("player"),
    play_pb2.ROLE_ORGANISER: N_("organiser"),
    play_pb2.ROLE_MODERATOR: N_("moderator"),
    play_pb2.ROLE_ADMIN: N_("admin"),
}
SANCTIONS: dict[int, str] = {
    safety_pb2.SANCTION_KIND_CHAT_MUTE: N_("chat mute"),
    safety_pb2.SANCTION_KIND_SUSPENSION: N_("suspension"),
    safety_pb2.SANCTION_KIND_BAN: N_("ban"),
}
REASONS: dict[int, str] = {
    safety_pb2.REPORT_REASON_ABUSE: N_("abuse"),
    safety_pb2.REPORT_REASON_SPAM: N_("spam"),
    safety_pb2.REPORT_REASON_CHEATING: N_("cheating"),
    safety_pb2.REPORT_REASON_UNSPORTING: N_("unsporting"),
    safety_pb2.REPORT_REASON_OFFENSIVE_NAME: N_("offensive name"),
    safety_pb2.REPORT_REASON_OTHER: N_("other"),
}
# Why a challenge was declined, as the challenger reads it ("bob declined: the clock is too fast").
DECLINE_REASONS: dict[int, str] = {
    challenges_pb2.DECLINE_REASON_GENERIC: N_("no reason given"),
    challenges_pb2.DECLINE_REASON_LATER: N_("not now, maybe later"),
    challenges_pb2.DECLINE_REASON_TOO_FAST: N_("the clock is too fast for them"),
    challenges_pb2.DECLINE_REASON_TOO_SLOW: N_("the clock is too slow for them"),
    challenges_pb2.DECLINE_REASON_CASUAL_ONLY: N_("casual games only"),
    challenges_pb2.DECLINE_REASON_RATED_ONLY: N_("rated games only"),
    challenges_pb2.DECLINE_REASON_NOT_THIS_GAME: N_("not this game"),
    challenges_pb2.DECLINE_REASON_NO_BOTS: N_("no bots"),
}
OFFER_KINDS: dict[int, str] = {
    play_pb2.OFFER_KIND_DRAW: N_("draw"),
    play_pb2.OFFER_KIND_TAKEBACK: N_("takeback"),
    play_pb2.OFFER_KIND_REMATCH: N_("rematch"),
}
REPORT_STATUS: dict[int, str] = {admin_pb2.REPORT_STATUS_OPEN: N_("open"), admin_pb2.REPORT_STATUS_RESOLVED: "resolved"}
# The audit log's actions (admin.proto's AuditEntry.action) as a person says them.
ACTIONS = {
    "role": N_("role change"),
    "warn": N_("warning"),
    "sanction": N_("sanction"),
    "lift": N_("sanction lifted"),
    "rename": N_("rename"),
    "resolve_report": N_("report resolved"),
    "delete_account": N_("account deleted"),
    "correct_result": N_("result corrected"),
}
# An enum's name inside free text the server wrote (an audit entry's details), with or without its
# prefix ("SANCTION_KIND_SUSPENSION", "SUSPENSION"): said in words.
_ENUM_NAME = re.compile(r"\b[A-Z][A-Z_]*[A-Z]\b")
_KNOWN_NAMES: dict[str, str] = {}
_ENUMS: tuple[tuple[Any, str, dict[int, str]], ...] = (
    (safety_pb2.SanctionKind, "SANCTION_KIND_", SANCTIONS),
    (play_pb2.Role, "ROLE_", ROLES),
    (safety_pb2.ReportReason, "REPORT_REASON_", REASONS),
    (admin_pb2.ReportStatus, "REPORT_STATUS_", REPORT_STATUS),
)
for _enum, _prefix, _words in _ENUMS:
    for _value, _word in _words.items():
        _KNOWN_NAMES[_enum.Name(_value)] = _word
        _KNOWN_NAMES[_enum.Name(_value).removeprefix(_prefix)] = _word  # (translated where used)
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")
_DURATION = re.compile(r"(\d+)\s*([smhdw])", re.IGNORECASE)
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def role_word(role: int) -> str:
    return _(ROLES.get(role, ROLES[play_pb2.ROLE_PLAYER]))  # an unset role is a player's (guests have none other)


def sanction_word(kind: int) -> str:
    return _(SANCTIONS.get(kind, N_("sanction")))


def reason_word(reason: int) -> str:
    return _(REASONS.get(reason, N_("unspecified")))


def decline_word(reason: int) -> str:
    return _(DECLINE_REASONS.get(reason, DECLINE_REASONS[challenges_pb2.DECLINE_REASON_GENERIC]))


def offer_word(kind: int) -> str:
    """ "draw", "takeback", "rematch" in the language in use."""
    return _(OFFER_KINDS.get(kind, N_("offer")))


def action_word(action: str) -> str:
    return _(ACTIONS[action]) if action in ACTIONS else action.replace("_", " ")


def when(moment: datetime) -> datetime:
    """An aware datetime in this machine's time zone."""
    return moment.astimezone()


def local_time(stamp: Timestamp | datetime | None, *, zone: bool = False) -> str:
    """ "2025-05-01 14:02" in this machine's time zone ("" for an unset time); `zone` adds its
    abbreviation ("2025-05-01 14:02 CEST"), for a line that stands alone."""
    if stamp is None:
        return ""
    if isinstance(stamp, Timestamp):
        if not stamp.seconds and not stamp.nanos:
            return ""
        stamp = stamp.ToDatetime(tzinfo=UTC)
    # Babel, in the locale of the language in use ("2025-05-01 14:02", "1 mei 2025 14:02", ...).
    return date_time(stamp, zone=zone)


def _days(n: int) -> str:
    return ngettext("{n} day", "{n} days", n)


def _hours(n: int) -> str:
    return ngettext("{n} hour", "{n} hours", n)


def _minutes(n: int) -> str:
    return ngettext("{n} minute", "{n} minutes", n)


_UNITS: tuple[tuple[int, Callable[[int], str]], ...] = ((86400, _days), (3600, _hours), (60, _minutes))


def span(seconds: float) -> str:
    """A length of time the way a person says it: "45 minutes", "2 hours", "7 days", "1 day 6 hours"."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return _("under a minute")
    parts = []
    for size, words in _UNITS:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(words(count).format(n=count))
        if len(parts) == 2:
            break
    return " ".join(parts)


def time_left(stamp: Timestamp, now: datetime | None = None) -> str:
    """ "in 6 days 23 hours" until `stamp` ("ended" once past)."""
    end = stamp.ToDatetime(tzinfo=UTC)
    left = (end - (now or datetime.now(UTC))).total_seconds()
    return _("in {span}").format(span=span(left)) if left > 0 else _("ended")


def until_lifted() -> str:
    return _("until lifted")


def until_text(sanction: safety_pb2.Sanction, *, word: bool = True) -> str:
    """ "until 2025-05-08 14:02 (in 7 days)", or "until lifted" for a ban; without `word`, the
    end alone ("2025-05-08 14:02 (in 7 days)", "lifted")."""
    if not sanction.HasField("ends_at"):
        return until_lifted() if word else _("when lifted")
    end = f"{local_time(sanction.ends_at)} ({time_left(sanction.ends_at)})"
    return _("until {end}").format(end=end) if word else end


def parse_duration(text: str) -> timedelta:
    """ "30m", "2h", "7d", "1w", "1d12h" (s, m, h, d, w) -> a timedelta; ValueError says how."""
    compact = text.strip().replace(" ", "")
    pieces = _DURATION.findall(compact)
    if not pieces or "".join(n + u for n, u in pieces).lower() != compact.lower():
        raise ValueError(_("{text!r} is not a duration: write it like 30m, 2h, 7d or 1d12h").format(text=text))
    total = sum(int(number) * _UNIT_S[unit.lower()] for number, unit in pieces)
    if not total:
        raise ValueError(_("{text!r} is no time at all").format(text=text))
    return timedelta(seconds=total)


def in_words(text: str) -> str:
    """Free text the server wrote (an audit entry's details) with its enum names said in words
    ("kind=SANCTION_KIND_SUSPENSION" -> "kind=suspension") and its RFC 3339 times in local time."""
    return _ENUM_NAME.sub(lambda m: _(_KNOWN_NAMES.get(m.group(0), m.group(0))), local_times(text))


def local_times(text: str, *, zone: bool = False) -> str:
    """`text` with every RFC 3339 time in it ("2025-05-08T12:00:00Z", as the server's refusals
    write an end) in this machine's local time ("2025-05-08 14:00", with `zone` "... CEST")."""
    return _RFC3339.sub(lambda m: _local_rfc3339(m.group(0), zone), text)


def _local_rfc3339(text: str, zone: bool) -> str:
    try:
        return local_time(datetime.fromisoformat(text), zone=zone)
    except ValueError:
        return text
