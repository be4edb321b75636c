"""A game type's rules replicas: per replica one channel, its ``ApplyMoves`` streams and its health
check; per game type the set of replicas (a fixed list, or the one its Discovery last found) and
each game's order over it (placement.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tafel.rules.v1 import rules_pb2, rules_pb2_grpc

from gateway.rules.discovery import Discovery
from gateway.rules.placement import key_of, rendezvous
from gateway.rules.stream import MoveStream
from kit.tasks import spawn

log = logging.getLogger("tafel.gateway.rules")
RULES_SERVICE = rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name
ORDERS_KEPT = 65_536  # games whose replica order a ReplicaSet keeps


def channel_options(max_message_bytes: int = 4 << 20) -> list[tuple[str, int]]:
    return [
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 2_000),
        ("grpc.http2.bdp_probe", 0),
    ]


@dataclass(frozen=True)
class RulesAccess:
    """How a gateway reaches its rules services: TLS credentials (mutual when they carry a client
    certificate) and the shared internal secret sent on every call (kit/internal_auth.py)."""

    credentials: grpc.ChannelCredentials | None = None
    metadata: tuple[tuple[str, str], ...] = ()


class Replica:
    def __init__(
        self,
        game: str,
        address: str,
        streams: int,
        max_message_bytes: int,
        access: RulesAccess,
        *,
        tls_name: str | None = None,
        batch_wait_s: float = 0.0,
    ) -> None:
        self.address = address
        self.seed = key_of(address)
        self.retired = False  # no longer in the game's set: no new actions, closed after a grace
        options: list[tuple[str, int | str]] = [*channel_options(max_message_bytes)]
        if tls_name is not None and access.credentials is not None:
            # A discovered replica is dialled by its pod IP; its certificate names the Service.
            options.append(("grpc.ssl_target_name_override", tls_name))
        self.channel = (
            grpc.aio.insecure_channel(address, options=options)
            if access.credentials is None
            else grpc.aio.secure_channel(address, access.credentials, options=options)
        )
        self.metadata = access.metadata
        self.stub = rules_pb2_grpc.RulesServiceStub(self.channel)
        self.health = health_pb2_grpc.HealthStub(self.channel)
        self.streams = [
            MoveStream(self.stub, f"{game}@{address}#{i}", self.metadata, batch_wait_s) for i in range(streams)
        ]

    def start(self) -> None:
        for stream in self.streams:
            stream.start()

    async def serving(self, timeout_s: float) -> bool:
        """Whether the replica's health service says its rules service can work (it checks its
        own Redis and scripts, kit/health.py)."""
        request = health_pb2.HealthCheckRequest(service=RULES_SERVICE)
        try:
            answer = await self.health.Check(request, timeout=timeout_s, metadata=self.metadata)
        except grpc.aio.AioRpcError:
            return False
        return bool(answer.status == health_pb2.HealthCheckResponse.SERVING)

    async def close(self) -> None:
        for stream in self.streams:
            await stream.close()
        await self.channel.close()


class ReplicaSet:
    """One game type's replicas: a fixed list, or the set its Discovery last found."""

    def __init__(self, make: Callable[[str], Replica], *, retire_after_s: float) -> None:
        self._make = make
        self._retire_after_s = retire_after_s
        self.replicas: tuple[Replica, ...] = ()
        self.discovery: Discovery | None = None
        # Each game's order over the current set (rendezvous hashes and sorts): every action of a
        # game asks again. Cleared when the set changes, and when it holds ORDERS_KEPT games.
        self._orders: dict[str, tuple[Replica, ...]] = {}
        self._started = False
        self._retiring: dict[Replica, asyncio.Task[None]] = {}

    def update(self, addresses: Sequence[str]) -> None:
        current = {replica.address: replica for replica in self.replicas}
        replicas = []
        for address in addresses:
            replica = current.pop(address, None)
            if replica is None:
                replica = self._make(address)
                if self._started:
                    replica.start()
            replicas.append(replica)
        self.replicas = tuple(replicas)
        self._orders.clear()
        for gone in current.values():
            # Answers already on their way still arrive: close once the longest action could wait.
            gone.retired = True
            task = spawn(self._close_later(gone), f"retire {gone.address}", log=log)
            self._retiring[gone] = task

    async def _close_later(self, replica: Replica) -> None:
        await asyncio.sleep(self._retire_after_s)
        self._retiring.pop(replica, None)
        await replica.close()

    def start(self) -> None:
        self._started = True
        for replica in self.replicas:
            replica.start()
        if self.discovery is not None:
            self.discovery.start()

    async def close(self) -> None:
        if self.discovery is not None:
            await self.discovery.stop()
        retiring, self._retiring = self._retiring, {}
        for replica, task in retiring.items():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await replica.close()
        for replica in self.replicas:
            await replica.close()

    def ordered(self, game_id: str) -> tuple[Replica, ...] | None:
        """order() when it need not wait (None: a discovered set not looked up or not started)."""
        replicas = self.replicas
        if not replicas or (self.discovery is not None and not self.discovery.loop.running):
            return None
        if len(replicas) == 1:
            return replicas
        kept = self._orders.get(game_id)
        if kept is None:
            if len(self._orders) >= ORDERS_KEPT:
                self._orders.clear()
            kept = self._orders[game_id] = tuple(rendezvous(game_id, replicas))
        return kept

    async def order(self, game_id: str, wait_s: float) -> list[Replica]:
        """Where game_id's action goes, best first; waits up to wait_s for a first lookup."""
        if self.discovery is not None and not self.discovery.loop.running:
            self.discovery.start()  # a router used without start(), as its streams allow
        if not self.replicas and self.discovery is not None and wait_s > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.discovery.resolved.wait(), wait_s)
        return rendezvous(game_id, self.replicas)

    def suspect(self) -> None:
        """A replica failed: a discovered set is looked up again soon (a pod may be gone)."""
        if self.discovery is not None:
            self.discovery.suspect()
