"""The inbox on a real Redis (gateway/notices/inbox.py, lua/notices/): one notice per id however
often and from however many notifiers; the cap; read and cleared as events on the account's
stream, written with the change. The service over it: test_notices_e2e.py."""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

from tafel.play.v1 import challenges_pb2, notices_pb2

from gateway.auth import Identity
from gateway.events.feed import events_key
from gateway.notices.inbox import GUEST_INBOX_S, KEEP_NOTICES, Inbox, keys_of, notice_id
from gateway.notices.settings import NoticeSettingsStore
from kit.redis.layer import RedisLayer
from kit.redis.replies import pairs

TURN = notices_pb2.NOTIFICATION_KIND_YOUR_TURN


def note(nid: str, kind: int = TURN, game_id: str = "g1") -> notices_pb2.Notification:
    return notices_pb2.Notification(notification_id=nid, kind=kind, game_id=game_id)  # type: ignore[arg-type]


async def events(layer: RedisLayer, player_id: str) -> list[challenges_pb2.AccountEvent]:
    entries: Any = await layer.call("XRANGE", events_key(player_id), "-", "+")
    return [challenges_pb2.AccountEvent.FromString(pairs(flat)[b"e"]) for _, flat in entries]


async def test_the_same_id_makes_one_notice_even_from_many_notifiers_at_once(layer: RedisLayer) -> None:
    player = secrets.token_hex(6)
    told: list[str] = []

    async def hook(player_id: str, notice: notices_pb2.Notification) -> None:
        told.append(notice.notification_id)

    inboxes = [Inbox(layer) for _ in range(4)]  # four gateways
    for inbox in inboxes:
        inbox.hooks.append(hook)
    nid = notice_id("turn", "g1", 7)
    results = await asyncio.gather(*[inbox.notify(player, note(nid)) for inbox in inboxes for _ in range(5)])
    assert sorted(results) == [False] * 19 + [True]
    assert told == [nid]
    page = await inboxes[0].listing(player)
    assert [n.notification_id for n in page.notifications] == [nid]
    assert page.unread == 1 and not page.notifications[0].read
    stream = await events(layer, player)
    assert [e.WhichOneof("kind") for e in stream] == ["notification"]
    assert stream[0].notification.notification_id == nid
    # cleared, and the producer retries late: still not made again
    assert await inboxes[0].clear(player, [nid]) == 0
    assert not await inboxes[1].notify(player, note(nid))
    assert (await inboxes[0].listing(player)).notifications == []


async def test_read_and_cleared_go_on_the_stream_once_with_the_unread_count(layer: RedisLayer) -> None:
    player = secrets.token_hex(6)
    inbox = Inbox(layer)
    for i in range(4):
        assert await inbox.notify(player, note(notice_id("turn", "g", i)))
    page = await inbox.listing(player)
    assert [n.notification_id for n in page.notifications] == [f"turn:g:{i}" for i in (3, 2, 1, 0)]
    assert await inbox.mark_read(player, ["turn:g:1", "turn:g:1", "nope:x"]) == 3
    assert await inbox.mark_read(player, ["turn:g:1"]) == 3  # again: nothing changes, no event
    assert await inbox.clear(player, ["turn:g:0"]) == 2
    assert await inbox.mark_read(player, [], every=True) == 0
    assert await inbox.mark_read(player, [], every=True) == 0
    page = await inbox.listing(player)
    assert [(n.notification_id, n.read) for n in page.notifications] == [
        ("turn:g:3", True),
        ("turn:g:2", True),
        ("turn:g:1", True),
    ]
    assert await inbox.clear(player, [], every=True) == 0
    assert await inbox.clear(player, [], every=True) == 0
    changes = [e.inbox for e in await events(layer, player) if e.HasField("inbox")]
    assert [(c.unread, list(c.read_ids), list(c.cleared_ids), c.all_read, c.all_cleared) for c in changes] == [
        (3, ["turn:g:1"], [], False, False),
        (2, [], ["turn:g:0"], False, False),
        (0, [], [], True, False),
        (0, [], [], False, True),
    ]
    assert (await inbox.listing(player)).notifications == []


async def test_paging_newest_first_and_unread_only(layer: RedisLayer) -> None:
    player = secrets.token_hex(6)
    inbox = Inbox(layer)
    for i in range(7):
        await inbox.notify(player, note(notice_id("turn", "g", i)))
    await inbox.mark_read(player, ["turn:g:5", "turn:g:2"])
    seen: list[str] = []
    token = ""
    while True:
        page = await inbox.listing(player, page_size=3, token=token)
        seen += [n.notification_id for n in page.notifications]
        if not page.next_token:
            break
        token = page.next_token
    assert seen == [f"turn:g:{i}" for i in range(6, -1, -1)]
    unread = await inbox.listing(player, unread_only=True, page_size=2)
    assert [n.notification_id for n in unread.notifications] == ["turn:g:6", "turn:g:4"]
    rest = await inbox.listing(player, unread_only=True, page_size=10, token=unread.next_token)
    assert [n.notification_id for n in rest.notifications] == ["turn:g:3", "turn:g:1", "turn:g:0"]


async def test_the_cap_drops_the_oldest_read_notice_first_then_the_oldest(layer: RedisLayer) -> None:
    player = secrets.token_hex(6)
    inbox = Inbox(layer)
    for i in range(KEEP_NOTICES):
        await inbox.notify(player, note(notice_id("turn", "g", i)))
    await inbox.mark_read(player, ["turn:g:10", "turn:g:20"])
    assert await inbox.notify(player, note("turn:g:new1"))
    assert await inbox.notify(player, note("turn:g:new2"))
    assert await inbox.notify(player, note("turn:g:new3"))  # no read one left: the oldest goes
    kept = [n.notification_id for n in await inbox.all(player)]
    assert len(kept) == KEEP_NOTICES
    assert "turn:g:10" not in kept and "turn:g:20" not in kept and "turn:g:0" not in kept
    assert "turn:g:1" in kept and kept[0] == "turn:g:new3"
    assert await inbox.unread(player) == KEEP_NOTICES
    drops = [e.inbox for e in await events(layer, player) if e.HasField("inbox") and e.inbox.cleared_ids]
    assert [list(d.cleared_ids) for d in drops] == [["turn:g:10"], ["turn:g:20"], ["turn:g:0"]]
    assert drops[-1].unread == KEEP_NOTICES


async def test_a_guests_inbox_expires_and_a_switched_off_kind_is_not_kept(layer: RedisLayer) -> None:
    guest = secrets.token_hex(6)
    inbox = Inbox(layer, NoticeSettingsStore(layer))
    assert await inbox.notify(guest, note("turn:g:1"), guest=True)
    await inbox.notify(guest, note("turn:g:2"), guest=True)
    await inbox.mark_read(guest, ["turn:g:1"])  # the read set is made now: it expires too
    keys = keys_of(guest)
    for key in (*keys.inbox(), keys.seen, keys.seq):
        assert 0 < int(await layer.call("TTL", key)) <= GUEST_INBOX_S, key

    player = secrets.token_hex(6)
    me = Identity(player_id=player, username="someone", guest=False, expires_at=time.time() + 3600)
    off = notices_pb2.NotificationSettings()
    off.preferences.add(kind=TURN, inbox=False)
    await NoticeSettingsStore(layer).update(me, off)
    assert not await inbox.notify(player, note("turn:g:1"))
    assert await inbox.notify(player, note("over:g", kind=notices_pb2.NOTIFICATION_KIND_GAME_OVER))
    assert [n.notification_id for n in (await inbox.listing(player)).notifications] == ["over:g"]
    assert int(await layer.call("TTL", keys_of(player).notices)) == -1  # an account's is kept
