"""The process's one Redis pub/sub: every feature subscribes through it (one connection; on a
Redis 7 cluster also one per master for the shard channels, below).

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

On a Redis Cluster (a redis+cluster:// URL) a channel whose name carries a hash tag (a game's
wake-up, `tafel:{gs:k}:g:ID:wake`: the slot of the script that publishes it) is a shard channel.
On Redis 7 it is SSUBSCRIBEd on a link to the master owning its slot (`_Shards`, one link per
master, the slot map from kit/redis/cluster.py's ClusterPipe), and its publishers SPUBLISH it
(kit/redis/scripts.py), so a message goes to that shard only instead of to every node. When its
slot moves (Redis sends `sunsubscribe`, or answers MOVED) or its master dies (the link breaks; the
map is reloaded until a replica has taken over), the channel moves to the new owner and its
confirmation there runs `on_live(True)`, as after a reconnect: watchers catch up from the stream.
Until the cluster has said which version it runs, such subscriptions wait (`ready()` covers it).
On Redis 6.2, and for channels without a tag (the lobby's, published from scripts of other slots),
plain SUBSCRIBE on one connection to any node: the cluster broadcasts plain PUBLISH to every node.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from redis.crc import key_slot

from kit.loops import Loop
from kit.redis.cluster import ClusterPipe, is_cluster_url, node_urls
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
SHARDS_EVERY_S = 30.0  # the shard links' map is checked this often even when nothing broke
UNSETTLED_EVERY_S = 0.25  # ... and this often while a channel has no live link (a failover)


def is_shard_channel(name: bytes) -> bool:
    """A channel with a hash tag (`{...}`, non-empty, Redis's rule) lives in its tag's slot."""
    start = name.find(b"{")
    return start >= 0 and name.find(b"}", start + 1) > start + 1


class Subscription:
    """One subscriber's interest in a channel (or pattern)."""

    __slots__ = ("_pubsub", "kind", "live", "name", "on_live", "on_message")  # kind: SHARD once _Shards routes it

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
            _safely(subscription.on_live, False)


def _safely(callback: Callable[..., None], *args: object) -> None:
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
        self.channels: dict[Kind, dict[bytes, _Channel]] = {CHANNEL: {}, PATTERN: {}, SHARD: {}}
        # Subscriptions sent and not yet confirmed, in order, per kind and name.
        self._waiting: dict[tuple[Kind, bytes], deque[_Channel]] = {}
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
            channel = channels[subscription.name] = _Channel(subscription.name, subscription.kind)
            channel.subscriptions.append(subscription)
            self._send_subscribe(channel)
            return
        channel.join(subscription)

    def carry(self, channel: _Channel) -> None:
        """Subscribe `channel` here, subscribers and all (a shard channel new or moved here)."""
        channel.link = self
        channel.confirmed = False
        channel.again = channel.again or channel.ever  # moved: messages may have been missed
        for subscription in channel.subscriptions:
            subscription.live.clear()
        self.channels[channel.kind][channel.name] = channel
        self._send_subscribe(channel)

    def drop(self, channel: _Channel) -> None:
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

    def _send_subscribe(self, channel: _Channel) -> None:
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
        channel.confirmed = channel.ever = True
        again, channel.again = channel.again, False
        for subscription in list(channel.subscriptions):
            subscription.live.set()
            if subscription.on_live is not None:
                _safely(subscription.on_live, again)


class _Shards:
    """A cluster's tagged channels: on Redis 7 each is SSUBSCRIBEd on a link to its slot's master
    and follows its slot; on 6.2 they go to the plain link like any channel."""

    def __init__(self, url: str, plain: Link) -> None:
        self.plain = plain
        self.map = ClusterPipe(url)  # the slot map (CLUSTER SLOTS) and the server's version
        self.sharded: bool | None = None  # None until the cluster said which version it runs
        self.pending: list[Subscription] = []  # subscribed before that
        self.channels: dict[bytes, _Channel] = {}  # every shard channel, placed or not
        self.links: dict[str, Link] = {}  # master "host:port" -> its link
        self._loop = Loop(
            "redis sharded pub/sub", self._step, every_s=SHARDS_EVERY_S, log=log, backoff=RECONNECT_BACKOFF
        )
        self._started = False
        self._closed = False

    @property
    def messages(self) -> int:
        return sum(link.messages for link in self.links.values())

    def start(self) -> None:
        self._started = True
        self._loop.start()
        for link in self.links.values():
            link.start()

    async def close(self) -> None:
        self._closed = True  # a redirection arriving meanwhile opens no new link
        await self._loop.stop()
        links, self.links = list(self.links.values()), {}
        await asyncio.gather(*(link.close() for link in links))
        await self.map.close()

    # -- subscriptions ------------------------------------------------------------------------------

    def add(self, subscription: Subscription) -> None:
        if self.sharded is None:
            self.pending.append(subscription)
        elif not self.sharded:
            self.plain.add(subscription)
        else:
            subscription.kind = SHARD
            channel = self.channels.get(subscription.name)
            if channel is not None:
                channel.join(subscription)
                return
            channel = self.channels[subscription.name] = _Channel(subscription.name, SHARD)
            channel.subscriptions.append(subscription)
            self._place(channel, self.map.owner(key_slot(channel.name)))

    def remove(self, subscription: Subscription) -> None:
        if subscription in self.pending:
            self.pending.remove(subscription)
            return
        if subscription.kind is not SHARD:
            self.plain.remove(subscription)
            return
        channel = self.channels.get(subscription.name)
        if channel is None or subscription not in channel.subscriptions:
            return
        channel.subscriptions.remove(subscription)
        subscription.live.clear()
        if not channel.subscriptions:
            del self.channels[channel.name]
            if channel.link is not None:
                channel.link.drop(channel)

    # -- where each channel goes --------------------------------------------------------------------

    def _link(self, address: str) -> Link:
        link = self.links.get(address)
        if link is None:
            link = self.links[address] = Link(
                self.map.address.node_url(address), on_redirect=self._redirected, on_unsettled=self._loop.wake
            )
            if self._started:
                link.start()
        return link

    def _place(self, channel: _Channel, address: str | None) -> None:
        if self._closed:
            return
        if address is None:  # no owner known (a slot being failed over): the next step looks
            channel.link = None
            channel.again = channel.again or channel.ever
            self._loop.wake()
            return
        self._link(address).carry(channel)

    def _redirected(self, link: Link, name: bytes, target: str | None) -> None:
        """`link`'s node refused `name` (MOVED: to `target`; else to whoever the next map names).
        A channel refused again within UNSETTLED_EVERY_S (CLUSTERDOWN, or nodes that disagree
        mid-migration) waits that long for a fresh map instead of bouncing at network speed."""
        channel = self.channels.get(name)
        if channel is None or channel.link is not link:
            return
        link.drop(channel)
        now = time.monotonic()
        again_soon = now - channel.redirected_at < UNSETTLED_EVERY_S
        channel.redirected_at = now
        if target is not None and not again_soon:
            self._place(channel, target)
            return
        channel.link = None
        channel.again = channel.again or channel.ever
        asyncio.get_running_loop().call_later(UNSETTLED_EVERY_S, self._loop.wake)

    def _unsettled(self) -> bool:
        return any(channel.link is None or not channel.link.connected for channel in self.channels.values())

    async def _step(self) -> float | None:
        """Learn the version once; then reload the map and move every channel whose slot's master
        is not the one its link goes to (after a failover, a migration, a missed sunsubscribe)."""
        if self.sharded is None:
            await self.map.refresh()
            self.sharded = await self.map.sharded_pubsub()
            pending, self.pending = self.pending, []
            for subscription in pending:
                self.add(subscription)
            log.info("redis cluster pub/sub", extra={"sharded": self.sharded})
        if not self.sharded:
            return 3600.0  # nothing to tend: every channel is on the plain link
        await self.map.refresh()
        for channel in list(self.channels.values()):
            owner = self.map.owner(key_slot(channel.name))
            if owner is None:
                continue
            if channel.link is None:
                self._place(channel, owner)
            elif channel.link is not self.links.get(owner):
                channel.link.drop(channel)
                self._place(channel, owner)
        masters = set(self.map.masters())
        for address, link in list(self.links.items()):
            if not link.carries() and address not in masters:  # a dead or demoted master's link
                del self.links[address]
                await link.close()
        return UNSETTLED_EVERY_S if self._unsettled() else None


class PubSub:
    """The process's pub/sub: subscriptions by channel or pattern over its connection(s)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._link = Link(url)  # plain channels and patterns (on a cluster: broadcast, any node)
        self._shards = _Shards(url, self._link) if is_cluster_url(url) else None

    @property
    def client_id(self) -> int | None:
        return self._link.client_id

    @property
    def messages(self) -> int:
        """Messages delivered to subscribers so far."""
        return self._link.messages + (self._shards.messages if self._shards is not None else 0)

    def start(self) -> None:
        """Connect (idempotent; every feature may call it; needs the running loop)."""
        self._link.start()
        if self._shards is not None:
            self._shards.start()

    async def close(self) -> None:
        await self._link.close()
        if self._shards is not None:
            await self._shards.close()

    def _sharded(self, subscription: Subscription) -> bool:
        """Whether `_Shards` routes it: a tagged channel (not a pattern) on a cluster."""
        return self._shards is not None and subscription.kind is not PATTERN and is_shard_channel(subscription.name)

    def subscribe(
        self, channel: str | bytes, on_message: OnMessage, *, on_live: OnLive | None = None, pattern: bool = False
    ) -> Subscription:
        """Take `channel`'s messages (a glob pattern's with `pattern=True`) until cancelled; Redis
        confirms it asynchronously (`await subscription.ready()`)."""
        name = channel.encode() if isinstance(channel, str) else channel
        subscription = Subscription(self, name, PATTERN if pattern else CHANNEL, on_message, on_live)
        if self._shards is not None and self._sharded(subscription):
            self._shards.add(subscription)
        else:
            self._link.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        if self._shards is not None and self._sharded(subscription):
            self._shards.remove(subscription)
        else:
            self._link.remove(subscription)
