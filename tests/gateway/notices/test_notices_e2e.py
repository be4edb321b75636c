"""NotificationService through two real gateways on a real Redis: a notice handed in twice (and at
once from several notifiers) is one notice, on both of an account's clients (one per gateway)
live; read and cleared on one client reach the other; the cap of 500 through the API's pages;
settings with their defaults, every refusal, and the inbox switch; a challenge to a player makes
a CHALLENGE_RECEIVED notice (a retried request, one notice; an open challenge, none); the export
lists the inbox and settings, and erasure removes them and the erased name from others' notices.

The notifier here is an Inbox in the test process on the platform's Redis, as any gateway's
producer would hand a notice in (gateway/notices/inbox.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from tafel.admin.v1 import admin_pb2
from tafel.play.v1 import challenges_pb2, challenges_pb2_grpc, notices_pb2, notices_pb2_grpc, play_pb2

from gateway.events.feed import contacts_key
from gateway.notices.inbox import KEEP_NOTICES, Inbox, notice_id
from gateway.notices.settings import NoticeSettingsStore
from gateway.standing.store import DELETED_NAME
from kit.redis.keys import inbox_named_key
from kit.redis.layer import RedisLayer
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import failure
from tests.gateway.social.streams import Events
from tests.gateway.standing.helpers import PASSWORD, Person, register, sign_in, unique
from tests.gateway.standing.test_moderation_e2e import staff

N = notices_pb2
TURN = N.NOTIFICATION_KIND_YOUR_TURN


def service(person: Person) -> notices_pb2_grpc.NotificationServiceStub:
    return notices_pb2_grpc.NotificationServiceStub(person.channel)


async def listed(person: Person, **fields: Any) -> N.ListNotificationsResponse:
    request = N.ListNotificationsRequest(**fields)
    answer: N.ListNotificationsResponse = await service(person).ListNotifications(
        request, metadata=person.md, timeout=10
    )
    return answer


async def settings_of(person: Person) -> N.NotificationSettings:
    answer: N.GetNotificationSettingsResponse = await service(person).GetNotificationSettings(
        N.GetNotificationSettingsRequest(), metadata=person.md
    )
    return answer.settings


def turn(nid: str, game_id: str = "g-1") -> N.Notification:
    return N.Notification(notification_id=nid, kind=TURN, game_id=game_id, game="connect4")


@pytest.fixture
async def inbox(gw_system: GatewaySystem) -> AsyncIterator[Inbox]:
    layer = RedisLayer.connect(gw_system.redis_url, max_connections=8)
    try:
        yield Inbox(layer, NoticeSettingsStore(layer))
    finally:
        await layer.close()


async def two_clients(gw_system: GatewaySystem, prefix: str) -> tuple[Person, Person]:
    first = await register(gw_system.gateways[0].address, prefix)
    return first, await sign_in(first, gw_system.gateways[1].address)


async def test_one_notice_however_often_and_read_and_cleared_on_every_client(
    gw_system: GatewaySystem, inbox: Inbox
) -> None:
    phone, laptop = await two_clients(gw_system, "inbox")
    player = phone.session.player.player_id
    streams = [await Events(phone).started(), await Events(laptop).started()]
    nid = notice_id("turn", "g-1", 3)
    made = await asyncio.gather(*[inbox.notify(player, turn(nid)) for _ in range(6)])
    assert made.count(True) == 1
    assert not await inbox.notify(player, turn(nid))  # later, again
    assert await inbox.notify(player, turn(notice_id("turn", "g-2", 1), "g-2"))
    for events in streams:
        await events.until(lambda e=events: len(e.of("notification")) == 2)  # type: ignore[misc]
    for person in (phone, laptop):
        page = await listed(person)
        assert [n.notification_id for n in page.notifications] == ["turn:g-2:1", nid]
        assert page.unread == 2 and not any(n.read for n in page.notifications)

    read = await service(laptop).MarkNotificationsRead(
        N.MarkNotificationsReadRequest(notification_ids=[nid, "turn:unknown:1"]), metadata=laptop.md
    )
    assert read.unread == 1
    again = await service(phone).MarkNotificationsRead(
        N.MarkNotificationsReadRequest(notification_ids=[nid]), metadata=phone.md
    )
    assert again.unread == 1  # idempotent: no second event either (counted below)
    for events in streams:
        await events.until(lambda e=events: e.of("inbox"))  # type: ignore[misc]
    assert [n.read for n in (await listed(phone)).notifications] == [False, True]
    assert [n.notification_id for n in (await listed(phone, unread_only=True)).notifications] == ["turn:g-2:1"]

    cleared = await service(phone).ClearNotifications(N.ClearNotificationsRequest(all=True), metadata=phone.md)
    assert cleared.unread == 0
    await service(laptop).ClearNotifications(N.ClearNotificationsRequest(all=True), metadata=laptop.md)
    for events in streams:
        await events.until(lambda e=events: len(e.of("inbox")) >= 2)  # type: ignore[misc]
    # A last change, so every earlier event has surely arrived before counting.
    await inbox.notify(player, turn("turn:g-3:1", "g-3"))
    for events in streams:
        await events.until(lambda e=events: len(e.of("notification")) == 3)  # type: ignore[misc]
        changes = [(c.unread, list(c.read_ids), c.all_cleared) for c in events.of("inbox")]
        assert changes == [(1, [nid], False), (0, [], True)]
    assert [n.notification_id for n in (await listed(laptop)).notifications] == ["turn:g-3:1"]
    for events in streams:
        await events.close()


async def test_the_cap_through_the_pages(gw_system: GatewaySystem, inbox: Inbox) -> None:
    person = await register(gw_system.gateways[1].address, "capped")
    player = person.session.player.player_id
    for start in range(0, KEEP_NOTICES + 5, 50):
        await asyncio.gather(
            *[
                inbox.notify(player, turn(notice_id("turn", "g", i)))
                for i in range(start, min(start + 50, KEEP_NOTICES + 5))
            ]
        )
    seen: list[str] = []
    token = ""
    while True:
        page = await listed(person, page_size=100, page_token=token)
        seen += [n.notification_id for n in page.notifications]
        token = page.next_page_token
        if not token:
            break
    assert len(seen) == KEEP_NOTICES == len(set(seen)) and page.unread == KEEP_NOTICES
    assert len((await listed(person)).notifications) == 50  # the default page
    code, reason = await failure(listed(person, page_size=101))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PAGE_SIZE")
    code, reason = await failure(listed(person, page_token="not-a-token"))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PAGE_TOKEN")
    code, reason = await failure(
        service(person).MarkNotificationsRead(
            N.MarkNotificationsReadRequest(notification_ids=["no spaces"]), metadata=person.md
        )
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_NOTIFICATION_ID")


async def test_settings_defaults_refusals_and_the_inbox_switch(gw_system: GatewaySystem, inbox: Inbox) -> None:
    person = await register(gw_system.gateways[0].address, "settings")
    player = person.session.player.player_id
    defaults = await settings_of(person)
    kinds = [k for k in N.NotificationKind.values() if k]
    assert [p.kind for p in defaults.preferences] == kinds and all(p.inbox for p in defaults.preferences)
    assert {p.kind for p in defaults.preferences if p.email} == {
        N.NOTIFICATION_KIND_TIME_RUNNING_OUT,
        N.NOTIFICATION_KIND_CHALLENGE_RECEIVED,
        N.NOTIFICATION_KIND_ROUND_STARTING_SOON,
        N.NOTIFICATION_KIND_ANNOUNCEMENT,
    }
    assert defaults.time_zone == "" and not defaults.quiet_hours.enabled and defaults.email_digest

    async def update(settings: N.NotificationSettings) -> N.NotificationSettings:
        request = N.UpdateNotificationSettingsRequest(settings=settings)
        answer: N.UpdateNotificationSettingsResponse = await service(person).UpdateNotificationSettings(
            request, metadata=person.md
        )
        return answer.settings

    refused = [
        (N.NotificationSettings(preferences=[N.NoticePreference(kind=99, inbox=True)]), "BAD_NOTIFICATION_SETTINGS"),  # type: ignore[arg-type]
        (
            N.NotificationSettings(preferences=[N.NoticePreference(kind=N.NOTIFICATION_KIND_UNSPECIFIED)]),
            "BAD_NOTIFICATION_SETTINGS",
        ),
        (
            N.NotificationSettings(preferences=[N.NoticePreference(kind=TURN), N.NoticePreference(kind=TURN)]),
            "BAD_NOTIFICATION_SETTINGS",
        ),
        (
            N.NotificationSettings(quiet_hours=N.QuietHours(enabled=True, start_minute=1440)),
            "BAD_NOTIFICATION_SETTINGS",
        ),
        (N.NotificationSettings(quiet_hours=N.QuietHours(enabled=True, end_minute=5000)), "BAD_NOTIFICATION_SETTINGS"),
        (N.NotificationSettings(digest_hour=24), "BAD_NOTIFICATION_SETTINGS"),
        (N.NotificationSettings(time_zone="Mars/Olympus_Mons"), "BAD_TIME_ZONE"),
        (N.NotificationSettings(time_zone="../../etc/passwd"), "BAD_TIME_ZONE"),
        (N.NotificationSettings(time_zone="europe/amsterdam"), "BAD_TIME_ZONE"),
    ]
    for settings, reason in refused:
        assert await failure(update(settings)) == (grpc.StatusCode.INVALID_ARGUMENT, reason), settings
    assert await settings_of(person) == defaults  # nothing half-written

    chosen = N.NotificationSettings(
        preferences=[N.NoticePreference(kind=TURN, inbox=False, email=True)],
        quiet_hours=N.QuietHours(enabled=True, start_minute=22 * 60, end_minute=7 * 60),
        time_zone="Europe/Amsterdam",
        email_digest=False,
        digest_hour=19,
    )
    saved = await update(chosen)
    assert saved == await settings_of(person)
    by_kind = {p.kind: p for p in saved.preferences}
    assert len(by_kind) == len(kinds) and (by_kind[TURN].inbox, by_kind[TURN].email) == (False, True)
    assert by_kind[N.NOTIFICATION_KIND_GAME_OVER].inbox  # kinds left out keep theirs
    assert (saved.time_zone, saved.digest_hour, saved.email_digest) == ("Europe/Amsterdam", 19, False)
    assert saved.quiet_hours.start_minute == 1320 and saved.quiet_hours.end_minute == 420

    # YOUR_TURN is off: not kept, not sent; GAME_OVER still is.
    assert not await inbox.notify(player, turn("turn:g-9:1"))
    over = N.Notification(notification_id="over:g-9", kind=N.NOTIFICATION_KIND_GAME_OVER, game_id="g-9")
    assert await inbox.notify(player, over)
    assert [n.notification_id for n in (await listed(person)).notifications] == ["over:g-9"]
    # A second update naming another kind leaves YOUR_TURN as chosen.
    later = await update(N.NotificationSettings(preferences=[N.NoticePreference(kind=N.NOTIFICATION_KIND_GAME_OVER)]))
    assert {p.kind: p.inbox for p in later.preferences}[TURN] is False


def challenges(person: Person) -> challenges_pb2_grpc.ChallengeServiceStub:
    return challenges_pb2_grpc.ChallengeServiceStub(person.channel)


async def challenge(by: Person, request_id: str, **fields: Any) -> challenges_pb2.Challenge:
    request = challenges_pb2.CreateChallengeRequest(request_id=request_id, game="connect4", **fields)
    answer: challenges_pb2.CreateChallengeResponse = await challenges(by).CreateChallenge(
        request, metadata=by.md, timeout=10
    )
    return answer.challenge


async def test_a_challenge_to_a_player_makes_one_notice(gw_system: GatewaySystem) -> None:
    alice = await register(gw_system.gateways[0].address, "chal")
    bob = await register(gw_system.gateways[1].address, "chald")
    bob_events = await Events(bob).started()
    made = await challenge(alice, "r1", username=bob.name)
    assert (await challenge(alice, "r1", username=bob.name)).challenge_id == made.challenge_id  # a retry
    await bob_events.until(lambda: bob_events.of("notification"))
    note = bob_events.of("notification")[0]
    assert note.kind == N.NOTIFICATION_KIND_CHALLENGE_RECEIVED and note.challenge_id == made.challenge_id
    assert note.player.username == alice.name and note.game == "connect4"
    page = await listed(bob)
    assert [n.notification_id for n in page.notifications] == [note.notification_id] and page.unread == 1
    await challenge(alice, "r2", open=True)  # an open challenge tells nobody's inbox
    assert (await listed(alice)).notifications == []
    assert len((await listed(bob)).notifications) == 1
    await bob_events.close()


async def test_export_and_erasure(gw_system: GatewaySystem) -> None:
    alice = await register(gw_system.gateways[0].address, "erased")
    bob = await register(gw_system.gateways[1].address, "stays")
    alice_id = alice.session.player.player_id
    await challenge(alice, "e1", username=bob.name)  # bob's inbox names alice
    await service(alice).UpdateNotificationSettings(
        N.UpdateNotificationSettingsRequest(settings=N.NotificationSettings(time_zone="Europe/Berlin", digest_hour=7)),
        metadata=alice.md,
    )
    exported = await bob.accounts.ExportMyData(play_pb2.ExportMyDataRequest(), metadata=bob.md)
    document = json.loads(exported.json)["notifications"]
    assert [n["kind"] for n in document["inbox"]] == ["challenge_received"]
    assert document["inbox"][0]["player"]["username"] == alice.name and document["inbox"][0]["read"] is False
    mine = json.loads((await alice.accounts.ExportMyData(play_pb2.ExportMyDataRequest(), metadata=alice.md)).json)
    assert mine["notifications"]["settings"]["time_zone"] == "Europe/Berlin"
    assert mine["notifications"]["settings"]["digest_hour"] == 7

    await alice.accounts.DeleteAccount(play_pb2.DeleteAccountRequest(password=PASSWORD), metadata=alice.md)
    kept = (await listed(bob)).notifications
    assert [n.player.username for n in kept] == [DELETED_NAME]
    assert kept[0].player.player_id != alice_id
    layer = RedisLayer.connect(gw_system.redis_url, max_connections=2)
    try:
        found: list[Any] = [key async for key in layer.client.scan_iter(match=f"*{alice_id}*", count=1000)]
        assert [k for k in found if b"inbox" in k or b"notice" in k] == []
        async for key in layer.client.scan_iter(match=f"*{bob.session.player.player_id}}}:inbox*", count=1000):
            if await layer.client.type(key) == b"hash":
                values: Any = (await layer.client.hgetall(key)).values()
                assert alice_id.encode() not in b"".join(values)

        # The recipient erased: nothing of theirs stays with the player their notice named.
        carol = await register(gw_system.gateways[0].address, "names")
        carol_id = carol.session.player.player_id
        await challenge(carol, "e3", username=bob.name)
        bob_id = bob.session.player.player_id
        assert await layer.call("SISMEMBER", inbox_named_key(carol_id), bob_id)
        await bob.accounts.DeleteAccount(play_pb2.DeleteAccountRequest(password=PASSWORD), metadata=bob.md)
        assert not await layer.call("SISMEMBER", inbox_named_key(carol_id), bob_id)
        assert not await layer.call("SISMEMBER", contacts_key(carol_id), bob_id)
        assert [key async for key in layer.client.scan_iter(match=f"*{bob_id}*", count=1000)] == []
    finally:
        await layer.close()


async def test_a_rename_reaches_the_notices_that_name_the_player(gw_system: GatewaySystem) -> None:
    moderator = await staff(gw_system)
    rude = await register(gw_system.gateways[0].address, "rudename")
    other = await register(gw_system.gateways[1].address, "told")
    await challenge(rude, "n1", username=other.name)
    new_name = unique("polite")
    await moderator.moderation.RenameAccount(
        admin_pb2.RenameAccountRequest(username=rude.name, new_username=new_name, reason="offensive name"),
        metadata=moderator.md,
    )
    kept = (await listed(other)).notifications
    assert [(n.player.player_id, n.player.username) for n in kept] == [(rude.session.player.player_id, new_name)]
