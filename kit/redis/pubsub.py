"""The process's one Redis pub/sub connection: every feature subscribes through it.

    pubsub = PubSub(url); pubsub.start()
    sub = pubsub.subscribe(channel, on_message, on_live=caught_up)   # on_message(channel, payload)
    await sub.ready()          # Redis confirmed it: from here on no message is missed
    ...
    sub.cancel()               # (the last subscriber of a channel unsubscribes it)
    await pubsub.close()

`on_live(again)` runs each time Redis confirms the subscription: `again` is False the first time
and True after a reconnect, when messages may have been lost meanwhile, so a subscriber that
keeps state catches up from where that state lives (a stream, a hash) at the one moment when
reading it leaves no gap. Subscribers of one channel share one Redis subscription. Callbacks run on
the reading task and must not block; one that raises is logged and the others still run.

The connection speaks RESP directly (subscribe/unsubscribe/ping and pushed messages, parsed by
hiredis in bulk): the move path's pub/sub delivery is hot (docs/benchmarks.md), and owning the
connection is what tells exactly when a subscription is live. It reconnects by itself (kit/loops.py
with kit/retry.py's backoff), pings to notice a silent connection, and re-subscribes everything
after a reconnect.

Sharded pub/sub (SSUBSCRIBE, Redis 7 Cluster, issue 17) plugs in at `PubSub._route`: it picks the
connection and the command family of a channel; today every channel goes to the one connection.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from kit.loops import Loop
from kit.redis.cluster import node_urls
from kit.redis.pipe import PARSE_ERRORS, READ_SIZE, RespError, command, open_redis, read_reply, reply_parser
from kit.retry import Backoff

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
# (Sharded channels, issue 17: Kind(b"SSUBSCRIBE", b"SUNSUBSCRIBE", b"ssubscribe", b"smessage").)


class Subscription:
    """One subscriber's interest in a channel (or pattern)."""

    __slots__ = ("_pubsub", "kind", "live", "name", "on_live", "on_message")

    def __init__(self, pubsub: PubSub, name: bytes, kind: Kind, on_message: OnMessage, on_live: OnLive | None):
        self._pubsub = pubsub
        self.name = name
        self.kind = kind
        self.on_message = on_message
        self.on_live = on_live
        self.live = asyncio.Event()  # set while Redis has it confirmed

    async def ready(self, timeout_s: float = CONFIRM_TIMEOUT_S) -> None:
        """Wait until Redis has confirmed the subscription; TimeoutError after `timeout_s`."""
        if not self.live.is_set():
            async with asyncio.timeout(timeout_s):
                await self.live.wait()

    def cancel(self) -> None:
        self._pubsub.unsubscribe(self)


class _Channel:
    """One Redis subscription, shared by every Subscription of its name and kind."""

    __slots__ = ("again", "confirmed", "kind", "name", "subscriptions")

    def __init__(self, name: bytes, kind: Kind) -> None:
        self.name = name
        self.kind = kind
        self.subscriptions: list[Subscription] = []
        self.confirmed = False
        self.again = False  # the next confirmation follows a reconnect


def _safely(callback: Callable[..., None], *args: object) -> None:
    try:
        callback(*args)
    except Exception:  # one subscriber's bug must not stop the others' deliveries
        log.exception("pub/sub callback failed")


class Link:
    """One pub/sub connection and the channels it carries; reconnects and re-subscribes them."""

    def __init__(self, url: str) -> None:
        self.url = url
        # A Redis Cluster broadcasts plain pub/sub to every node: any one will do, the next one
        # after a failed connection (kit/redis/cluster.py).
        self._urls = node_urls(url)
        self.channels: dict[Kind, dict[bytes, _Channel]] = {CHANNEL: {}, PATTERN: {}}
        # Subscriptions sent and not yet confirmed, in order, per kind and name.
        self._waiting: dict[tuple[Kind, bytes], deque[_Channel]] = {}
        self._writer: asyncio.StreamWriter | None = None
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
            channel = channels[subscription.name] = _Channel(subscription.name, subscription.kind)
            channel.subscriptions.append(subscription)
            self._send_subscribe(channel)
            return
        channel.subscriptions.append(subscription)
        if channel.confirmed:  # joining a live subscription: live at once
            subscription.live.set()
            if subscription.on_live is not None:
                asyncio.get_running_loop().call_soon(self._announce, channel, subscription)

    def _announce(self, channel: _Channel, subscription: Subscription) -> None:
        if subscription.on_live is not None and subscription in channel.subscriptions and channel.confirmed:
            _safely(subscription.on_live, False)

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

    def _send_subscribe(self, channel: _Channel) -> None:
        if not self._connected:
            return  # (re)connecting: the connection subscribes every channel when it is up
        self._waiting.setdefault((channel.kind, channel.name), deque()).append(channel)
        self._send(command(channel.kind.subscribe, channel.name))

    def _send(self, data: bytes) -> None:
        writer = self._writer
        if writer is not None and self._connected and not writer.is_closing():
            writer.write(data)

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
        self._waiting.clear()
        self._connected = True
        for channels in self.channels.values():
            for channel in channels.values():
                channel.again = again
                self._send_subscribe(channel)
        pinger = asyncio.get_running_loop().create_task(self._ping(writer))
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
        plain, patterns = self.channels[CHANNEL], self.channels[PATTERN]
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
                        log.warning("pub/sub error", extra={"error": str(reply)})
                    continue
                kind = reply[0]
                if kind == b"message":
                    channel = plain.get(reply[1])
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

    def _deliver(self, channel: _Channel, name: bytes, payload: bytes) -> None:
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
        channel.confirmed = True
        again, channel.again = channel.again, False
        for subscription in list(channel.subscriptions):
            subscription.live.set()
            if subscription.on_live is not None:
                _safely(subscription.on_live, again)


class PubSub:
    """The process's pub/sub: subscriptions by channel or pattern over its connection(s)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._link = Link(url)

    @property
    def client_id(self) -> int | None:
        return self._link.client_id

    @property
    def messages(self) -> int:
        """Messages delivered to subscribers so far."""
        return self._link.messages

    def start(self) -> None:
        """Connect (idempotent; every feature may call it; needs the running loop)."""
        self._link.start()

    async def close(self) -> None:
        await self._link.close()

    def _route(self, name: bytes, kind: Kind) -> tuple[Link, Kind]:
        """The connection and command family a channel goes through: the one place where sharded
        pub/sub (SSUBSCRIBE to the shard owning the channel's slot) will choose."""
        return self._link, kind

    def subscribe(
        self, channel: str | bytes, on_message: OnMessage, *, on_live: OnLive | None = None, pattern: bool = False
    ) -> Subscription:
        """Take `channel`'s messages (a glob pattern's with `pattern=True`) until cancelled; Redis
        confirms it asynchronously (`await subscription.ready()`)."""
        name = channel.encode() if isinstance(channel, str) else channel
        link, kind = self._route(name, PATTERN if pattern else CHANNEL)
        subscription = Subscription(self, name, kind, on_message, on_live)
        link.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        link, _ = self._route(subscription.name, subscription.kind)
        link.remove(subscription)
