"""What is mailed and when: the confirmation mail, the immediate mails (a notice of an immediate
kind whose `email` switch is on, TIME_RUNNING_OUT: queued as it is stored, to go at once or at the
end of the player's quiet hours) and the daily digest.

The digest: every player with a confirmed address has a place in one schedule (MAIL_DIGESTS,
scored by the next look). Every gateway's digest loop claims due looks with a lease (lua/mail/claim
on the schedule itself); a look in the player's digest hour, in their time zone, with the digest
on, queues one mail listing their unread notices whose kind has `email` on and the games waiting for
their move, only when there is any. Its id is the player and their local date, so it goes once a
day however many gateways look. The next look is the next start of the digest hour, or an hour
from now, whichever is sooner: settings change without telling the mail, and a changed hour or
time zone is seen within the hour."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from tafel.play.v1 import notices_pb2, play_pb2

from gateway.mail import texts
from gateway.mail.model import (
    DIGEST,
    IMMEDIATE,
    in_digest_hour,
    local_date,
    mail_id,
    next_digest_look_ms,
    quiet_until_ms,
    unsubscribe_token,
)
from gateway.mail.outbox import Mail, Outbox
from gateway.mail.store import Address, MailStore
from kit.loops import Loop
from kit.redis.keys import MAIL_DIGESTS
from kit.redis.replies import text
from kit.redis.scripts import script

log = logging.getLogger("tafel.gateway.mail")
N = notices_pb2
IMMEDIATE_KINDS = frozenset({N.NOTIFICATION_KIND_TIME_RUNNING_OUT})
LOOK_LEASE_MS = 60_000
LOOK_BATCH = 50
DIGEST_NOTICES = 30  # the most notices one digest lists (the inbox link shows the rest)

SettingsOf = Callable[[str], Awaitable[notices_pb2.NotificationSettings]]
StopKind = Callable[[str, str], Awaitable[None]]  # (player id, DIGEST | IMMEDIATE): turn it off
UnreadOf = Callable[[str], Awaitable[list[notices_pb2.Notification]]]
WaitingOf = Callable[[str], Awaitable[list[play_pb2.GameSummary]]]


def email_on(settings: notices_pb2.NotificationSettings, kind: int) -> bool:
    return any(p.kind == kind and p.email for p in settings.preferences)


class Mailer:
    def __init__(
        self,
        store: MailStore,
        outbox: Outbox,
        *,
        key: bytes,
        public_url: str,
        settings_of: SettingsOf,
        unread_of: UnreadOf,
        waiting_of: WaitingOf,
        stop_kind: StopKind,
        clock: Callable[[], float] = time.time,
        max_wait_s: float = 5.0,
    ) -> None:
        self.store = store
        self.outbox = outbox
        self.key = key
        self.public_url = public_url.rstrip("/")
        self.settings_of = settings_of
        self.unread_of = unread_of
        self.waiting_of = waiting_of
        self.stop_kind = stop_kind
        self.clock = clock
        self.max_wait_s = max_wait_s
        self._loop: Loop | None = None

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    def confirm_link(self, token: str) -> str:
        return f"{self.public_url}/#/email/confirm?token={token}"

    def unsubscribe_link(self, player_id: str, kind: str, nonce: str) -> str:
        return f"{self.public_url}/mail/unsubscribe?token={unsubscribe_token(self.key, player_id, kind, nonce)}"

    async def send_confirmation(self, player_id: str, address: str, language: str, name: str, token: str) -> None:
        written = texts.confirmation(language, name, self.confirm_link(token))
        # A fresh id each time: every confirmation asked for (within the rate) is its own mail.
        mail = Mail(mail_id("confirm", player_id, token), player_id, address, written.subject, written.text)
        await self.outbox.queue(mail)

    async def _quiet_until(self, settings: notices_pb2.NotificationSettings, now_ms: int) -> int | None:
        quiet = settings.quiet_hours
        return quiet_until_ms(now_ms, settings.time_zone, quiet.enabled, quiet.start_minute, quiet.end_minute)

    # -- immediate mails (an Inbox hook) ------------------------------------------------------------

    async def on_notice(self, player_id: str, note: notices_pb2.Notification) -> None:
        if note.kind not in IMMEDIATE_KINDS:
            return
        address = await self.store.get(player_id)
        if not address.address:
            return
        settings = await self.settings_of(player_id)
        if not email_on(settings, note.kind):
            return
        now = self.now_ms()
        written = texts.time_running_out(
            address.language, note, self.public_url, self.unsubscribe_link(player_id, IMMEDIATE, address.nonce)
        )
        mail = Mail(
            mail_id("notice", player_id, note.notification_id),
            player_id,
            address.address,
            written.subject,
            written.text,
            self.unsubscribe_link(player_id, IMMEDIATE, address.nonce),
        )
        await self.outbox.queue(mail, await self._quiet_until(settings, now))

    # -- the digest ---------------------------------------------------------------------------------

    async def confirmed(self, player_id: str) -> None:
        """A new address was confirmed: its first digest look is now (then on schedule)."""
        await self.store.schedule_digest(player_id, self.now_ms())
        if self._loop is not None:
            self._loop.wake()

    def start(self) -> None:
        if self._loop is None:
            self._loop = Loop("mail digests", self.step, every_s=self.max_wait_s, log=log)
            self._loop.start()

    async def stop(self) -> None:
        if self._loop is not None:
            await self._loop.stop()
            self._loop = None

    async def step(self) -> float:
        now = self.now_ms()
        layer = self.store.layer
        reply: Any = await layer.run(
            script("mail/claim"),
            [MAIL_DIGESTS, MAIL_DIGESTS],
            [now, LOOK_LEASE_MS, LOOK_BATCH],
        )
        players = [text(m) for m in reply[0]]
        for player_id in players:
            await self.look(player_id, now)
        if len(players) >= LOOK_BATCH:
            return 0.0
        nexts = [float(x) for x in reply[1:] if x not in (b"", "", None)]
        if not nexts:
            return self.max_wait_s
        return min(self.max_wait_s, max(0.0, (min(nexts) - self.now_ms()) / 1000.0))

    async def look(self, player_id: str, now_ms: int) -> bool:
        """Queue today's digest if this is the player's digest hour and anything waits; schedule the
        next look. True when a digest was queued now."""
        address = await self.store.get(player_id)
        if not address.address:
            await self.store.layer.call("ZREM", MAIL_DIGESTS, player_id)
            return False
        settings = await self.settings_of(player_id)
        queued = False
        if settings.email_digest and in_digest_hour(now_ms, settings.time_zone, settings.digest_hour):
            queued = await self._digest(player_id, address, settings, now_ms)
        at = next_digest_look_ms(now_ms, settings.time_zone, settings.digest_hour)
        await self.store.layer.call("ZADD", MAIL_DIGESTS, "XX", at, player_id)
        return queued

    async def _digest(
        self, player_id: str, address: Address, settings: notices_pb2.NotificationSettings, now_ms: int
    ) -> bool:
        notices = [n for n in await self.unread_of(player_id) if email_on(settings, n.kind)][:DIGEST_NOTICES]
        games = await self.waiting_of(player_id)
        if not notices and not games:
            return False
        link = self.unsubscribe_link(player_id, DIGEST, address.nonce)
        written = texts.digest(address.language, address.username, notices, games, player_id, self.public_url, link)
        day = local_date(now_ms, settings.time_zone)
        mail = Mail(mail_id("digest", player_id, day), player_id, address.address, written.subject, written.text, link)
        return await self.outbox.queue(mail, await self._quiet_until(settings, now_ms))

    # -- the account's life (gateway/standing/account_life.py) ---------------------------------------

    async def erase(self, player_id: str) -> None:
        """The address, its tokens and every mail still queued for the player."""
        await self.store.erase(player_id, self.outbox.drop_player)

    async def export(self, player_id: str) -> dict[str, Any]:
        address = await self.store.get(player_id)
        return {
            "address": address.address or None,
            "pending_address": address.pending or None,
            "language": address.language,
        }
