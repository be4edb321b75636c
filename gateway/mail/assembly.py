"""E-mail's parts as the composition root (gateway/server.py) builds them: the store, the outbox
with its transport (SMTP when a relay is configured, else the log), the mailer (hooked to the
inbox for immediate mails, reading the notice settings and unread notices for the digest, the
game directory for the games waiting for a move) and the EmailService servicer."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from tafel.play.v1 import notices_pb2, notices_pb2_grpc, play_pb2

from gateway.auth import Authenticator, Identity
from gateway.games import GameDirectory
from gateway.mail.mailer import IMMEDIATE_KINDS, Mailer
from gateway.mail.model import DIGEST, IMMEDIATE
from gateway.mail.outbox import LogTransport, Outbox, SmtpTransport, Transport
from gateway.mail.service import EmailServicer
from gateway.mail.store import MailStore
from gateway.notices.inbox import Inbox
from gateway.notices.settings import NoticeSettingsStore
from gateway.settings import MailSettings
from kit import timesource
from kit.errors import Refused
from kit.redis.keys import player_games_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import text

log = logging.getLogger("tafel.gateway.mail")
SERVICE = notices_pb2.DESCRIPTOR.services_by_name["EmailService"].full_name
CORRESPONDENCE_S = 86_400  # a game waits in a digest when its moves take a day or more
DIGEST_GAMES = 30
UNREAD_PAGE = 100


def transport_of(settings: MailSettings) -> Transport:
    if not settings.smtp_host:
        return LogTransport()
    return SmtpTransport(
        settings.smtp_host,
        settings.smtp_port,
        username=settings.smtp_user,
        password=settings.smtp_password,
        starttls=settings.smtp_starttls,
    )


@dataclass
class MailParts:
    store: MailStore
    outbox: Outbox
    mailer: Mailer
    servicer: EmailServicer

    def register(self, server: grpc.aio.Server) -> None:
        notices_pb2_grpc.add_EmailServiceServicer_to_server(self.servicer, server)

    def start(self) -> None:
        self.outbox.start()
        self.mailer.start()

    async def stop(self) -> None:
        await self.mailer.stop()
        await self.outbox.stop()


def build_mail(
    layer: RedisLayer,
    settings: MailSettings,
    *,
    key: bytes,
    auth: Authenticator,
    inbox: Inbox,
    notice_settings: NoticeSettingsStore,
    directory: GameDirectory,
    clock: Callable[[], float] = timesource.now_s,  # the platform's (a test may move it)
    transport: Transport | None = None,
) -> MailParts:
    async def unread_of(player_id: str) -> list[notices_pb2.Notification]:
        return (await inbox.listing(player_id, unread_only=True, page_size=UNREAD_PAGE)).notifications

    async def waiting_of(player_id: str) -> list[play_pb2.GameSummary]:
        """The player's live games of a day or more a move where it is their turn."""
        ids: Any = await layer.call("ZREVRANGE", player_games_key(player_id, "live"), 0, 199)
        waiting: list[play_pb2.GameSummary] = []
        for raw in ids:
            try:
                meta = await directory.meta(text(raw))
                if meta.per_move_s < CORRESPONDENCE_S or not directory.router.offers(meta.game):
                    continue
                summary = await directory.summary(meta.game_id, meta=meta)
            except Refused:
                continue  # ended or gone meanwhile
            seats = set(meta.seats_of(player_id))
            if not summary.status.over and seats & set(summary.status.to_act):
                waiting.append(summary)
            if len(waiting) >= DIGEST_GAMES:
                break
        return waiting

    async def stop_kind(player_id: str, kind: str) -> None:
        """Unsubscribe: the switch in the player's notice settings, so their settings page shows it
        off and turning it on again there works."""
        current = await notice_settings.get(player_id)
        if kind == DIGEST:
            current.email_digest = False
        for preference in current.preferences:
            if kind == IMMEDIATE and preference.kind in IMMEDIATE_KINDS:
                preference.email = False
        await notice_settings.update(Identity(player_id, "", guest=False, expires_at=0.0), current)

    store = MailStore(layer)
    outbox = Outbox(
        layer,
        transport or transport_of(settings),
        sender=settings.sender,
        clock=clock,
        lease_s=settings.lease_s,
        retry_first_s=settings.retry_s,
        max_wait_s=settings.max_wait_s,
    )
    mailer = Mailer(
        store,
        outbox,
        key=hashlib.sha256(b"tafel mail links|" + key).digest(),  # not the session tokens' key itself
        public_url=settings.public_url,
        settings_of=notice_settings.get,
        unread_of=unread_of,
        waiting_of=waiting_of,
        stop_kind=stop_kind,
        clock=clock,
        max_wait_s=settings.max_wait_s,
    )
    inbox.hooks.append(mailer.on_notice)
    return MailParts(store, outbox, mailer, EmailServicer(auth, store, mailer))
