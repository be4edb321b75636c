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

The connection (kit/redis/pubsub_link.py) speaks RESP directly (subscribe/unsubscribe/ping and
pushed messages, parsed by hiredis in bulk): the move path's pub/sub delivery is hot
(docs/benchmarks.md), and owning the connection is what tells exactly when a subscription is
live. It reconnects by itself (kit/loops.py with kit/retry.py's backoff), pings to notice a silent
connection, and re-subscribes everything after a reconnect.
Against redis-py's PubSub taking messages off 100 channels: 0.5 µs of CPU a message against 8.4
(`python -m tools.bench_redis_client`, load ~5 on 2 shared cores, medians of 3 alternated rounds).

On a Redis Cluster (a redis+cluster:// URL) a channel whose name carries a hash tag (a game's
wake-up, `tafel:{gs:k}:g:ID:wake`: the slot of the script that publishes it) is a shard channel.
On Redis 7 it is SSUBSCRIBEd on a link to the master owning its slot (kit/redis/pubsub_shards.py,
one link per master, the slot map from kit/redis/cluster.py's ClusterPipe), and its publishers SPUBLISH it
(kit/redis/scripts.py), so a message goes to that shard only instead of to every node. When its
slot moves (Redis sends `sunsubscribe`, or answers MOVED) or its master dies (the link breaks; the
map is reloaded until a replica has taken over), the channel moves to the new owner and its
confirmation there runs `on_live(True)`, as after a reconnect: watchers catch up from the stream.
Until the cluster has said which version it runs, such subscriptions wait (`ready()` covers it).
On Redis 6.2, and for channels without a tag (the lobby's, published from scripts of other slots),
plain SUBSCRIBE on one connection to any node: the cluster broadcasts plain PUBLISH to every node.
"""

from __future__ import annotations

from kit.redis.cluster import is_cluster_url
from kit.redis.pubsub_link import CHANNEL, PATTERN, Link, OnLive, OnMessage, Subscription
from kit.redis.pubsub_shards import Shards, is_shard_channel

__all__ = ["OnLive", "OnMessage", "PubSub", "Subscription"]


class PubSub:
    """The process's pub/sub: subscriptions by channel or pattern over its connection(s)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._link = Link(url)  # plain channels and patterns (on a cluster: broadcast, any node)
        self._shards = Shards(url, self._link) if is_cluster_url(url) else None

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
        """Whether `Shards` routes it: a tagged channel (not a pattern) on a cluster."""
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
