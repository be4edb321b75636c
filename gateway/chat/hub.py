"""The fan-out of chat lines to this gateway's watches: ONE reader per channel per gateway.

A channel's reader subscribes to its wake-up channel (the process's one pub/sub), reads the
channel's last id once Redis confirmed the subscription, then on every wake-up (and on every
re-confirmation after a reconnect or a slot move) reads the lines after the last one it read, in
one XRANGE however many watch here, parses each line once and hands it to every local watch. A
watch registers before it reads its own history, so a line is either in that history or handed to
it afterwards (or both: a watch drops ids it has sent already). 1,000 spectators of one game cost
one XRANGE per wake-up per gateway, not one per watcher per line.

Each watching viewer's block and mute lists and chat switch are read once and kept while they
watch here, and re-read when gateway/standing or gateway/people publishes that they changed
(kit/redis/keys.py avoid_channel), so blocking someone mid-stream hides their later lines and
turning chat off quiets the watch at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
from tafel.play.v1 import social_pb2

from gateway.chat.model import Channel
from gateway.chat.store import ChatStore
from kit.errors import Refused
from kit.redis.keys import avoid_channel
from kit.redis.pubsub import PubSub, Subscription
from kit.retry import Backoff
from kit.tasks import spawn

log = logging.getLogger("tafel.gateway.chat")
LINGER_S = 2.0
READY_TIMEOUT_S = 5.0
BATCH = 200
READ_GAP_S = 0.05
END = None  # pushed to every watch when the gateway stops
CHANGED = "changed"  # pushed to a viewer's watches when their lists or chat switch were re-read
Item = list[social_pb2.ChatMessage] | None | str
RETRY = Backoff(first_s=0.05, cap_s=2.0)

ReadAvoided = Callable[[str], Awaitable[tuple[set[str], bool]]]


class Avoided:
    """The ids whose lines a viewer never gets (those they block or mute) and whether they turned
    chat off, kept fresh; every reload puts CHANGED in the inbox of the viewer's watches here (one
    waiting for chat to come back on wakes by it)."""

    def __init__(self, viewer: str, read: ReadAvoided, pubsub: PubSub) -> None:
        self.viewer = viewer
        self.read = read
        self.ids: set[str] = set()
        self.chat_off = False
        self.watches: set[ChatWatch] = set()
        self.users = 0
        self.loading: asyncio.Task[None] | None = None
        self.subscription = pubsub.subscribe(
            avoid_channel(viewer), lambda channel, payload: self.reload(), on_live=lambda again: self.reload()
        )

    def reload(self) -> None:
        previous = self.loading
        self.loading = spawn(self._load(previous), "chat avoid lists", log=log)

    async def _load(self, previous: asyncio.Task[None] | None) -> None:
        if previous is not None and not previous.done():
            with contextlib.suppress(Exception):
                await previous
        for attempt in range(5):
            try:
                self.ids, self.chat_off = await self.read(self.viewer)
                for watch in self.watches:
                    watch.push(CHANGED)
                return
            except Exception:
                log.warning("could not read a viewer's block and mute lists", exc_info=True)
                await asyncio.sleep(RETRY.delay(attempt))

    async def current(self) -> set[str]:
        """The lists, waiting for a reload under way (a block just made applies to later lines)."""
        loading = self.loading
        if loading is not None and not loading.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(loading)
        return self.ids


class ChatWatch:
    """One WatchChat call's inbox: the lines read by its channel's reader, in order, and the
    signals that concern it (END: the gateway stops; CHANGED: the viewer's lists or switch)."""

    def __init__(self, viewer: str) -> None:
        self.viewer = viewer
        self.inbox: asyncio.Queue[Item] = asyncio.Queue()

    def push(self, item: Item) -> None:
        self.inbox.put_nowait(item)

    async def take(self) -> list[Item]:
        """Everything waiting, at least one item: a watch that fell behind catches up in one
        response instead of one per line (one task-free await, no timers)."""
        items = [await self.inbox.get()]
        while not self.inbox.empty():
            items.append(self.inbox.get_nowait())
        return items


class _Channel:
    def __init__(self, channel: Channel, store: ChatStore, pubsub: PubSub) -> None:
        self.channel = channel
        self.store = store
        self.watches: set[ChatWatch] = set()
        self.linger: asyncio.TimerHandle | None = None
        self.wake = asyncio.Event()
        self.ready = asyncio.Event()  # subscribed, and the last id read
        self.last = ""
        self.read_at = 0.0  # when the lines were last read (monotonic)
        self.subscription: Subscription = pubsub.subscribe(
            channel.wake, lambda name, payload: self.wake.set(), on_live=lambda again: self.wake.set()
        )
        self.reader = spawn(self._read(), "chat channel reader", log=log)

    async def _read(self) -> None:
        attempt = 0
        while True:
            try:
                await self.subscription.ready(READY_TIMEOUT_S)
                if not self.ready.is_set():
                    self.last = await self.store.last_id(self.channel)
                    self.ready.set()
                await self.wake.wait()
                # A busy channel is read at most every READ_GAP_S: the lines said meanwhile go to
                # each watch in one response, not one each (1,000 spectators of a lively game cost
                # a response per watch per gap); a quiet channel's line goes out at once.
                wait = self.read_at + READ_GAP_S - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                self.wake.clear()
                self.read_at = time.monotonic()
                while True:
                    lines = await self.store.after(self.channel, self.last, BATCH)
                    if lines:
                        self.last = lines[-1].message_id
                        for watch in self.watches:
                            watch.push(lines)
                    if len(lines) < BATCH:
                        break
                attempt = 0
            except asyncio.CancelledError:
                raise
            except Exception:
                # A Redis outage: read again from the same id once it answers.
                log.warning("chat channel read failed", exc_info=True, extra={"channel": self.channel.key})
                self.wake.set()
                await asyncio.sleep(RETRY.delay(attempt))
                attempt += 1

    def close(self) -> None:
        self.reader.cancel()
        self.subscription.cancel()


class ChatHub:
    def __init__(self, store: ChatStore, pubsub: PubSub, read_avoided: ReadAvoided) -> None:
        self.store = store
        self.pubsub = pubsub
        self.read_avoided = read_avoided
        self._channels: dict[Channel, _Channel] = {}
        self._avoided: dict[str, Avoided] = {}
        self._closed = False

    @property
    def watchers(self) -> int:
        return sum(len(c.watches) for c in self._channels.values())

    @property
    def channels(self) -> int:
        return len(self._channels)

    async def close(self) -> None:
        """Every watch ends (its client resumes on another gateway after its last id)."""
        self._closed = True
        for entry in self._channels.values():
            if entry.linger is not None:
                entry.linger.cancel()
            entry.close()
            for watch in entry.watches:
                watch.push(END)
        for avoided in self._avoided.values():
            avoided.subscription.cancel()

    @contextlib.asynccontextmanager
    async def avoided(self, viewer: str) -> AsyncIterator[Avoided]:
        """The viewer's lists, loaded, kept fresh while held."""
        entry = self._avoided.get(viewer)
        if entry is None:
            entry = self._avoided[viewer] = Avoided(viewer, self.read_avoided, self.pubsub)
            entry.reload()
        entry.users += 1
        try:
            with contextlib.suppress(TimeoutError):
                await entry.subscription.ready(READY_TIMEOUT_S)
            await entry.current()
            yield entry
        finally:
            entry.users -= 1
            if entry.users == 0 and self._avoided.get(viewer) is entry:
                del self._avoided[viewer]
                entry.subscription.cancel()

    @contextlib.asynccontextmanager
    async def watch(self, channel: Channel, viewer: str) -> AsyncIterator[ChatWatch]:
        """A watch registered with the channel's reader, once that reader is live."""
        if self._closed:
            raise Refused(grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", "this gateway is stopping; resume elsewhere")
        entry = self._channels.get(channel)
        if entry is None:
            entry = self._channels[channel] = _Channel(channel, self.store, self.pubsub)
        if entry.linger is not None:
            entry.linger.cancel()
            entry.linger = None
        watch = ChatWatch(viewer)
        entry.watches.add(watch)
        try:
            try:
                await asyncio.wait_for(asyncio.shield(entry.ready.wait()), READY_TIMEOUT_S)
            except TimeoutError:
                raise Refused(
                    grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE", "live chat cannot be followed now; retry"
                ) from None
            yield watch
        finally:
            entry.watches.discard(watch)
            if not entry.watches and not self._closed and self._channels.get(channel) is entry:
                entry.linger = asyncio.get_running_loop().call_later(LINGER_S, self._drop, entry)

    def _drop(self, entry: _Channel) -> None:
        entry.linger = None
        if entry.watches or self._channels.get(entry.channel) is not entry:
            return
        del self._channels[entry.channel]
        entry.close()
