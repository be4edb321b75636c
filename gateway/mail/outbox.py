"""The outbox: mails queued in Redis (kit/redis/keys.py, "E-mail") and a sender on every gateway.

A mail is queued once per id (lua/mail/queue: not while queued, nor for 8 days after it went), with
the time it may go (an immediate one waits out the player's quiet hours). Every gateway's sender
(a kit/loops.py Loop) claims due mails with a lease (lua/mail/claim, like the clock sweeper's
claims: two gateways never hold one mail at once, and the mails of a sender that died mid-send
are taken again when its lease ends), hands each to the transport and settles it (lua/mail/settle:
gone, its id remembered). A refused or failed send is queued again with backoff (a 4xx answer, a
relay out of reach) or given up (a 5xx answer, or after MAX_TRIES). The one window where a mail can
go twice is a sender dying between the relay's "250 OK" and the settle; its Message-ID is derived
from the mail's id so the relay and mail clients see the same message again.

Transports: SMTP over the configured relay (aiosmtplib: asyncio-native, so a send is cancelled with
the gateway's stop and takes no thread; it speaks STARTTLS and AUTH), or the log (`make run`
without a relay): the same sender, each mail written to the log instead."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate
from typing import Any, Protocol

import aiosmtplib

from kit.loops import Loop
from kit.redis.keys import MAIL_CLAIMED, MAIL_DUE, mail_key, mail_player_key, mail_sent_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import pairs, text
from kit.redis.scripts import script
from kit.retry import Backoff

log = logging.getLogger("tafel.gateway.mail")
SENT_KEEP_S = 8 * 86_400  # longer than any retry of a notice or a digest day
MAX_TRIES = 10
BATCH = 8


@dataclass(frozen=True)
class Mail:
    mail_id: str
    player_id: str
    to: str
    subject: str
    text: str
    unsubscribe: str = ""  # the one-click URL (List-Unsubscribe); "" for a confirmation mail


class SendFailed(Exception):
    def __init__(self, message: str, *, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent


class Transport(Protocol):
    async def send(self, message: EmailMessage) -> None:
        """Hand the message over, or raise SendFailed."""


@dataclass(frozen=True)
class SmtpTransport:
    host: str
    port: int
    username: str = ""
    password: str = ""
    starttls: bool = False
    timeout_s: float = 30.0

    async def send(self, message: EmailMessage) -> None:
        try:
            await aiosmtplib.send(
                message,
                hostname=self.host,
                port=self.port,
                username=self.username or None,
                password=self.password or None,
                start_tls=self.starttls,
                timeout=self.timeout_s,
            )
        except aiosmtplib.SMTPRecipientsRefused as error:
            codes = [r.code for r in error.recipients]
            raise SendFailed(f"recipient refused ({codes})", permanent=all(c >= 500 for c in codes)) from None
        except aiosmtplib.SMTPResponseException as error:
            raise SendFailed(f"relay answered {error.code}", permanent=error.code >= 500) from None
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as error:
            raise SendFailed(f"relay not reached: {type(error).__name__}", permanent=False) from None


class LogTransport:
    """No relay configured: each mail goes to the log, whole (links included), to be read there."""

    def __init__(self) -> None:
        self.sent = 0

    async def send(self, message: EmailMessage) -> None:
        body = message.get_content() if not message.is_multipart() else ""
        log.info(
            "mail (no SMTP relay configured: logged, not sent)\nTo: %s\nSubject: %s\n\n%s",
            message["To"],
            message["Subject"],
            body,
            extra={"to": message["To"], "message_id": message["Message-ID"]},
        )
        self.sent += 1


def build_message(mail: Mail, sender: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = mail.to
    message["Subject"] = mail.subject
    message["Date"] = formatdate(localtime=False)
    domain = sender.rpartition("@")[2].strip("> ") or "tafel.invalid"
    message["Message-ID"] = f"<{mail.mail_id}@{domain}>"
    if mail.unsubscribe:
        # RFC 2369 and RFC 8058: mail clients offer one-click unsubscribe by a POST to this URL.
        message["List-Unsubscribe"] = f"<{mail.unsubscribe}>"
        message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
        message["Auto-Submitted"] = "auto-generated"
    message.set_content(mail.text)
    return message


class Outbox:
    def __init__(
        self,
        layer: RedisLayer,
        transport: Transport,
        *,
        sender: str,
        clock: Callable[[], float] = time.time,
        lease_s: float = 120.0,
        retry_first_s: float = 30.0,
        retry_cap_s: float = 3600.0,
        max_wait_s: float = 5.0,
    ) -> None:
        self.layer = layer
        self.transport = transport
        self.sender = sender
        self.clock = clock
        self.lease_ms = int(lease_s * 1000)
        self.backoff = Backoff(first_s=retry_first_s, cap_s=retry_cap_s)
        self.max_wait_s = max_wait_s
        self.sent = 0
        self.failed = 0
        self._loop: Loop | None = None

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    async def queue(self, mail: Mail, due_ms: int | None = None) -> bool:
        """Queue `mail` to go at `due_ms` (None: now); False when that id was queued or went before."""
        due = self.now_ms() if due_ms is None else due_ms
        queued = int(
            await self.layer.run(
                script("mail/queue"),
                [MAIL_DUE, mail_key(mail.mail_id), mail_sent_key(mail.mail_id), mail_player_key(mail.player_id)],
                [mail.mail_id, mail.player_id, mail.to, mail.subject, mail.text, mail.unsubscribe, due],
            )
        )
        if queued and self._loop is not None and due <= self.now_ms():
            self._loop.wake()
        return bool(queued)

    async def drop_player(self, player_id: str) -> None:
        """Erasure: the player's queued mails are never sent."""
        ids = [text(m) for m in await self.layer.call("SMEMBERS", mail_player_key(player_id))]
        commands: list[Any] = [("DEL", mail_player_key(player_id))]
        for mail_id in ids:
            commands += [("ZREM", MAIL_DUE, mail_id), ("ZREM", MAIL_CLAIMED, mail_id), ("DEL", mail_key(mail_id))]
        await self.layer.many(commands)

    # -- the sender ---------------------------------------------------------------------------------

    def start(self) -> None:
        if self._loop is None:
            self._loop = Loop("mail sender", self.step, every_s=self.max_wait_s, log=log)
            self._loop.start()

    async def stop(self) -> None:
        if self._loop is not None:
            await self._loop.stop()
            self._loop = None

    def wake(self) -> None:
        if self._loop is not None:
            self._loop.wake()

    async def step(self) -> float:
        """Send what is due; the seconds until the next look (the next mail due, at most max_wait_s:
        other gateways queue mails this one does not hear of)."""
        now = self.now_ms()
        reply: Any = await self.layer.run(script("mail/claim"), [MAIL_DUE, MAIL_CLAIMED], [now, self.lease_ms, BATCH])
        ids = [text(m) for m in reply[0]]
        if ids:
            await asyncio.gather(*(self._send(mail_id) for mail_id in ids))
            return 0.0
        nexts = [float(x) for x in reply[1:] if x not in (b"", "", None)]
        if not nexts:
            return self.max_wait_s
        return min(self.max_wait_s, max(0.0, (min(nexts) - self.now_ms()) / 1000.0))

    async def _send(self, mail_id: str) -> None:
        row: Any = await self.layer.call("HGETALL", mail_key(mail_id))
        flat = pairs(row) if isinstance(row, list) else (row or {})
        fields = {text(k): text(v) for k, v in flat.items()}
        if "to" not in fields:  # erased meanwhile
            await self.layer.call("ZREM", MAIL_CLAIMED, mail_id)
            return
        mail = Mail(mail_id, fields["p"], fields["to"], fields["subject"], fields["text"], fields.get("unsub", ""))
        try:
            await self.transport.send(build_message(mail, self.sender))
        except SendFailed as failure:
            tries = int(fields.get("tries", "0")) + 1
            if failure.permanent or tries >= MAX_TRIES:
                log.warning("mail given up", extra={"mail_id": mail_id, "why": str(failure), "tries": tries})
                self.failed += 1
                await self._settle(mail)
                return
            delay = min(self.backoff.cap_s, self.backoff.first_s * 2 ** (tries - 1))
            log.info("mail not sent; retrying", extra={"mail_id": mail_id, "why": str(failure), "in_s": delay})
            again = self.now_ms() + int(delay * 1000)
            await self.layer.run(script("mail/retry"), [MAIL_CLAIMED, MAIL_DUE, mail_key(mail_id)], [mail_id, again])
            return
        self.sent += 1
        await self._settle(mail)

    async def _settle(self, mail: Mail) -> None:
        await self.layer.run(
            script("mail/settle"),
            [MAIL_CLAIMED, mail_key(mail.mail_id), mail_sent_key(mail.mail_id), mail_player_key(mail.player_id)],
            [mail.mail_id, SENT_KEEP_S],
        )
