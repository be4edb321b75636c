"""One Redis pub/sub connection (kit/redis/pubsub.py's PubSub is the front): its RESP protocol
(subscribe, unsubscribe and ping sent, confirmations and pushed messages parsed by hiredis in
bulk), reconnecting with backoff and subscribing everything again, and each channel's
subscribers. A Link speaks plain, pattern or (to one cluster master) shard subscriptions; which
master a shard channel's link is, is kit/redis/pubsub_shards.py's.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from redis.crc import key_slot

from kit.flag import Flag
from kit.loops import Loop
from kit.redis.cluster import node_urls
from kit.redis.pipe import PARSE_ERRORS, READ_SIZE, RespError, command, open_redis, read_reply, reply_parser
from kit.retry import Backoff
from kit.tasks import spawn

log = logging.getLogger("tafel.redis.pubsub")

OnMessage = Callable[[bytes, bytes], None]  # (channel, payload)
OnLive = Callable[[bool], None]  # (again: confirmed after a reconnect)

CONNECT_TIMEOUT_S = 5.0
CONFIRM_TIMEOUT_S = 5.0
PING_EVERY_S = 15.0
RECONNECT_BACKOFF = Backoff(first_s=0.05, cap_s=2.0)
# A connection that failed or broke: reconnect with backoff (kit/loops.py logs the outage once).
LOST = (OSError, asyncio.IncompleteReadError, ValueError, *PARSE_ERRORS)


@dataclass(frozen=True)
class Kind:
    """A family of subscribe commands and the replies that go with it."""

    subscribe: bytes
    unsubscribe: bytes
    confirmation: bytes  # the reply kind confirming a subscription
    message: bytes  # the reply kind of a message


CHANNEL = Kind(b"SUBSCRIBE", b"UNSUBSCRIBE", b"subscribe", b"message")
PATTERN = Kind(b"PSUBSCRIBE", b"PUNSUBSCRIBE", b"psubscribe", b"pmessage")  # messages name the channel too
SHARD = Kind(b"SSUBSCRIBE", b"SUNSUBSCRIBE", b"ssubscribe", b"smessage")  # Redis 7 Cluster


class Unsubscribing(Protocol):
    def unsubscribe(self, subscription: Subscription) -> None: ...


class Subscription:
    """One subscriber's interest in a channel (or pattern)."""

    __slots__ = ("_pubsub", "kind", "live", "name", "on_live", "on_message")  # kind: SHARD once Shards routes it

    def __init__(self, pubsub: Unsubscribing, name: bytes, kind: Kind, on_message: OnMessage, on_live: OnLive | None):
        self._pubsub = pubsub
        self.name = name
        self.kind = kind
        self.on_message = on_message
        self.on_live = on_live
        self.live = Flag()  # set while Redis has it confirmed (one per stream held: no Event's deque)

    async def ready(self, timeout_s: float = CONFIRM_TIMEOUT_S) -> None:
        """Wait until Redis has confirmed the subscription; TimeoutError after `timeout_s`."""
        if not self.live.is_set():
            async with asyncio.timeout(timeout_s):
                await self.live.wait()

    def cancel(self) -> None:
        self._pubsub.unsubscribe(self)


class Channel:
    """One Redis subscription, shared by every Subscription of its name and kind."""

    __slots__ = ("again", "confirmed", "ever", "kind", "link", "name", "redirected_at", "subscriptions")

    def __init__(self, name: bytes, kind: Kind) -> None:
        self.name = name
        self.kind = kind
        self.subscriptions: list[Subscription] = []
        self.confirmed = False
        self.again = False  # the next confirmation follows a reconnect (or a move)
        self.ever = False  # confirmed once: a later confirmation may have missed messages
        self.link: Link | None = None  # a shard channel's link now (None: looking for its owner)
        self.redirected_at = 0.0  # (monotonic) a shard channel's last refusal

    def join(self, subscription: Subscription) -> None:
        """A further subscriber of this channel: live at once when the channel is."""
        self.subscriptions.append(subscription)
        if self.confirmed:
            subscription.live.set()
            if subscription.on_live is not None:
                asyncio.get_running_loop().call_soon(self._announce, subscription)

    def _announce(self, subscription: Subscription) -> None:
        if subscription.on_live is not None and subscription in self.subscriptions and self.confirmed:
            safely(subscription.on_live, False)


def safely(callback: Callable[..., None], *args: object) -> None:
    try:
        callback(*args)
    except Exception:  # one subscriber's bug must not stop the others' deliveries
        log.exception("pub/sub callback failed")


# A shard link's channel answered with a redirection: (link, channel, the node named, if any).
OnRedirect = Callable[["Link", bytes, str | None], None]


class Link:
    """One pub/sub connection and the channels it carries; reconnects and re-subscribes them."""

    def __init__(
        self, url: str, *, on_redirect: OnRedirect | None = None, on_unsettled: Callable[[], None] | None = None
    ) -> None:
        self.url = url
        # A Redis Cluster broadcasts plain pub/sub to every node: any one will do, the next one
        # after a failed connection (kit/redis/cluster.py). A shard link is given one node's URL.
        self._urls = node_urls(url)
        self._on_redirect = on_redirect
        self._on_unsettled = on_unsettled  # its channels may belong elsewhere now: check the map
        self.channels: dict[Kind, dict[bytes, Channel]] = {CHANNEL: {}, PATTERN: {}, SHARD: {}}
        # Subscriptions sent and not yet confirmed, in order, per kind and name.
        self._waiting: dict[tuple[Kind, bytes], deque[Channel]] = {}
        self._writer: asyncio.StreamWriter | None = None
        self._event_loop: asyncio.AbstractEventLoop | None = None
        self._outgoing: list[bytes] | None = None  # commands for this tick's write (`_send`)
        self._connected = False
        self._loop = Loop(
            "redis pub/sub", self._connection, every_s=1.0, log=log, backoff=RECONNECT_BACKOFF, outages=LOST
        )
        self._closed = False
        self._last_reply = 0.0
        self.messages = 0
        self.connects = 0
        self.client_id: int | None = None  # the connection's Redis client id (tests kill it)
        self._loop_attempts = 0  # connections tried, to go round a cluster's nodes

    @property
    def connected(self) -> bool:
        return self._connected

    def start(self) -> None:
        if not self._closed:
            self._loop.start()

    async def close(self) -> None:
        self._closed = True  # for good: a feature's late start() does not reopen it
        await self._loop.stop()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    # -- subscriptions ------------------------------------------------------------------------------

    def add(self, subscription: Subscription) -> None:
        channels = self.channels[subscription.kind]
        channel = channels.get(subscription.name)
        if channel is None:
            channel = channels[subscription.name] = Channel(subscription.name, subscription.kind)
            channel.subscriptions.append(subscription)
            self._send_subscribe(channel)
            return
        channel.join(subscription)

    def carry(self, channel: Channel) -> None:
        """Subscribe `channel` here, subscribers and all (a shard channel new or moved here)."""
        channel.link = self
        channel.confirmed = False
        channel.again = channel.again or channel.ever  # moved: messages may have been missed
        for subscription in channel.subscriptions:
            subscription.live.clear()
        self.channels[channel.kind][channel.name] = channel
        self._send_subscribe(channel)

    def drop(self, channel: Channel) -> None:
        """Stop carrying `channel` (moved elsewhere, or its last subscriber left). A confirmation
        still on its way is ignored (`_confirmed` checks identity)."""
        if self.channels[channel.kind].get(channel.name) is channel:
            del self.channels[channel.kind][channel.name]
            self._send(command(channel.kind.unsubscribe, channel.name))  # a MOVED answer is ignored
        channel.confirmed = False
        if channel.link is self:
            channel.link = None

    def carries(self) -> bool:
        return any(self.channels.values())

    def remove(self, subscription: Subscription) -> None:
        channels = self.channels[subscription.kind]
        channel = channels.get(subscription.name)
        if channel is None or subscription not in channel.subscriptions:
            return
        channel.subscriptions.remove(subscription)
        subscription.live.clear()
        if not channel.subscriptions:
            del channels[channel.name]
            self._send(command(channel.kind.unsubscribe, channel.name))

    def _send_subscribe(self, channel: Channel) -> None:
        if not self._connected:
            return  # (re)connecting: the connection subscribes every channel when it is up
        self._waiting.setdefault((channel.kind, channel.name), deque()).append(channel)
        self._send(command(channel.kind.subscribe, channel.name))

    def _send(self, data: bytes) -> None:
        """Queue a command for this tick's one write: a game start or end (un)subscribes a
        channel per watcher, and one write per command cost a system call each."""
        writer, loop = self._writer, self._event_loop
        if writer is None or loop is None or not self._connected or writer.is_closing():
            return
        batch = self._outgoing
        if batch is None:
            batch = self._outgoing = []
            loop.call_soon(self._flush, writer, batch)
        batch.append(data)

    def _flush(self, writer: asyncio.StreamWriter, batch: list[bytes]) -> None:
        if self._outgoing is batch:
            self._outgoing = None
        # Meant for a connection that has gone: the next one subscribes every channel itself.
        if writer is self._writer and self._connected and not writer.is_closing():
            writer.write(b"".join(batch))

    # -- the connection -----------------------------------------------------------------------------

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        url = self._urls[self._loop_attempts % len(self._urls)]
        self._loop_attempts += 1
        reader, writer = await open_redis(url, select_db=False)  # pub/sub ignores databases
        try:
            writer.write(command("CLIENT", "ID"))
            reply = await read_reply(reader)
        except BaseException:
            writer.close()
            raise
        self.client_id = reply if isinstance(reply, int) else None
        return reader, writer

    async def _connection(self) -> float:
        """One connection's life (a step of the Loop): connect, subscribe everything, read until it
        breaks (raising one of LOST, so the Loop backs off and calls again)."""
        reader, writer = await asyncio.wait_for(self._open(), CONNECT_TIMEOUT_S)
        self._loop.healthy()
        again = self.connects > 0
        self.connects += 1
        self._writer = writer
        self._event_loop = asyncio.get_running_loop()
        self._outgoing = None  # a batch still due for the last connection stays with it
        self._waiting.clear()
        self._connected = True
        for channels in self.channels.values():
            for channel in list(channels.values()):
                channel.again = channel.again or again
                self._send_subscribe(channel)
        # A pinger that fails closes the connection: the Loop makes a new one, with a new pinger,
        # rather than keep a connection nothing checks.
        pinger = spawn(self._ping(writer), "pub/sub ping", log=log, on_failure=lambda _: writer.close())
        try:
            await self._read(reader)
        finally:
            pinger.cancel()
            self._connected = False
            self._writer = None
            writer.close()
            for channels in self.channels.values():
                for channel in channels.values():
                    channel.confirmed = False
                    for subscription in channel.subscriptions:
                        subscription.live.clear()
            if self._on_unsettled is not None and not self._closed:
                self._on_unsettled()
        return 0.0

    async def _ping(self, writer: asyncio.StreamWriter) -> None:
        while True:
            await asyncio.sleep(PING_EVERY_S)
            sent = time.monotonic()
            self._send(command("PING"))
            await asyncio.sleep(PING_EVERY_S / 2)
            if self._last_reply < sent:
                log.warning("pub/sub connection silent; reconnecting")
                writer.close()
                return

    async def _read(self, reader: asyncio.StreamReader) -> None:
        parser = reply_parser()
        plain, patterns, shards = self.channels[CHANNEL], self.channels[PATTERN], self.channels[SHARD]
        while True:
            data = await reader.read(READ_SIZE)
            if not data:
                raise ConnectionError("redis closed the connection")
            parser.feed(data)
            self._last_reply = time.monotonic()
            # Every reply already here is handled without another await (the hot path).
            while (reply := parser.gets()) is not False:
                if type(reply) is not list or not reply:
                    if isinstance(reply, RespError):
                        self._refused(reply)
                    continue
                kind = reply[0]
                if kind == b"message":
                    channel = plain.get(reply[1])
                    if channel is not None:
                        self._deliver(channel, reply[1], reply[2])
                elif kind == b"smessage":
                    channel = shards.get(reply[1])
                    if channel is not None:
                        self._deliver(channel, reply[1], reply[2])
                elif kind == b"pmessage":
                    channel = patterns.get(reply[1])
                    if channel is not None:
                        self._deliver(channel, reply[2], reply[3])
                elif kind == b"subscribe":
                    self._confirmed(CHANNEL, reply[1])
                elif kind == b"psubscribe":
                    self._confirmed(PATTERN, reply[1])
                elif kind == b"ssubscribe":
                    self._confirmed(SHARD, reply[1])
                elif kind == b"sunsubscribe":
                    self._evicted(reply[1])

    def _evicted(self, name: bytes) -> None:
        """A `sunsubscribe` for a live shard channel is Redis's (our own SUNSUBSCRIBE removed the
        channel first, and a newer one of the name is not confirmed before this reply): its slot
        left this node. Ask again here: the answer is MOVED to the new owner, or a confirmation
        where the node is its shard's replica now (a manual failover: a replica gets its shard's
        messages too), and have the map checked, which moves it to the master."""
        channel = self.channels[SHARD].get(name)
        if channel is None or not channel.confirmed:
            return
        channel.confirmed = False
        channel.again = True
        for subscription in channel.subscriptions:
            subscription.live.clear()
        self._send_subscribe(channel)
        if self._on_unsettled is not None:
            self._on_unsettled()

    def _refused(self, error: RespError) -> None:
        """An error answers a subscribe command in order; on a shard link it is a redirection of
        an SSUBSCRIBE (or of a SUNSUBSCRIBE, whose channel is already gone: nothing waits for it)."""
        kind, _, rest = str(error).partition(" ")
        waiting = [key for key in self._waiting if key[0] is SHARD]
        if self._on_redirect is None or not waiting:
            if self._on_redirect is None or kind != "MOVED":  # (MOVED: a moved channel's SUNSUBSCRIBE)
                log.warning("pub/sub error", extra={"error": str(error)})
            return
        target: str | None = None
        if kind == "MOVED":  # MOVED <slot> <host:port>: every channel of that slot waiting here
            slot_text, _, target = rest.partition(" ")
            names = [name for _, name in waiting if slot_text.isdigit() and key_slot(name) == int(slot_text)]
        else:  # ASK / TRYAGAIN / CLUSTERDOWN: the oldest one waiting; placed again after a fresh map
            names = [waiting[0][1]]
        for name in names:
            queue = self._waiting.pop((SHARD, name))
            channel = queue.popleft()
            if queue:
                self._waiting[(SHARD, name)] = queue
            if self.channels[SHARD].get(name) is channel:
                self._on_redirect(self, name, target or None)

    def _deliver(self, channel: Channel, name: bytes, payload: bytes) -> None:
        self.messages += 1
        for subscription in channel.subscriptions:
            try:
                subscription.on_message(name, payload)
            except Exception:  # one subscriber's bug must not stop the others' deliveries
                log.exception("pub/sub message handler failed", extra={"channel": name.decode(errors="replace")})

    def _confirmed(self, kind: Kind, name: bytes) -> None:
        waiting = self._waiting.get((kind, name))
        if not waiting:
            return
        channel = waiting.popleft()
        if not waiting:
            del self._waiting[(kind, name)]
        if self.channels[kind].get(name) is not channel:
            return  # unsubscribed meanwhile (a newer subscription of the name waits its own turn)
        channel.confirmed = channel.ever = True
        again, channel.again = channel.again, False
        for subscription in list(channel.subscriptions):
            subscription.live.set()
            if subscription.on_live is not None:
                safely(subscription.on_live, again)
