"""Redis Cluster behind the same RedisLayer: a `redis+cluster://` URL, redis-py's cluster client for
`.client`, and ClusterPipe — one pipelined connection (kit/redis/pipe.py) per master, each command
sent to the master of its first key's slot — for `.run/.call/.many`: redis-py's cluster client
makes a call per connection as its single-Redis client does, which costs ~20x the CPU a call of a
pipelined connection (kit/redis/pipe.py, `python -m tools.bench_redis_client`).

URL: `redis+cluster://[user:password@]host:port,host:port,.../` (`rediss+cluster://` for TLS); any
reachable nodes will do, the rest of the cluster is learnt from CLUSTER SLOTS. Database 0 only
(Redis Cluster has no other).

Redirections and outages, as the cluster spec asks of a client:
- MOVED: the slot lives elsewhere now; remember the new owner, reload the whole map (others moved
  with it, in the background) and resend there.
- ASK: the slot is being migrated and this key already left: ASKING + the command, once, on the
  target (a throwaway connection, so nothing can slip between the two).
- TRYAGAIN / CLUSTERDOWN: the slot is mid-migration or the cluster is electing: retry with a short
  backoff until the call's budget is spent.
- A master that cannot be reached (the command was never sent): reload the map from any other node
  and retry until the budget is spent; that covers a failover, whose replica takes over within
  cluster-node-timeout plus an election. A connection lost with commands in flight fails them as on
  a single Redis when they write (they may have run; callers answer UNAVAILABLE and clients retry
  by request id); reads are resent like the rest.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast
from urllib.parse import quote, unquote

from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from kit.redis.pipe import RedisPipe, command, open_redis, read_reply
from kit.tasks import spawn

SCHEMES = ("redis+cluster", "rediss+cluster")
# Commands whose replies mean the same on every master: sent to all (scripts must be loaded where
# their keys are; a flush must reach every shard).
_EVERY_MASTER = frozenset({b"SCRIPT", b"FLUSHALL", b"FLUSHDB", b"FUNCTION"})
# Commands without a key: any master answers.
_KEYLESS = frozenset({b"PING", b"ECHO", b"TIME", b"INFO", b"PUBLISH", b"CLUSTER", b"COMMAND", b"CONFIG", b"DBSIZE"})
_SCRIPTS = frozenset({b"EVAL", b"EVALSHA", b"EVAL_RO", b"EVALSHA_RO", b"FCALL", b"FCALL_RO"})
# Reads that may be resent when their connection died with them in flight (a write may have run).
_READS = frozenset(
    {
        b"GET",
        b"MGET",
        b"HGET",
        b"HMGET",
        b"HGETALL",
        b"HEXISTS",
        b"HLEN",
        b"EXISTS",
        b"TTL",
        b"PTTL",
        b"TYPE",
        b"LRANGE",
        b"LLEN",
        b"LINDEX",
        b"SMEMBERS",
        b"SISMEMBER",
        b"SCARD",
        b"ZRANGE",
        b"ZRANGEBYSCORE",
        b"ZREVRANGE",
        b"ZREVRANGEBYSCORE",
        b"ZSCORE",
        b"ZCARD",
        b"ZCOUNT",
        b"ZRANK",
        b"XRANGE",
        b"XREVRANGE",
        b"XLEN",
        b"STRLEN",
        b"EVALSHA_RO",
        b"EVAL_RO",
    }
)
_REDIRECTS = frozenset({"MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN"})
_MAX_REDIRECTS = 16  # a slot bouncing more than this is a broken cluster, not a migration


def is_cluster_url(url: str) -> bool:
    return url.split("://", 1)[0].lower() in SCHEMES


@dataclass(frozen=True)
class ClusterAddress:
    nodes: tuple[tuple[str, int], ...]
    username: str
    password: str
    tls: bool

    @classmethod
    def parse(cls, url: str) -> ClusterAddress:
        scheme, sep, rest = url.partition("://")
        if not sep or scheme.lower() not in SCHEMES:
            raise ValueError(f"not a Redis Cluster URL (redis+cluster://host:port,...): {url!r}")
        netloc = rest.split("/", 1)[0].split("?", 1)[0]
        auth, at, hosts = netloc.rpartition("@")
        username, _, password = auth.partition(":") if at else ("", "", "")
        nodes: list[tuple[str, int]] = []
        for part in hosts.split(","):
            host, colon, port = part.strip().rpartition(":")
            if not colon or not port.isdigit() or not host:
                raise ValueError(f"Redis Cluster URL: {part!r} is not host:port")
            nodes.append((host.strip("[]"), int(port)))
        return cls(tuple(nodes), unquote(username), unquote(password), scheme.lower() == "rediss+cluster")

    def node_url(self, address: str) -> str:
        """A plain redis:// URL of one node ("host:port"), with this cluster's credentials."""
        auth = f"{quote(self.username)}:{quote(self.password)}@" if self.password else ""
        return f"{'rediss' if self.tls else 'redis'}://{auth}{address}/0"

    def seeds(self) -> list[str]:
        return [f"{host}:{port}" for host, port in self.nodes]


def node_urls(url: str) -> list[str]:
    """Plain redis:// URLs of a cluster URL's nodes ([url] itself when it names one server): where
    a connection that needs one node (plain pub/sub, which a cluster broadcasts) may go."""
    if not is_cluster_url(url):
        return [url]
    address = ClusterAddress.parse(url)
    return [address.node_url(seed) for seed in address.seeds()]


def cluster_client(url: str, *, max_connections: int = 256) -> Redis:
    """redis-py's cluster client for `.client`. Typed as Redis: it answers the same commands, so
    features are written once; what it cannot do (a transaction or a multi-key command across
    slots) fails loudly with CROSSSLOT or a RedisClusterException, and the cluster tests find it."""
    address = ClusterAddress.parse(url)
    client = RedisCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in address.nodes],
        username=address.username or None,
        password=address.password or None,
        ssl=address.tls,
        max_connections=max_connections,  # per node
        socket_connect_timeout=2,
        socket_timeout=5,
        # While a failover is under way some slots have no master: the others keep working.
        require_full_coverage=False,
    )
    return cast(Redis, client)


def cluster_url_of(client: Any) -> str:
    """The URL of a redis-py RedisCluster's nodes (RedisLayer.around on a cluster client)."""
    password = client.connection_kwargs.get("password") or ""
    username = client.connection_kwargs.get("username") or ""
    auth = f"{quote(username)}:{quote(password)}@" if password else ""
    scheme = "rediss+cluster" if client.connection_kwargs.get("ssl") else "redis+cluster"
    # Before its first command the client knows only its startup nodes.
    known = client.get_nodes() or list(client.nodes_manager.startup_nodes.values())
    nodes = ",".join(f"{node.host}:{node.port}" for node in known)
    return f"{scheme}://{auth}{nodes}/"


@lru_cache(maxsize=256)  # command names as callers spell them: a handful
def _name(part: str | bytes) -> bytes:
    return part.upper() if isinstance(part, bytes) else part.upper().encode()


def _word(part: str | bytes | int | float) -> bytes:
    return _name(part) if isinstance(part, str | bytes) else str(part).upper().encode()


def _as_bytes(part: str | bytes | int | float) -> bytes:
    return part if isinstance(part, bytes) else str(part).encode()


def first_key(parts: Sequence[str | bytes | int | float]) -> bytes | None:
    """The key a command is routed by (its first), or None for a command without keys."""
    name = _word(parts[0])
    if name in _SCRIPTS:
        return _as_bytes(parts[3]) if int(parts[2]) > 0 else None
    if name in (b"XREAD", b"XREADGROUP"):
        words = [part.upper() if isinstance(part, bytes) else str(part).upper().encode() for part in parts]
        return _as_bytes(parts[words.index(b"STREAMS") + 1]) if b"STREAMS" in words else None
    if name in _KEYLESS or name in _EVERY_MASTER or len(parts) < 2:
        return None
    return _as_bytes(parts[1])


class ClusterPipe(RedisPipe):
    """A RedisPipe to its callers (call/many/close), routed by slot to one RedisPipe per node."""

    def __init__(self, url: str, *, timeout_s: float = 5.0) -> None:
        self.address = ClusterAddress.parse(url)
        super().__init__(self.address.node_url(self.address.seeds()[0]), timeout_s=timeout_s)
        self.url = url
        self._nodes: dict[str, RedisPipe] = {}
        self._slots: list[str | None] = [None] * REDIS_CLUSTER_HASH_SLOTS
        self._known: list[str] = self.address.seeds()  # every node ever heard of, to ask for the map
        self._generation = 0  # bumped by every map load: concurrent failures reload it once
        self._loading = asyncio.Lock()
        self._background: set[asyncio.Task[None]] = set()
        self._sharded_pubsub: bool | None = None

    def _node(self, address: str) -> RedisPipe:
        pipe = self._nodes.get(address)
        if pipe is None:
            if self._closed:
                raise RedisConnectionError("closed")
            pipe = self._nodes[address] = RedisPipe(self.address.node_url(address), timeout_s=self.timeout_s)
        return pipe

    def masters(self) -> list[str]:
        return sorted({address for address in self._slots if address is not None})

    def owner(self, slot: int) -> str | None:
        """The master serving `slot` in the map loaded last (None: not loaded, or not served)."""
        return self._slots[slot]

    async def sharded_pubsub(self) -> bool:
        """Whether the cluster speaks sharded pub/sub (SSUBSCRIBE/SPUBLISH: Redis 7 or later), from
        INFO of any master, asked once: publishers (RedisLayer.run's script variant) and
        subscribers (kit/redis/pubsub.py) ask the same question, so they agree. A cluster upgraded
        from 6.2 while processes run keeps their answer until they restart (docs/cluster.md)."""
        if self._sharded_pubsub is None:
            info = await self.call("INFO", "server")
            text = info.decode() if isinstance(info, bytes) else str(info)
            versions = [line.split(":", 1)[1] for line in text.splitlines() if line.startswith("redis_version:")]
            major = versions[0].split(".", 1)[0] if versions else "0"
            self._sharded_pubsub = major.isdigit() and int(major) >= 7
        return self._sharded_pubsub

    async def close(self) -> None:
        self._closed = True
        for task in list(self._background):
            task.cancel()
        nodes, self._nodes = self._nodes, {}
        await asyncio.gather(*(pipe.close() for pipe in nodes.values()))

    # -- the slot map ----------------------------------------------------------------------------

    async def refresh(self, seen: int | None = None, avoid: str | None = None) -> None:
        """Load the slot map from the first node that answers (`avoid` last). With `seen`, skip it
        when someone else loaded a newer map since that generation."""
        async with self._loading:
            if seen is not None and seen != self._generation:
                return
            masters = self.masters()
            candidates = [a for a in dict.fromkeys([*masters, *self._known]) if a != avoid]
            if avoid is not None:
                candidates.append(avoid)
            last: Exception | None = None
            for address in candidates:
                try:
                    reply = await asyncio.wait_for(self._node(address).call("CLUSTER", "SLOTS"), self.timeout_s)
                except (RedisConnectionError, RedisTimeoutError, ResponseError, TimeoutError) as error:
                    last = error
                    continue
                self._load(address, reply)
                return
            raise RedisConnectionError(f"no Redis Cluster node answers ({type(last).__name__})")

    def _load(self, asked: str, reply: list[Any]) -> None:
        slots: list[str | None] = [None] * REDIS_CLUSTER_HASH_SLOTS
        for entry in reply:
            start, end, master = int(entry[0]), int(entry[1]), entry[2]
            host = master[0].decode() if isinstance(master[0], bytes) else str(master[0])
            # An empty or "?" host means "the node you asked" (Redis 7 without an announced address).
            address = f"{host if host not in ('', '?') else asked.rsplit(':', 1)[0]}:{int(master[1])}"
            slots[start : end + 1] = [address] * (end - start + 1)
            for node in entry[2:]:
                node_host = node[0].decode() if isinstance(node[0], bytes) else str(node[0])
                if node_host not in ("", "?"):
                    known = f"{node_host}:{int(node[1])}"
                    if known not in self._known:
                        self._known.append(known)
        self._slots = slots
        self._generation += 1

    def _refresh_soon(self) -> None:
        """Reload the map in the background (after a MOVED: other slots probably moved too)."""
        if self._closed:
            return
        # An error other than a lost connection (a refused CLUSTER SLOTS) is logged by spawn's
        # supervisor; the next command that needs the map tries again.
        task = spawn(self._quiet_refresh(self._generation), "cluster map refresh")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _quiet_refresh(self, seen: int) -> None:
        try:
            await self.refresh(seen)
        except RedisConnectionError:
            pass  # the next command that needs it tries again

    async def _master_of(self, slot: int) -> str:
        address = self._slots[slot]
        if address is None:
            await self.refresh(self._generation)
            address = self._slots[slot]
            if address is None:
                raise ResponseError(f"CLUSTERDOWN Hash slot {slot} not served")
        return address

    # -- commands --------------------------------------------------------------------------------

    def send(self, *parts: str | bytes | int | float) -> asyncio.Future[Any] | None:
        """Never sent without waiting: routing by slot (and following redirections) needs call()."""
        return None

    async def call(self, *parts: str | bytes | int | float) -> Any:
        key = first_key(parts)
        if key is None:
            return await self._keyless(parts)
        slot = key_slot(key)
        address = self._slots[slot]
        if address is not None:
            # The hot path: the owner is known; redirections and outages go the long way.
            try:
                return await self._node(address).call(*parts)
            except ResponseError as error:
                if str(error).partition(" ")[0] not in _REDIRECTS:
                    raise
            except RedisConnectionError as error:
                if not str(error).startswith("cannot reach redis") and _word(parts[0]) not in _READS:
                    self._refresh_soon()
                    raise  # a write sent and lost: it may have run
        return await self._routed(parts, slot)

    async def _routed(self, parts: Sequence[str | bytes | int | float], slot: int) -> Any:
        """A command whose slot has no known owner, moved, or whose owner is unreachable."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        asking: str | None = None
        pause = 0.02
        for _ in range(_MAX_REDIRECTS):
            seen = self._generation
            try:
                if asking is not None:
                    target, asking = asking, None
                    return await self._ask(target, parts)
                address = await self._master_of(slot)
                try:
                    return await self._node(address).call(*parts)
                except RedisConnectionError as error:
                    if not str(error).startswith("cannot reach redis") and _word(parts[0]) not in _READS:
                        self._refresh_soon()
                        raise  # a write sent and lost: it may have run
                    if loop.time() + pause > deadline:
                        raise
                    await self._settle(pause, seen, address)
                    pause = min(pause * 2, 0.5)
            except ResponseError as error:
                kind, _, rest = str(error).partition(" ")
                if kind == "MOVED":
                    target = rest.split()[1]
                    self._slots[slot] = target
                    if target not in self._known:
                        self._known.append(target)
                    self._refresh_soon()
                elif kind == "ASK":
                    asking = rest.split()[1]
                elif kind in ("TRYAGAIN", "CLUSTERDOWN") and loop.time() + pause <= deadline:
                    await self._settle(pause, seen, None)
                    pause = min(pause * 2, 0.5)
                else:
                    raise
        raise ResponseError(f"CLUSTERDOWN slot {slot} redirected more than {_MAX_REDIRECTS} times")

    async def _settle(self, pause: float, seen: int, unreachable: str | None) -> None:
        """Wait a little, then reload the map (once for all callers that saw the same one)."""
        await asyncio.sleep(pause * (0.5 + random.random()))
        try:
            await self.refresh(seen, avoid=unreachable)
        except RedisConnectionError:
            pass  # no node answers yet; the caller's budget decides

    async def _ask(self, address: str, parts: Sequence[str | bytes | int | float]) -> Any:
        try:
            reader, writer = await asyncio.wait_for(
                open_redis(self.address.node_url(address), select_db=False), self.timeout_s
            )
        except (OSError, ConnectionError, TimeoutError) as error:
            raise RedisConnectionError(f"cannot reach redis: {type(error).__name__}") from None
        try:
            writer.write(command("ASKING") + command(*parts))
            asking = await asyncio.wait_for(read_reply(reader), self.timeout_s)
            reply = await asyncio.wait_for(read_reply(reader), self.timeout_s)
        except (OSError, ConnectionError, TimeoutError, asyncio.IncompleteReadError) as error:
            raise RedisConnectionError(f"redis connection lost: {type(error).__name__}") from None
        finally:
            writer.close()
        for answer in (asking, reply):
            if isinstance(answer, Exception):
                raise ResponseError(str(answer))
        return reply

    async def _keyless(self, parts: Sequence[str | bytes | int | float]) -> Any:
        if not self.masters():
            await self.refresh()
        masters = self.masters()
        if _word(parts[0]) in _EVERY_MASTER:
            replies = await asyncio.gather(*(self._node(address).call(*parts) for address in masters))
            return replies[0]
        last: Exception | None = None
        for address in random.sample(masters, len(masters)):
            try:
                return await self._node(address).call(*parts)
            except RedisConnectionError as error:
                last = error
        assert last is not None
        raise last

    async def many(self, commands: list[tuple[str | bytes | int | float, ...]]) -> list[Any]:
        return list(await asyncio.gather(*(self.call(*parts) for parts in commands)))
