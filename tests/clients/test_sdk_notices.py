"""The SDK's notices, e-mail, vacations and correspondence clocks through the whole
platform, with a real SMTP server in the test process (aiosmtpd) as the platform's relay: a
challenge arrives as a notice live on two event streams of the account (two tabs), is read on one
and every stream says the count, then cleared; a 3-day game's clock and its YOUR_TURN notice; the
notice settings changed and read back, bad ones refused; an address confirmed with the token from
the mail the relay received; a vacation started, shown on the game, ended."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable

import pytest
from tafel.client import TafelClient
from tafel.errors import InvalidArgument, NotFound, TafelError
from tafel.events import AccountEventStream
from tafel.play.v1 import challenges_pb2 as C
from tafel.play.v1 import notices_pb2 as N

from tests.gateway.mail.relay import Relay, body, relayed_platform
from tools.platform import Platform

DAY_S = 86_400


# The whole platform, its mails sent to an SMTP server in this process.
relay, platform = relayed_platform()


async def account(address: str, prefix: str) -> TafelClient:
    client = await TafelClient.connect(address)
    await client.register(f"{prefix}{uuid.uuid4().hex[:8]}", "correct horse battery")
    return client


async def until(
    events: AccountEventStream, wanted: Callable[[C.AccountEvent], bool], timeout_s: float = 15.0
) -> C.AccountEvent:
    deadline = time.monotonic() + timeout_s
    while True:
        event = await events.next_event(max(0.1, deadline - time.monotonic()))
        if wanted(event):
            return event


def kind_is(kind: str) -> Callable[[C.AccountEvent], bool]:
    return lambda event: event.WhichOneof("kind") == kind


async def test_a_challenge_notice_live_on_two_streams_read_on_one_and_cleared(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    ann, ben = await account(address, "an"), await account(address, "be")
    other_tab = await TafelClient.connect(platform.gateway_addresses[-1])  # the same account elsewhere
    other_tab.session = ben.session
    try:
        async with ben.event_stream() as tab_one, other_tab.event_stream() as tab_two:
            made = await ann.create_challenge("connect4", username=ben.player.username, days_per_move=2)
            for tab in (tab_one, tab_two):
                event = await until(tab, kind_is("notification"))
                notice = event.notification
                assert notice.kind == N.NOTIFICATION_KIND_CHALLENGE_RECEIVED
                assert notice.challenge_id == made.challenge_id
                assert notice.player.username == ann.player.username and not notice.read
            listed = await ben.list_notifications()
            assert listed.unread == 1
            assert [n.notification_id for n in listed.notifications] == [notice.notification_id]
            assert (await ben.list_notifications(unread_only=True)).unread == 1

            # Read on one client: every stream of the account says so (the badge on every tab).
            assert await ben.mark_notifications_read(notice.notification_id) == 0
            for tab in (tab_one, tab_two):
                changed = (await until(tab, kind_is("inbox"))).inbox
                assert changed.unread == 0 and list(changed.read_ids) == [notice.notification_id]
            assert await other_tab.mark_notifications_read(notice.notification_id) == 0  # again: the same
            assert not (await ben.list_notifications(unread_only=True)).notifications
            assert (await ben.list_notifications()).notifications[0].read

            assert await ben.clear_notifications(all=True) == 0
            for tab in (tab_one, tab_two):
                assert (await until(tab, kind_is("inbox"))).inbox.all_cleared
            assert not (await ben.list_notifications()).notifications
            # The challenge itself waits as before; only its notice is gone.
            assert [c.challenge_id for c in (await ben.list_challenges()).incoming] == [made.challenge_id]
    finally:
        for client in (ann, ben, other_tab):
            await client.close()


async def test_a_three_day_game_counts_in_days_and_tells_whose_turn_it_is(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    ann, ben = await account(address, "an"), await account(address, "be")
    try:
        async with ann.event_stream() as ann_events:
            made = await ann.create_challenge("connect4", username=ben.player.username, days_per_move=3, seat="first")
            assert made.time_control.days_per_move == 3
            assert made.time_control.per_move.seconds == 3 * DAY_S  # for clients that know only per_move
            game_id = (await ben.accept_challenge(made.challenge_id)).game_id
            summary = (await ann.wait_for_game(game_id)).summary
            assert summary.time_control.days_per_move == 3
            left = summary.turn_deadline.seconds - time.time()
            assert 3 * DAY_S - 120 < left <= 3 * DAY_S + 5
            turn = await until(ann_events, lambda e: e.notification.kind == N.NOTIFICATION_KIND_YOUR_TURN)
            assert turn.notification.game_id == game_id and turn.notification.game == "connect4"

        # A vacation: the game shows the seat away; the clock's deadline keeps the time left.
        away = await ben.start_vacation(hours=48)
        assert away.active and away.ends_at.seconds - time.time() == pytest.approx(48 * 3600, abs=120)
        assert away.allowance_left.seconds < away.allowance.seconds
        assert (await ben.start_vacation(hours=48)).ends_at == away.ends_at  # again: the same vacation
        ben_seat = next(p.seat for p in summary.players if p.player.player_id == ben.player.player_id)
        assert list((await ann.get_game(game_id)).summary.vacation_seats) == [ben_seat]
        back = await ben.end_vacation()
        assert not back.active and (await ben.end_vacation()).active is False
        assert not (await ann.get_game(game_id)).summary.vacation_seats
        assert not (await ben.vacation()).active

        with pytest.raises(InvalidArgument) as refused:
            await ann.create_room("connect4", days_per_move=4)
        assert refused.value.reason == "BAD_DAYS_PER_MOVE"
    finally:
        await ann.close()
        await ben.close()


async def test_notice_settings_are_kept_and_bad_ones_refused(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    cas = await account(address, "ca")
    guest = await TafelClient.connect(address)
    try:
        before = await cas.notification_settings()
        kinds = {p.kind for p in before.preferences}
        assert kinds == set(N.NotificationKind.values()) - {N.NOTIFICATION_KIND_UNSPECIFIED}
        after = await cas.update_notification_settings(
            inbox={"opponent_moved": False},
            email={"your_turn": True},
            quiet_hours=(22 * 60, 7 * 60),
            time_zone="Europe/Amsterdam",
            email_digest=True,
            digest_hour=8,
        )
        again = await cas.notification_settings()
        assert again == after
        by_kind = {p.kind: p for p in again.preferences}
        assert not by_kind[N.NOTIFICATION_KIND_OPPONENT_MOVED].inbox
        assert by_kind[N.NOTIFICATION_KIND_YOUR_TURN].email
        assert again.quiet_hours.enabled and (again.quiet_hours.start_minute, again.quiet_hours.end_minute) == (
            1320,
            420,
        )
        assert (again.time_zone, again.email_digest, again.digest_hour) == ("Europe/Amsterdam", True, 8)

        for change, reason in (
            ({"time_zone": "Mars/Olympus"}, "BAD_TIME_ZONE"),
            ({"digest_hour": 24}, "BAD_NOTIFICATION_SETTINGS"),
        ):
            with pytest.raises(InvalidArgument) as refused:
                await cas.update_notification_settings(**change)  # type: ignore[arg-type]
            assert refused.value.reason == reason
        assert await cas.notification_settings() == after  # nothing half-written

        await guest.sign_in_as_guest()
        with pytest.raises(TafelError) as refused:
            await guest.set_email("guest@example.org")
        assert refused.value.reason == "EMAIL_NEEDS_ACCOUNT"
        with pytest.raises(TafelError) as refused:
            await guest.start_vacation(hours=2)
        assert refused.value.reason == "VACATION_NEEDS_ACCOUNT"
    finally:
        await cas.close()
        await guest.close()


async def test_an_address_confirmed_with_the_token_from_the_mail(platform: Platform, relay: Relay) -> None:
    address = platform.gateway_addresses[0]
    dee = await account(address, "de")
    stranger = await TafelClient.connect(address)  # no session: the link is the proof
    mailbox = f"{dee.player.username}@example.org"
    try:
        with pytest.raises(InvalidArgument) as refused:
            await dee.set_email("not an address")
        assert refused.value.reason == "BAD_EMAIL"
        pending = await dee.set_email(mailbox, language="nl")
        assert not pending.confirmed and mailbox in (pending.address, pending.pending_address)
        mail = (await relay.wait_for(mailbox))[0]
        token = re.search(r"#/email/confirm\?token=([^\s&]+)", body(mail))
        assert token, body(mail)

        with pytest.raises(NotFound) as unknown:
            await stranger.confirm_email(token.group(1) + "x")
        assert unknown.value.reason == "BAD_EMAIL_TOKEN"
        confirmed = await stranger.confirm_email(token.group(1))
        assert confirmed.username == dee.player.username
        assert confirmed.email.address == mailbox and confirmed.email.confirmed
        assert (await stranger.confirm_email(token.group(1))).email.confirmed  # again: the same
        now = await dee.get_email()
        assert (now.address, now.confirmed, now.pending_address) == (mailbox, True, "")
    finally:
        await dee.close()
        await stranger.close()


def test_the_new_calls_are_retried_but_setting_an_address() -> None:
    from tafel.retry import retried_methods

    names = {(n["service"].rsplit(".", 1)[-1], n["method"]) for n in retried_methods()}
    assert ("NotificationService", "MarkNotificationsRead") in names
    assert ("VacationService", "StartVacation") in names
    assert ("EmailService", "ConfirmEmail") in names
    assert ("EmailService", "SetEmail") not in names  # each try mails a link (3 an hour)
