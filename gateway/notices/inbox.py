"""The inbox of one account in Redis (keys: kit/redis/keys.py, "Notices"; scripts: lua/notices/).

Every change is one script in the account's {p:<id>} slot that also appends its AccountEvent to the
account's event stream (the stream gateway/events/feed.py writes, same MAXLEN, expiry and
wake-up), so a notice is never stored without its event or told without being stored, on a single
Redis and on a Cluster alike. What is outside that slot is bookkeeping for erasure and renames
(where a notice names another player), written before the notice: a crash between the two leaves
an entry that points at nothing, never a notice whose name an erasure would miss.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tafel.play.v1 import challenges_pb2, notices_pb2, play_pb2

from gateway.events.feed import KEEP_EVENTS, KEEP_S, contacts_key, events_key, wake_channel
from kit.errors import invalid
from kit.proto_players import replace_player
from kit.redis.keys import (
    inbox_key,
    inbox_mentions_key,
    inbox_named_key,
    inbox_order_key,
    inbox_read_key,
    inbox_seen_key,
    inbox_seq_key,
    inbox_unread_key,
)
from kit.redis.layer import RedisLayer
from kit.redis.replies import text
from kit.redis.scripts import script

log = logging.getLogger("tafel.gateway.notices")

KEEP_NOTICES = 500  # per account; over it the oldest read notice goes, else the oldest
SEEN_MS = 30 * 86_400_000  # a notice id is never stored twice within this (cleared or not)
SEEN_MAX = 5000
GUEST_INBOX_S = 86_400  # a guest's inbox lives about as long as its session
# Ids are made by the platform (notice_id): kinds and ids joined by ':', nothing a key or the
# scripts would mind. Anything else in a request is BAD_NOTIFICATION_ID.
ID_PATTERN = re.compile(r"[A-Za-z0-9_.:|-]{1,200}")

# A hook is told of every new notice once it is stored (and on the event stream).
NoticeHook = Callable[[str, notices_pb2.Notification], Awaitable[None]]


def notice_id(kind: str, *parts: object) -> str:
    """A notification id: the happening's kind and what makes it unique, e.g.
    notice_id("turn", game_id, version). The same happening gives the same id (so a producer that
    retries, or two gateways that both see it, make one notice)."""
    made = ":".join([kind, *(str(p) for p in parts)])
    if not ID_PATTERN.fullmatch(made):
        raise ValueError(f"not a notification id: {made!r}")
    return made


def check_ids(ids: Sequence[str]) -> list[str]:
    for nid in ids:
        if not ID_PATTERN.fullmatch(nid):
            raise invalid(
                "BAD_NOTIFICATION_ID", "a notification id is not one this platform gives", field="notification_ids"
            )
    return list(dict.fromkeys(ids))


@dataclass(frozen=True)
class Keys:
    notices: str
    order: str
    unread: str
    read: str
    seen: str
    seq: str
    events: str

    def inbox(self) -> list[str]:
        return [self.notices, self.order, self.unread, self.read]


def keys_of(player_id: str) -> Keys:
    return Keys(
        notices=inbox_key(player_id),
        order=inbox_order_key(player_id),
        unread=inbox_unread_key(player_id),
        read=inbox_read_key(player_id),
        seen=inbox_seen_key(player_id),
        seq=inbox_seq_key(player_id),
        events=events_key(player_id),
    )


def _prefix(now_ms: int) -> bytes:
    """An AccountEvent with only its time: the script adds the `inbox` field."""
    event = challenges_pb2.AccountEvent()
    event.at.FromMilliseconds(now_ms)
    return event.SerializeToString()


def _change(player_id: str, every: bool, ids: list[str]) -> list[Any]:
    """The arguments of notices/read and notices/clear."""
    now_ms = int(time.time() * 1000)
    return [_prefix(now_ms), KEEP_EVENTS, KEEP_S, wake_channel(player_id), "1" if every else "0", *ids]


@dataclass(frozen=True)
class Page:
    notifications: list[notices_pb2.Notification]
    next_token: str
    unread: int


class Inbox:
    """The one way every feature hands a notice in (`notify`), and the inbox's reads and changes
    (NotificationService).

    `settings` (optional, a NoticeSettingsStore): a kind whose inbox switch is off is not kept.
    `hooks`: called with (player id, notice) after a new notice is stored; a hook's failure is
    logged, never the notifier's."""

    def __init__(self, redis: RedisLayer, settings: Any = None) -> None:
        self.redis = redis
        self.settings = settings
        self.hooks: list[NoticeHook] = []

    # -- handing a notice in -----------------------------------------------------------------------

    async def notify(self, player_id: str, note: notices_pb2.Notification, *, guest: bool = False) -> bool:
        """Store `note` in the player's inbox and send it on their event stream, once per
        note.notification_id (the same id from two gateways at once, or again later, makes one
        notice). True when the notice is new; False when seen before or when the player turned
        that kind's inbox off. `guest`: the inbox expires a day after its last notice. Redis errors
        propagate (the caller decides whether to retry: a retry is safe)."""
        if not ID_PATTERN.fullmatch(note.notification_id):
            raise ValueError(f"not a notification id: {note.notification_id!r}")
        if self.settings is not None and not await self.settings.wants_inbox(player_id, note.kind):
            return False
        stored = notices_pb2.Notification()
        stored.CopyFrom(note)
        stored.read = False
        if not stored.HasField("at"):
            stored.at.GetCurrentTime()
        now_ms = int(time.time() * 1000)
        event = challenges_pb2.AccountEvent(notification=stored)
        event.at.FromMilliseconds(now_ms)
        named = stored.player.player_id
        if named and named != player_id:
            # Where the named player is found again (erased or renamed): other slots, so first; a
            # crash before the notice leaves an entry that names nothing, never the other way.
            book: list[Any] = [
                ("SADD", inbox_named_key(named), player_id),
                ("SADD", inbox_mentions_key(player_id), named),
                ("SADD", contacts_key(named), player_id),
                ("EXPIRE", contacts_key(named), KEEP_S),
            ]
            if guest:
                book.append(("EXPIRE", inbox_mentions_key(player_id), GUEST_INBOX_S))
            await self.redis.many(book)
        keys = keys_of(player_id)
        new, _unread = await self.redis.run(
            script("notices/notify"),
            [keys.notices, keys.order, keys.unread, keys.read, keys.seen, keys.seq, keys.events],
            [
                stored.notification_id,
                stored.SerializeToString(),
                event.SerializeToString(),
                _prefix(now_ms),
                now_ms,
                KEEP_NOTICES,
                SEEN_MS,
                SEEN_MAX,
                KEEP_EVENTS,
                KEEP_S,
                wake_channel(player_id),
                GUEST_INBOX_S if guest else 0,
            ],
        )
        if not int(new):
            return False
        for hook in list(self.hooks):
            try:
                await hook(player_id, stored)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("a notice hook failed", extra={"notification_id": stored.notification_id})
        return True

    # -- reading -------------------------------------------------------------------------------------

    async def unread(self, player_id: str) -> int:
        return int(await self.redis.call("ZCARD", inbox_unread_key(player_id)))

    async def listing(self, player_id: str, *, unread_only: bool = False, page_size: int = 50, token: str = "") -> Page:
        """Newest first; `token` is the place of the last notice of the page before."""
        keys = keys_of(player_id)
        index = keys.unread if unread_only else keys.order
        top = f"({int(token)}" if token else "+inf"
        ids_scores, unread_count = await self.redis.many(
            [
                ("ZREVRANGEBYSCORE", index, top, "-inf", "WITHSCORES", "LIMIT", 0, page_size + 1),
                ("ZCARD", keys.unread),
            ]
        )
        pairs = [(text(ids_scores[i]), int(float(ids_scores[i + 1]))) for i in range(0, len(ids_scores), 2)]
        more = len(pairs) > page_size
        pairs = pairs[:page_size]
        if not pairs:
            return Page([], "", int(unread_count))
        ids = [nid for nid, _ in pairs]
        raw, unread_flags = await self.redis.many([("HMGET", keys.notices, *ids), ("ZMSCORE", keys.unread, *ids)])
        notes: list[notices_pb2.Notification] = []
        for blob, flag in zip(raw, unread_flags, strict=True):
            if blob is None:  # cleared between the two reads
                continue
            note = notices_pb2.Notification.FromString(blob)
            note.read = flag is None
            notes.append(note)
        return Page(notes, str(pairs[-1][1]) if more else "", int(unread_count))

    async def all(self, player_id: str) -> list[notices_pb2.Notification]:
        """Every kept notice, newest first (the data export)."""
        found: list[notices_pb2.Notification] = []
        token = ""
        while True:
            page = await self.listing(player_id, page_size=100, token=token)
            found += page.notifications
            if not page.next_token:
                return found
            token = page.next_token

    # -- changing ------------------------------------------------------------------------------------

    async def mark_read(self, player_id: str, ids: Sequence[str], *, every: bool = False) -> int:
        """Mark notices read (the ids kept among `ids`, or all); the unread count after it."""
        wanted = [] if every else check_ids(ids)
        if not every and not wanted:
            return await self.unread(player_id)
        keys = keys_of(player_id)
        return int(
            await self.redis.run(
                script("notices/read"), [*keys.inbox(), keys.events], _change(player_id, every, wanted)
            )
        )

    async def clear(self, player_id: str, ids: Sequence[str], *, every: bool = False) -> int:
        """Remove notices (the ids kept among `ids`, or all); the unread count after it."""
        wanted = [] if every else check_ids(ids)
        if not every and not wanted:
            return await self.unread(player_id)
        keys = keys_of(player_id)
        return int(
            await self.redis.run(
                script("notices/clear"), [*keys.inbox(), keys.events], _change(player_id, every, wanted)
            )
        )

    # -- erasure -------------------------------------------------------------------------------------

    async def erase(self, player_id: str) -> None:
        """The player's inbox, gone, and their id from the bookkeeping of those their notices named;
        their name in others' notices is replaced by `replace_player` first (erasure calls both)."""
        keys = keys_of(player_id)
        named = await self.redis.call("SMEMBERS", inbox_mentions_key(player_id))
        commands: list[Any] = [("SREM", inbox_named_key(text(other)), player_id) for other in named]
        commands += [("SREM", contacts_key(text(other)), player_id) for other in named]
        gone = (*keys.inbox(), keys.seen, keys.seq, inbox_named_key(player_id), inbox_mentions_key(player_id))
        await self.redis.many([*commands, *[("DEL", key) for key in gone]])

    async def replace_player(self, player_id: str, new: play_pb2.Player, *, erase: bool = False) -> None:
        """Every kept notice in others' inboxes that names the player names `new` instead (a rename,
        or an erasure's placeholder: `erase` also forgets where the player was named)."""
        owners = await self.redis.call("SMEMBERS", inbox_named_key(player_id))
        for owner in owners:
            notices = inbox_key(text(owner))
            flat = await self.redis.call("HGETALL", notices)
            rewritten: list[Any] = []
            for i in range(0, len(flat), 2):
                if player_id.encode() not in flat[i + 1]:
                    continue
                note = notices_pb2.Notification.FromString(flat[i + 1])
                if replace_player(note, player_id, new):
                    rewritten += [flat[i], note.SerializeToString()]
            if rewritten:
                await self.redis.run(script("notices/rewrite"), [notices], rewritten)
        if erase:
            forget: list[Any] = [("SREM", inbox_mentions_key(text(owner)), player_id) for owner in owners]
            await self.redis.many([*forget, ("DEL", inbox_named_key(player_id))])
