"""A Redis Cluster's shard channels (Redis 7): each tagged channel SSUBSCRIBEd on a link to the
master owning its slot (one link per master, the slot map from kit/redis/cluster.py's
ClusterPipe), moved to the new owner when its slot moves (Redis sends `sunsubscribe`, or answers
MOVED) or its master dies (the link breaks; the map is reloaded until a replica has taken over),
its confirmation there running `on_live(True)` as after a reconnect. On Redis 6.2 they go to the
plain link like any channel.
"""

from __future__ import annotations

import asyncio
import time

from redis.crc import key_slot

from kit.loops import Loop
from kit.redis.cluster import ClusterPipe
from kit.redis.pubsub_link import RECONNECT_BACKOFF, SHARD, Channel, Link, Subscription, log

SHARDS_EVERY_S = 30.0  # the shard links' map is checked this often even when nothing broke
UNSETTLED_EVERY_S = 0.25  # ... and this often while a channel has no live link (a failover)


def is_shard_channel(name: bytes) -> bool:
    """A channel with a hash tag (`{...}`, non-empty, Redis's rule) lives in its tag's slot."""
    start = name.find(b"{")
    return start >= 0 and name.find(b"}", start + 1) > start + 1


class Shards:
    """A cluster's tagged channels: on Redis 7 each is SSUBSCRIBEd on a link to its slot's master
    and follows its slot; on 6.2 they go to the plain link like any channel."""

    def __init__(self, url: str, plain: Link) -> None:
        self.plain = plain
        self.map = ClusterPipe(url)  # the slot map (CLUSTER SLOTS) and the server's version
        self.sharded: bool | None = None  # None until the cluster said which version it runs
        self.pending: list[Subscription] = []  # subscribed before that
        self.channels: dict[bytes, Channel] = {}  # every shard channel, placed or not
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
            channel = self.channels[subscription.name] = Channel(subscription.name, SHARD)
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

    def _place(self, channel: Channel, address: str | None) -> None:
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
