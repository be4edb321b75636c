"""Addresses in Redis (kit/redis/keys.py, "E-mail"): one hash per account in its {p:<id>} slot,
written by lua/mail/set, confirm and unsubscribe (the checks and the write in one step), read here
for the service, the outbox's mails and the data export; erased with the account."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from gateway.mail.model import CONFIRM_TTL_MS, CONFIRMS_PER_HOUR, RATE_WINDOW_MS
from kit.redis.keys import MAIL_DIGESTS, email_key, email_rate_key, mail_player_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import text
from kit.redis.scripts import script


@dataclass(frozen=True)
class Address:
    address: str = ""  # confirmed ("" none)
    pending: str = ""
    language: str = "en"
    username: str = ""
    nonce: str = ""  # the confirmed address's unsubscribe links are signed with it


@dataclass(frozen=True)
class SetResult:
    mail: bool = False  # a confirmation mail is to go
    wait_ms: int = 0  # > 0: too many confirmation mails lately


class MailStore:
    def __init__(self, layer: RedisLayer) -> None:
        self.layer = layer

    async def get(self, player_id: str) -> Address:
        row: Any = await self.layer.call("HMGET", email_key(player_id), "a", "p", "l", "u", "n")
        a, p, lang, user, nonce = (text(v) if v is not None else "" for v in row)
        return Address(a, p, lang or "en", user, nonce)

    async def set(
        self, player_id: str, address: str, language: str, username: str, token_digest: str, now_ms: int
    ) -> SetResult:
        reply: Any = await self.layer.run(
            script("mail/set"),
            [email_key(player_id), email_rate_key(player_id)],
            [
                address,
                language,
                username,
                token_digest,
                now_ms + CONFIRM_TTL_MS,
                now_ms,
                RATE_WINDOW_MS,
                CONFIRMS_PER_HOUR,
            ],
        )
        state = int(reply[0])
        if state < 0:
            return SetResult(wait_ms=int(reply[1]))
        if not address:
            await self.layer.call("ZREM", MAIL_DIGESTS, player_id)
        return SetResult(mail=state == 1)

    async def confirm(self, player_id: str, token_digest: str, now_ms: int) -> tuple[int, str, str]:
        """(1 confirmed now | 2 before by this token | 0 unknown, the address, the username)."""
        reply: Any = await self.layer.run(
            script("mail/confirm"), [email_key(player_id)], [token_digest, now_ms, secrets.token_hex(8)]
        )
        return int(reply[0]), text(reply[1]), text(reply[2])

    async def schedule_digest(self, player_id: str, at_ms: int) -> None:
        await self.layer.call("ZADD", MAIL_DIGESTS, at_ms, player_id)

    async def erase(self, player_id: str, drop_mails: Any) -> None:
        """The address, its tokens (their digests and the nonce), the rate window, the digest
        schedule and every queued mail (`drop_mails`: the outbox's)."""
        await self.layer.many(
            [
                ("DEL", email_key(player_id)),
                ("DEL", email_rate_key(player_id)),
                ("ZREM", MAIL_DIGESTS, player_id),
            ]
        )
        await drop_mails(player_id)

    async def queued(self, player_id: str) -> list[str]:
        return [text(m) for m in await self.layer.call("SMEMBERS", mail_player_key(player_id))]
