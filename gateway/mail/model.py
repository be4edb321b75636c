"""E-mail's pure parts: what an address is, the tokens in the links, when a mail may go (quiet
hours, the digest hour, in the player's time zone) and the ids that make a mail go once.

Tokens name their account (`<player id>.<secret>`), so a link is checked in the account's own
slot with no global index to erase. A confirmation token is random and only its SHA-256 is kept
(7 days, one live per account). An unsubscribe token is signed, not stored: an HMAC (the gateway's
token secret) over the player, the kind and a nonce drawn when the address was confirmed, so every
mail can carry it while nothing that would let someone unsubscribe is kept in Redis, and a new
address (a new nonce) or erasure (no nonce) voids the old links."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import grpc

from kit.errors import Refused, invalid

MAX_ADDRESS = 254
LANGUAGES = ("en", "nl", "de")
CONFIRM_TTL_MS = 7 * 86_400_000
CONFIRMS_PER_HOUR = 3
RATE_WINDOW_MS = 3_600_000
DIGEST = "digest"
IMMEDIATE = "immediate"
KIND_LETTERS = {DIGEST: "d", IMMEDIATE: "i"}
_KINDS_BY_LETTER = {letter: kind for kind, letter in KIND_LETTERS.items()}
# One @, a local part of printable characters without spaces, a domain of labels with a dot.
_ADDRESS = re.compile(r"^[^\s@<>()\[\],;:\"\\]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$")
_PLAYER_ID = re.compile(r"^[0-9a-f]{8,64}$")


def clean_address(raw: str) -> str:
    """The address as given, trimmed; BAD_EMAIL when it is not one ("" stays "": none)."""
    address = raw.strip()
    if address and (len(address) > MAX_ADDRESS or not _ADDRESS.match(address)):
        raise invalid(
            "BAD_EMAIL", "not an e-mail address (one @, a domain with a dot, at most 254 characters)", field="address"
        )
    return address


def language_of(raw: str) -> str:
    lang = raw.strip().lower() or "en"
    if lang not in LANGUAGES:
        raise invalid("BAD_EMAIL_LANGUAGE", "the mails' language is en, nl or de", field="language")
    return lang


def bad_token() -> Refused:
    return Refused(
        grpc.StatusCode.NOT_FOUND,
        "BAD_EMAIL_TOKEN",
        "the link is unknown, already replaced, or more than 7 days old; ask for a new one",
    )


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_confirm_token(player_id: str) -> tuple[str, str]:
    """(the token for the link, the digest kept)."""
    secret = secrets.token_urlsafe(24)
    return f"{player_id}.{secret}", digest_of(secret)


def split_confirm_token(token: str) -> tuple[str, str]:
    """(player id, the secret's digest), or BAD_EMAIL_TOKEN."""
    player_id, _, secret = token.strip().partition(".")
    if not _PLAYER_ID.match(player_id) or not 20 <= len(secret) <= 64:
        raise bad_token()
    return player_id, digest_of(secret)


def _signature(key: bytes, player_id: str, letter: str, nonce: str) -> str:
    return hmac.new(key, f"unsubscribe|{player_id}|{letter}|{nonce}".encode(), hashlib.sha256).hexdigest()[:32]


def unsubscribe_token(key: bytes, player_id: str, kind: str, nonce: str) -> str:
    letter = KIND_LETTERS[kind]
    return f"{player_id}.{letter}.{_signature(key, player_id, letter, nonce)}"


@dataclass(frozen=True)
class UnsubscribeClaim:
    player_id: str
    kind: str
    signature: str

    def valid_for(self, key: bytes, nonce: str) -> bool:
        expected = _signature(key, self.player_id, KIND_LETTERS[self.kind], nonce)
        return bool(nonce) and hmac.compare_digest(expected, self.signature)


def parse_unsubscribe(token: str) -> UnsubscribeClaim:
    parts = token.strip().split(".")
    if len(parts) != 3 or not _PLAYER_ID.match(parts[0]) or parts[1] not in _KINDS_BY_LETTER or len(parts[2]) != 32:
        raise bad_token()
    return UnsubscribeClaim(parts[0], _KINDS_BY_LETTER[parts[1]], parts[2])


def mail_id(*parts: str) -> str:
    """A mail's id: a digest of what makes it one mail (kind, player, notice or date), so the same
    happening always makes the same id and no key names the player."""
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:40]


# -- time ----------------------------------------------------------------------------------------


def zone(name: str) -> dt.tzinfo:
    try:
        return ZoneInfo(name) if name else dt.UTC
    except (ZoneInfoNotFoundError, ValueError):
        return dt.UTC


def quiet_until_ms(now_ms: int, tz: str, enabled: bool, start_minute: int, end_minute: int) -> int | None:
    """When the quiet window around `now_ms` ends (ms), or None when mail may go now. The window
    may wrap past midnight; start == end is no window."""
    if not enabled or start_minute == end_minute:
        return None
    local = dt.datetime.fromtimestamp(now_ms / 1000, zone(tz))
    minute = local.hour * 60 + local.minute
    wraps = start_minute > end_minute
    inside = (start_minute <= minute or minute < end_minute) if wraps else start_minute <= minute < end_minute
    if not inside:
        return None
    day = local.date() if minute < end_minute else local.date() + dt.timedelta(days=1)
    end = dt.datetime.combine(day, dt.time(end_minute // 60, end_minute % 60), zone(tz))
    return int(end.timestamp() * 1000)


def local_date(now_ms: int, tz: str) -> str:
    return dt.datetime.fromtimestamp(now_ms / 1000, zone(tz)).date().isoformat()


def in_digest_hour(now_ms: int, tz: str, hour: int) -> bool:
    return dt.datetime.fromtimestamp(now_ms / 1000, zone(tz)).hour == hour


def next_digest_look_ms(now_ms: int, tz: str, hour: int, every_ms: int = 3_600_000) -> int:
    """The next look at a player's digest: the next start of their digest hour, or sooner (settings
    change without telling the mail, so every player is looked at at least every `every_ms`)."""
    tzinfo = zone(tz)
    local = dt.datetime.fromtimestamp(now_ms / 1000, tzinfo)
    start = dt.datetime.combine(local.date(), dt.time(hour % 24), tzinfo)
    if start.timestamp() * 1000 <= now_ms:
        start = dt.datetime.combine(local.date() + dt.timedelta(days=1), dt.time(hour % 24), tzinfo)
    return min(int(start.timestamp() * 1000), now_ms + every_ms)
