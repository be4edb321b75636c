"""Finding a game's rules replicas.

``TAFEL_RULES_<GAME>`` names either fixed replicas (``host:port[,host:port...]``: each entry one
replica, its host resolved by gRPC) or a DNS name that answers one address per replica
(``dns:///connect4:50060``: a Kubernetes headless Service). For a name, ``Discovery`` resolves it
itself, every ``every_s`` and soon after the router sees a replica fail, and hands the current set
to the router (gateway/rules/router.py), which keeps one channel and its long-lived streams per
address and spreads games over the set by rendezvous hashing.

Why not gRPC's own ``dns:///`` resolver with ``round_robin``: the gateway's traffic to a replica is
two long-lived multiplexed ApplyMoves streams, and round_robin balances *calls* (here: streams) when
they start; it would never move a stream to a pod added later, and gRPC re-resolves only when a
connection fails, so an autoscaled replica would get no traffic. Resolving here lets every scale-up
take its share at once, and keeps a game on one replica (its decoded-state cache) while the set
holds still.

A lookup that fails or answers nothing keeps the last set (a DNS hiccup must not drop every
replica; a replica that is really gone fails its streams and its games move on anyway), logged once
per outage, and is retried soon.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from kit.loops import Loop

log = logging.getLogger("tafel.gateway.rules")

DNS_SCHEME = "dns:///"

# (host, port) -> "ip:port" addresses, one per replica
Resolve = Callable[[str, int], Awaitable[Sequence[str]]]


def address_of(ip: str, port: int) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


async def resolve_dns(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for host (A and AAAA), in a stable order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({address_of(str(info[4][0]), port) for info in infos})


@dataclass(frozen=True)
class DnsTarget:
    """A ``dns:///host:port`` entry of TAFEL_RULES_<GAME>."""

    host: str
    port: int

    @classmethod
    def parse(cls, raw: str) -> DnsTarget | None:
        """The target named by raw, or None when raw is a fixed host:port list."""
        if not raw.startswith(DNS_SCHEME):
            return None
        host, _, port = raw[len(DNS_SCHEME) :].rpartition(":")
        return cls(host.strip("[]"), int(port))


class Discovery:
    """Keeps one game's replica set up to date with what its DNS name answers."""

    def __init__(
        self,
        game: str,
        target: DnsTarget,
        on_change: Callable[[tuple[str, ...]], None],
        *,
        every_s: float,
        resolve: Resolve = resolve_dns,
        retry_s: float = 1.0,
    ) -> None:
        self.game = game
        self.target = target
        self._on_change = on_change
        self._resolve = resolve
        self.every_s = every_s
        self._retry_s = min(retry_s, every_s)
        self.addresses: tuple[str, ...] = ()
        self.resolved = asyncio.Event()  # set once the first lookup found a replica
        self._failing = False
        self._last_lookup = float("-inf")
        self.loop = Loop(f"rules discovery {game}", self._step, every_s=every_s, log=log)

    def start(self) -> None:
        self.loop.start()

    async def stop(self) -> None:
        await self.loop.stop()

    def suspect(self) -> None:
        """A replica failed: look again soon (at most once per retry_s, whatever the failure rate)."""
        if asyncio.get_running_loop().time() - self._last_lookup >= self._retry_s:
            self.loop.wake()

    async def _step(self) -> float | None:
        self._last_lookup = asyncio.get_running_loop().time()
        try:
            found = tuple(await self._resolve(self.target.host, self.target.port))
        except OSError as error:  # socket.gaierror included: no such name, no answer
            return self._failed(str(error))
        if not found:
            return self._failed("no addresses")
        if self._failing:
            log.info("rules replicas found again", extra={"game": self.game, "replicas": len(found)})
            self._failing = False
        if found != self.addresses:
            log.info(
                "rules replicas changed",
                extra={"game": self.game, "host": self.target.host, "replicas": ",".join(found)},
            )
            self.addresses = found
            self._on_change(found)
        self.resolved.set()
        return None

    def _failed(self, why: str) -> float:
        if not self._failing:
            log.warning(
                "rules replicas not found; keeping the last set",
                extra={"game": self.game, "host": self.target.host, "why": why, "replicas": len(self.addresses)},
            )
            self._failing = True
        return self._retry_s
