"""E-mail through real gateways and a real SMTP server (aiosmtpd in this process): an address set
and confirmed through the link in the mail the relay received; every refusal; an immediate mail
sent once by two gateways although the relay refused the first try and a sender died holding it;
quiet hours; the daily digest at the player's hour in their time zone, once a day, only when
something waits; unsubscribe by the RPC and by the RFC 8058 one-click POST on the web edge; the
export names the address and erasure leaves nothing of it.

The gateways send with the real clock. What depends on the time of day (quiet hours, the digest)
runs through mail parts built in this process over the same Redis and relay with a clock of the
test's (build_mail's `clock`), at times days ahead, so the gateways' own senders never find those
mails due."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse
from zoneinfo import ZoneInfo

import grpc
import httpx
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from tafel.play.v1 import notices_pb2, notices_pb2_grpc, play_pb2, play_pb2_grpc

from gateway.auth import Authenticator
from gateway.clocks import Clocks
from gateway.games import GameDirectory
from gateway.mail.assembly import MailParts, build_mail
from gateway.mail.model import mail_id
from gateway.mail.outbox import Mail, Outbox, SmtpTransport
from gateway.notices.inbox import Inbox
from gateway.notices.settings import NoticeSettingsStore
from gateway.rules import RulesRouter
from gateway.settings import MailSettings
from kit.redis.keys import (
    MAIL_CLAIMED,
    MAIL_DIGESTS,
    MAIL_DUE,
    email_key,
    email_rate_key,
    mail_key,
    mail_player_key,
)
from kit.redis.layer import RedisLayer
from tests.gateway.harness import SECRET, Proc, new_id, seating, spawn_gateway, spawn_rules
from tests.gateway.mail.relay import Relay, body
from tests.gateway.standing.helpers import PASSWORD, Person, register
from tests.gateway.standing.test_erasure import occurrences
from tests.keyspace import alone
from tools.redis_server import free_port

N = notices_pb2
FAST = {"TAFEL_MAIL_MAX_WAIT_S": "0.1", "TAFEL_MAIL_RETRY_S": "0.2", "TAFEL_LOG_LEVEL": "WARNING"}


@dataclass
class MailSystem:
    redis_url: str
    relay: Relay
    gateways: list[Proc]
    web_url: str
    layer: RedisLayer
    rules: str  # the Connect Four rules service's address

    @property
    def address(self) -> str:
        return self.gateways[0].address


@pytest.fixture(scope="module")
def relay() -> Iterator[Relay]:
    running = Relay().start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
async def system(redis_url: str, relay: Relay) -> AsyncIterator[MailSystem]:
    # A database of its own: another module's gateways (no relay: they log mails) never take ours.
    with alone(redis_url, "mail outbox, alone") as url:
        rules = spawn_rules(url)
        web_port = free_port()
        public = f"http://127.0.0.1:{web_port}"
        env = {"TAFEL_SMTP_HOST": "127.0.0.1", "TAFEL_SMTP_PORT": str(relay.port), "TAFEL_PUBLIC_URL": public, **FAST}
        gateways: list[Proc] = []
        layer = RedisLayer.connect(url, max_connections=8)
        try:
            gateways.append(
                spawn_gateway(url, {"connect4": rules.address}, name="mail-gw-0", TAFEL_WEB_PORT=str(web_port), **env)
            )
            gateways.append(spawn_gateway(url, {"connect4": rules.address}, name="mail-gw-1", **env))
            yield MailSystem(url, relay, gateways, public, layer, rules.address)
        finally:
            await layer.close()
            for proc in (*gateways, rules):
                proc.stop()


class Clock:
    def __init__(self, at: dt.datetime) -> None:
        self.at = at.timestamp()

    def __call__(self) -> float:
        return self.at

    def set(self, at: dt.datetime) -> None:
        self.at = at.timestamp()


@pytest.fixture
async def local(system: MailSystem, relay: Relay) -> AsyncIterator[tuple[MailParts, Inbox, Clock]]:
    """Mail parts in this process (same Redis, same relay) on a clock of the test's, and an inbox
    whose new notices reach them (as a gateway's do)."""
    clock = Clock(dt.datetime.now(dt.UTC) + dt.timedelta(days=3))
    settings = MailSettings(smtp_host="127.0.0.1", smtp_port=relay.port, public_url=system.web_url, retry_s=0.2)
    router = RulesRouter({"connect4": (system.rules,)})
    directory = GameDirectory(system.layer, router, Clocks(system.layer, ttl_s=3600), game_ttl_s=3600)
    inbox = Inbox(system.layer, NoticeSettingsStore(system.layer))
    auth = Authenticator(system.layer, secret=SECRET.encode(), token_ttl_s=3600)
    parts = build_mail(
        system.layer,
        settings,
        key=SECRET.encode(),
        auth=auth,
        inbox=inbox,
        notice_settings=NoticeSettingsStore(system.layer),
        directory=directory,
        clock=clock,
        transport=SmtpTransport("127.0.0.1", relay.port),
    )
    try:
        yield parts, inbox, clock
    finally:
        await router.close()


def emails(who: Person, channel: grpc.aio.Channel | None = None) -> notices_pb2_grpc.EmailServiceStub:
    return notices_pb2_grpc.EmailServiceStub(channel or who.channel)


def notices(who: Person) -> notices_pb2_grpc.NotificationServiceStub:
    return notices_pb2_grpc.NotificationServiceStub(who.channel)


def refusal(error: grpc.aio.AioRpcError) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    status = rpc_status.from_call(error)
    assert status is not None
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return error.code(), info.reason, dict(info.metadata)
    raise AssertionError("no ErrorInfo")


async def refused(call: Any) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return refusal(caught.value)


def address_for(who: Person) -> str:
    return f"{who.name}@example.org"


def token_in(text: str, marker: str) -> str:
    found = re.search(re.escape(marker) + r"([A-Za-z0-9._-]+)", text)
    assert found is not None, text
    return found.group(1)


async def current_settings(who: Person) -> notices_pb2.NotificationSettings:
    answer = await notices(who).GetNotificationSettings(N.GetNotificationSettingsRequest(), metadata=who.md)
    found: notices_pb2.NotificationSettings = answer.settings
    return found


async def immediate_on(who: Person) -> bool:
    kinds = {p.kind: p.email for p in (await current_settings(who)).preferences}
    return kinds[N.NOTIFICATION_KIND_TIME_RUNNING_OUT]


async def settings(who: Person, **changes: Any) -> None:
    current = await current_settings(who)
    for name, value in changes.items():
        if name == "quiet_hours":
            current.quiet_hours.CopyFrom(value)
        else:
            setattr(current, name, value)
    await notices(who).UpdateNotificationSettings(
        N.UpdateNotificationSettingsRequest(settings=current), metadata=who.md
    )


async def confirmed(system: MailSystem, who: Person, language: str = "en") -> str:
    """Set an address and confirm it with the link from the mail the relay received."""
    # The gateways look at a new address's digest at once (real time): not this hour.
    await settings(who, digest_hour=(dt.datetime.now(dt.UTC).hour + 12) % 24)
    address = address_for(who)
    await emails(who).SetEmail(N.SetEmailRequest(address=address, language=language), metadata=who.md, timeout=10)
    (mail,) = await system.relay.wait_for(address)
    token = token_in(body(mail), "#/email/confirm?token=")
    answer = await emails(who).ConfirmEmail(N.ConfirmEmailRequest(token=token), timeout=10)
    assert answer.email.confirmed
    return address


async def correspondence_game(system: MailSystem, players: list[play_pb2.Player]) -> str:
    """A Connect Four game of 3 days a move, the first player to move."""
    async with seating(system.redis_url, {"connect4": system.rules}) as seats:
        return await seats.start(players, per_move_s=3 * 86_400.0)


def time_running_out(note_id: str, game_id: str = "g-1") -> notices_pb2.Notification:
    note = N.Notification(
        notification_id=note_id, kind=N.NOTIFICATION_KIND_TIME_RUNNING_OUT, game_id=game_id, game="connect4"
    )
    note.hours_left = 1
    note.deadline.FromSeconds(int(time.time()) + 3600)
    return note


# -- set and confirm -------------------------------------------------------------------------------


async def test_set_and_confirm_through_the_link(system: MailSystem) -> None:
    who = await register(system.address, "mailer")
    address = address_for(who)
    await settings(who, digest_hour=(dt.datetime.now(dt.UTC).hour + 12) % 24)
    answer = await emails(who).SetEmail(
        N.SetEmailRequest(address=f"  {address} ", language="nl"), metadata=who.md, timeout=10
    )
    assert answer.email == N.EmailAddress(pending_address=address)
    (mail,) = await system.relay.wait_for(address)
    assert mail["Subject"] == "Bevestig je e-mailadres voor tafel"
    assert "List-Unsubscribe" not in mail  # a confirmation is no subscription
    link = re.search(r"http\S+", body(mail))
    assert link is not None and link.group(0).startswith(f"{system.web_url}/#/email/confirm?token=")
    token = token_in(body(mail), "#/email/confirm?token=")
    # The link needs no session (the web app page calls ConfirmEmail), and opening it again is fine.
    other = grpc.aio.insecure_channel(system.gateways[1].address)
    try:
        first = await emails(who, other).ConfirmEmail(N.ConfirmEmailRequest(token=token), timeout=10)
        again = await emails(who, other).ConfirmEmail(N.ConfirmEmailRequest(token=token), timeout=10)
    finally:
        await other.close()
    assert first.email == N.EmailAddress(address=address, confirmed=True)
    assert first.username == who.name and again == first
    got = await emails(who).GetEmail(N.GetEmailRequest(), metadata=who.md, timeout=10)
    assert got.email == first.email
    # Only the token's digest is kept, never the token.
    stored = await system.layer.call("HGETALL", email_key(who.session.player.player_id))
    assert token.split(".", 1)[1].encode() not in b"".join(stored)

    # A new address waits for its own confirmation; the confirmed one stays in use meanwhile.
    newer = f"new-{address}"
    answer = await emails(who).SetEmail(N.SetEmailRequest(address=newer), metadata=who.md, timeout=10)
    assert answer.email == N.EmailAddress(address=address, confirmed=True, pending_address=newer)
    (mail,) = await system.relay.wait_for(newer)
    assert mail["Subject"] == "Confirm your e-mail address for tafel"
    # Going back to the confirmed address drops the pending one; its link no longer works.
    answer = await emails(who).SetEmail(N.SetEmailRequest(address=address), metadata=who.md, timeout=10)
    assert answer.email == N.EmailAddress(address=address, confirmed=True)
    code, reason, _ = await refused(
        emails(who).ConfirmEmail(N.ConfirmEmailRequest(token=token_in(body(mail), "token=")), timeout=10)
    )
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "BAD_EMAIL_TOKEN")
    # Empty removes it, and what was still queued for it (held by quiet hours, say) never goes.
    pid = who.session.player.player_id
    note = N.Notification(notification_id="time:g-r:1:1", kind=N.NOTIFICATION_KIND_TIME_RUNNING_OUT, game_id="g-r")
    held = Mail(mail_id("notice", pid, note.notification_id), pid, address, "held", "held")
    assert await Outbox(system.layer, SmtpTransport("127.0.0.1", system.relay.port), sender="t@x.org").queue(
        held, int(time.time() * 1000) + 86_400_000
    )
    answer = await emails(who).SetEmail(N.SetEmailRequest(address=""), metadata=who.md, timeout=10)
    assert answer.email == N.EmailAddress()
    assert not await system.layer.call("EXISTS", mail_key(held.mail_id))
    assert await system.layer.call("ZSCORE", MAIL_DUE, held.mail_id) is None


async def test_refusals(system: MailSystem) -> None:
    guest_channel = grpc.aio.insecure_channel(system.address)
    try:
        guest = await play_pb2_grpc.AccountServiceStub(guest_channel).SignInAsGuest(
            play_pb2.SignInAsGuestRequest(), timeout=10
        )
        md = (("authorization", f"Bearer {guest.session.token}"),)
        stub = notices_pb2_grpc.EmailServiceStub(guest_channel)
        code, reason, _ = await refused(stub.SetEmail(N.SetEmailRequest(address="a@example.org"), metadata=md))
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "EMAIL_NEEDS_ACCOUNT")
    finally:
        await guest_channel.close()

    who = await register(system.address, "refused")
    for bad in ("no-at-sign", "two@@example.org", "a@nodot", "a b@example.org", "x" * 250 + "@example.org"):
        code, reason, _ = await refused(emails(who).SetEmail(N.SetEmailRequest(address=bad), metadata=who.md))
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_EMAIL"), bad
    code, reason, _ = await refused(
        emails(who).SetEmail(N.SetEmailRequest(address=address_for(who), language="fr"), metadata=who.md)
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_EMAIL_LANGUAGE")
    for bad_token in ("", "nonsense", "0123456789abcdef01234567.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"):
        code, reason, _ = await refused(emails(who).ConfirmEmail(N.ConfirmEmailRequest(token=bad_token)))
        assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "BAD_EMAIL_TOKEN"), bad_token

    # Three confirmation mails an hour; the fourth is refused with how long to wait, and nothing of
    # it is written.
    for n in range(3):
        await emails(who).SetEmail(N.SetEmailRequest(address=f"{n}-{address_for(who)}"), metadata=who.md)
    before = await emails(who).GetEmail(N.GetEmailRequest(), metadata=who.md)
    code, reason, meta = await refused(
        emails(who).SetEmail(N.SetEmailRequest(address=f"3-{address_for(who)}"), metadata=who.md)
    )
    assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "EMAIL_TOO_FAST")
    assert 3_000_000 < int(meta["retry_after_ms"]) <= 3_600_000
    assert await emails(who).GetEmail(N.GetEmailRequest(), metadata=who.md) == before
    # Only the last link works (one live token per account) ...
    mails = [(await system.relay.wait_for(f"{n}-{address_for(who)}"))[0] for n in range(3)]
    tokens = [token_in(body(m), "token=") for m in mails]
    for stale in tokens[:2]:
        code, reason, _ = await refused(emails(who).ConfirmEmail(N.ConfirmEmailRequest(token=stale)))
        assert reason == "BAD_EMAIL_TOKEN"
    # ... and for 7 days: one whose time ran out is refused.
    pid = who.session.player.player_id
    await system.layer.call("HSET", email_key(pid), "ce", int(time.time() * 1000) - 1)
    code, reason, _ = await refused(emails(who).ConfirmEmail(N.ConfirmEmailRequest(token=tokens[2])))
    assert reason == "BAD_EMAIL_TOKEN"


# -- immediate mails -------------------------------------------------------------------------------


async def test_an_immediate_mail_goes_once_through_a_refusal_and_a_dead_sender(
    system: MailSystem, local: tuple[MailParts, Inbox, Clock]
) -> None:
    parts, inbox, clock = local
    clock.at = time.time()  # now: the gateways' senders send it
    who = await register(system.address, "hurry")
    address = await confirmed(system, who, "de")
    pid = who.session.player.player_id
    refused_before = system.relay.recorder.refused
    system.relay.recorder.refuse_next = 1
    note = time_running_out("time:g-1:7:1")
    assert await inbox.notify(pid, note)
    assert not await inbox.notify(pid, note)  # the same notice again is no new notice
    await parts.mailer.on_notice(pid, note)  # a hook told twice still queues one mail
    mail = (await system.relay.wait_for(address, 2))[1]  # (the first: the confirmation)
    assert system.relay.recorder.refused == refused_before + 1  # the first try was refused, then retried
    assert mail["Subject"] == "Du bist am Zug: noch 1 Std. in connect4"
    assert f"{system.web_url}/#/game/g-1" in body(mail)
    assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert mail["List-Unsubscribe"].startswith(f"<{system.web_url}/mail/unsubscribe?token=")
    await asyncio.sleep(1.0)
    assert len(system.relay.to(address)) == 2

    # A sender that dies holding a mail (claimed, never settled): another takes it when the lease
    # ends, and it goes once.
    # (Queued days ahead, so no gateway takes it first; then in a sender's hands, as its claim
    # script leaves it, with a lease ending in half a second, and that sender gone.)
    clock.at = time.time() + 3 * 86_400
    await parts.mailer.on_notice(pid, time_running_out("time:g-2:9:24", "g-2"))
    (member,) = await system.layer.call("SMEMBERS", mail_player_key(pid))
    await system.layer.call("ZREM", MAIL_DUE, member)
    await system.layer.call("ZADD", MAIL_CLAIMED, int(time.time() * 1000) + 500, member)
    await asyncio.sleep(0.3)
    assert len(system.relay.to(address)) == 2  # held while the lease runs
    mails = await system.relay.wait_for(address, 3)
    assert "g-2" in body(mails[2])
    await asyncio.sleep(1.0)
    assert len(system.relay.to(address)) == 3
    # A kind that is not immediate is not mailed at once.
    await inbox.notify(
        pid, N.Notification(notification_id="challenge:c-1", kind=N.NOTIFICATION_KIND_CHALLENGE_RECEIVED)
    )
    await asyncio.sleep(0.5)
    assert len(system.relay.to(address)) == 3


async def test_quiet_hours_hold_an_immediate_mail_to_the_end_of_the_window(
    system: MailSystem, local: tuple[MailParts, Inbox, Clock]
) -> None:
    parts, inbox, clock = local
    who = await register(system.address, "quiet")
    address = await confirmed(system, who)
    pid = who.session.player.player_id
    # 22:00-07:00 in Amsterdam; a notice at 23:30 there, three days ahead (the gateways' senders,
    # on the real clock, never find it due).
    await settings(
        who,
        time_zone="Europe/Amsterdam",
        quiet_hours=N.QuietHours(enabled=True, start_minute=22 * 60, end_minute=7 * 60),
    )
    zone = ZoneInfo("Europe/Amsterdam")
    day = (dt.datetime.now(dt.UTC) + dt.timedelta(days=3)).date()
    clock.set(dt.datetime.combine(day, dt.time(23, 30), zone))
    await inbox.notify(pid, time_running_out("time:g-q:3:1", "g-q"))
    end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(7, 0), zone)
    queued: Any = await system.layer.call("SMEMBERS", mail_player_key(pid))
    (member,) = queued
    assert float(await system.layer.call("ZSCORE", MAIL_DUE, member)) == end.timestamp() * 1000
    clock.set(end - dt.timedelta(seconds=1))
    await parts.outbox.step()
    assert len(system.relay.to(address)) == 1  # the confirmation only
    clock.set(end + dt.timedelta(seconds=1))
    await parts.outbox.step()
    mails = await system.relay.wait_for(address, 2, timeout_s=2)
    assert "g-q" in body(mails[1])


# -- the digest ------------------------------------------------------------------------------------


async def test_the_daily_digest(system: MailSystem, local: tuple[MailParts, Inbox, Clock]) -> None:
    parts, inbox, clock = local
    who = await register(system.address, "digest")
    address = await confirmed(system, who, "nl")
    pid = who.session.player.player_id
    await settings(who, time_zone="America/New_York", digest_hour=9)
    zone = ZoneInfo("America/New_York")
    day = (dt.datetime.now(dt.UTC) + dt.timedelta(days=3)).date()

    def at(days: int, hour: int, minute: int) -> dt.datetime:
        return dt.datetime.combine(day + dt.timedelta(days=days), dt.time(hour, minute), zone)

    # Nothing waits: no digest, even in the hour.
    clock.set(at(0, 9, 5))
    assert not await parts.mailer.look(pid, parts.outbox.now_ms())
    # A correspondence game (3 days a move) waits for their move.
    opponent = await register(system.address, "opp")
    game_id = await correspondence_game(system, [who.session.player, opponent.session.player])
    # A challenge (e-mail on by default) and a your-turn notice (off by default) arrive.
    challenger = play_pb2.Player(player_id="0" * 24, username="Ria")
    await inbox.notify(
        pid,
        N.Notification(notification_id="challenge:c-9", kind=N.NOTIFICATION_KIND_CHALLENGE_RECEIVED, player=challenger),
    )
    await inbox.notify(
        pid, N.Notification(notification_id="turn:g-9:4", kind=N.NOTIFICATION_KIND_YOUR_TURN, game="connect4")
    )
    # Before the hour: nothing; the next look is at the hour.
    clock.set(at(0, 8, 30))
    assert not await parts.mailer.look(pid, parts.outbox.now_ms())
    assert float(await system.layer.call("ZSCORE", MAIL_DIGESTS, pid)) == at(0, 9, 0).timestamp() * 1000
    # In the hour: one digest, in Dutch, naming the challenge and not the your-turn notice.
    clock.set(at(0, 9, 0))
    assert await parts.mailer.look(pid, parts.outbox.now_ms())
    clock.set(at(0, 9, 40))
    assert not await parts.mailer.look(pid, parts.outbox.now_ms())  # once a day
    await parts.outbox.step()
    mails = await system.relay.wait_for(address, 2, timeout_s=3)
    digest = mails[1]
    assert digest["Subject"] == "tafel: wat er op je wacht"
    text = body(digest)
    assert "Ria daagt je uit" in text and "Jij bent aan zet" not in text
    assert "Partijen waarin jij aan zet bent:" in text
    assert f"connect4 tegen {opponent.name}: {system.web_url}/#/game/{game_id}" in text
    assert digest["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    # The next day, with everything read: the game still waits, and it alone is listed.
    await notices(who).MarkNotificationsRead(N.MarkNotificationsReadRequest(all=True), metadata=who.md)
    clock.set(at(1, 9, 1))
    assert await parts.mailer.look(pid, parts.outbox.now_ms())
    await parts.outbox.step()
    text = body((await system.relay.wait_for(address, 3, timeout_s=3))[2])
    assert game_id in text and "Ongelezen" not in text
    # Once the game is over and everything read: nothing.
    await who.games.Resign(play_pb2.ResignRequest(game_id=game_id, request_id=new_id()), metadata=who.md)
    await notices(who).MarkNotificationsRead(N.MarkNotificationsReadRequest(all=True), metadata=who.md)
    clock.set(at(2, 9, 1))
    assert not await parts.mailer.look(pid, parts.outbox.now_ms())
    # Turned off in the settings: none either.
    await inbox.notify(
        pid, N.Notification(notification_id="challenge:c-10", kind=N.NOTIFICATION_KIND_CHALLENGE_RECEIVED)
    )
    await settings(who, email_digest=False)
    clock.set(at(3, 9, 1))
    assert not await parts.mailer.look(pid, parts.outbox.now_ms())
    await settings(who, email_digest=True)
    clock.set(at(4, 9, 1))
    assert await parts.mailer.look(pid, parts.outbox.now_ms())


# -- unsubscribe -----------------------------------------------------------------------------------


async def test_unsubscribe_by_the_rpc_and_by_the_one_click_post(
    system: MailSystem, local: tuple[MailParts, Inbox, Clock]
) -> None:
    parts, inbox, clock = local
    clock.at = time.time()
    who = await register(system.address, "unsub")
    address = await confirmed(system, who)
    pid = who.session.player.player_id
    await inbox.notify(pid, time_running_out("time:g-u:1:1", "g-u"))
    mails = await system.relay.wait_for(address, 2)
    url = mails[1]["List-Unsubscribe"].strip("<>")
    assert urlparse(url).path == "/mail/unsubscribe"
    async with httpx.AsyncClient(timeout=10) as http:
        # Opening the link (or a scanner fetching it) changes nothing: a page with a button.
        page = await http.get(url, headers={"accept-language": "de-DE,de;q=0.9"})
        assert page.status_code == 200 and "Abbestellen" in page.text and 'method="post"' in page.text
        assert await immediate_on(who)
        # RFC 8058: the mail client's POST.
        done = await http.post(
            url, content="List-Unsubscribe=One-Click", headers={"content-type": "application/x-www-form-urlencoded"}
        )
        assert done.status_code == 200
        again = await http.post(url, content="List-Unsubscribe=One-Click")
        assert again.status_code == 200  # idempotent
        bad = await http.post(url.replace("token=", "token=x"), content="List-Unsubscribe=One-Click")
        assert bad.status_code == 404
    assert not await immediate_on(who)  # the switch in their settings: the settings page shows it
    await inbox.notify(pid, time_running_out("time:g-u:2:1", "g-u"))
    await asyncio.sleep(1.0)
    assert len(system.relay.to(address)) == 2  # no more immediate mails

    # The digest's link, by the RPC (no session).
    digest_token = parts.mailer.unsubscribe_link(pid, "digest", (await parts.store.get(pid)).nonce).split("token=")[1]
    channel = grpc.aio.insecure_channel(system.gateways[1].address)
    try:
        answer = await emails(who, channel).Unsubscribe(N.UnsubscribeRequest(token=digest_token), timeout=10)
        assert answer.stopped == "digest"
        assert not (await current_settings(who)).email_digest
        code, reason, _ = await refused(emails(who, channel).Unsubscribe(N.UnsubscribeRequest(token="x.d.y")))
        assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "BAD_EMAIL_TOKEN")
    finally:
        await channel.close()
    await inbox.notify(
        pid, N.Notification(notification_id="challenge:c-u", kind=N.NOTIFICATION_KIND_CHALLENGE_RECEIVED)
    )
    await settings(who, digest_hour=dt.datetime.fromtimestamp(clock(), dt.UTC).hour, time_zone="")
    assert not await parts.mailer.look(pid, parts.outbox.now_ms())  # something waits, but no digest
    # Turned on again in the settings, it goes again.
    await settings(who, email_digest=True)
    assert await parts.mailer.look(pid, parts.outbox.now_ms())
    # A new address's links are its own: the old address's no longer verify.
    newer = f"new-{address}"
    await emails(who).SetEmail(N.SetEmailRequest(address=newer), metadata=who.md, timeout=10)
    (mail,) = await system.relay.wait_for(newer)
    await emails(who).ConfirmEmail(N.ConfirmEmailRequest(token=token_in(body(mail), "token=")), timeout=10)
    code, reason, _ = await refused(emails(who).Unsubscribe(N.UnsubscribeRequest(token=url.split("token=")[1])))
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "BAD_EMAIL_TOKEN")


# -- the account's data ------------------------------------------------------------------------------


async def test_export_and_erasure(system: MailSystem, local: tuple[MailParts, Inbox, Clock]) -> None:
    parts, inbox, clock = local
    who = await register(system.address, "erased")
    address = await confirmed(system, who)
    pid = who.session.player.player_id
    exported = await who.accounts.ExportMyData(play_pb2.ExportMyDataRequest(), metadata=who.md, timeout=10)
    assert f'"address": "{address}"' in exported.json
    # A mail waiting (in quiet hours, days ahead) and a pending change with its token.
    clock.set(dt.datetime.now(dt.UTC) + dt.timedelta(days=5))
    await parts.mailer.on_notice(pid, time_running_out("time:g-e:1:1", "g-e"))
    await emails(who).SetEmail(N.SetEmailRequest(address=f"new-{address}"), metadata=who.md, timeout=10)
    assert await system.layer.call("SCARD", mail_player_key(pid))
    await who.accounts.DeleteAccount(play_pb2.DeleteAccountRequest(password=PASSWORD), metadata=who.md, timeout=10)
    for key in (email_key(pid), email_rate_key(pid), mail_player_key(pid)):
        assert not await system.layer.call("EXISTS", key), key
    assert await system.layer.call("ZSCORE", MAIL_DIGESTS, pid) is None
    # Nothing of them anywhere: not the id, the name (in the address), a token or a queued mail.
    assert occurrences(system.redis_url, [pid.encode(), who.name.encode()]) == []
    # No queued mail of theirs is left anywhere in the outbox.
    for member in await system.layer.call("ZRANGE", MAIL_DUE, 0, -1):
        fields: Any = await system.layer.call("HGET", f"tafel:{{mail}}:m:{member.decode()}", "p")
        assert fields != pid.encode()


# -- no relay ----------------------------------------------------------------------------------------


async def test_without_a_relay_the_mails_go_to_the_log(redis_url: str) -> None:
    """`make run`: no TAFEL_SMTP_HOST, the same sender writes each mail, link and all, to the log."""
    with alone(redis_url, "mail, alone") as url:
        gateway = spawn_gateway(url, {}, name="mail-log-gw", TAFEL_LOG_LEVEL="INFO", TAFEL_MAIL_MAX_WAIT_S="0.1")
        try:
            who = await register(gateway.address, "logged")
            await emails(who).SetEmail(N.SetEmailRequest(address=address_for(who)), metadata=who.md, timeout=10)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                lines = [line for line in gateway.output if "no SMTP relay configured" in line]
                if lines:
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("no mail in the log")
            assert address_for(who) in lines[0] and "#/email/confirm?token=" in lines[0]
            await who.channel.close()
        finally:
            gateway.stop()
