"""Where each game type's actions go: the gateway's one way to its rules services.

An action, a game's creation and a view each go as one entry on a long-lived ``ApplyMoves`` stream
(stream.py) of the replica the game belongs to (placement.py over replicas.py's current set); an
entry whose stream broke is retried on the game's next replica with the same request id, which
the rules service answers at most once. DescribeGame (asked once per game type and kept: the router
is also the gateway's catalogue, gateway/catalogue.py) and a replay's views are unary calls.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import grpc
from tafel.rules.v1 import rules_pb2

from gateway.rules.discovery import Discovery, DnsTarget, Resolve, resolve_dns
from gateway.rules.refusals import refused_from_error, refused_from_refusal, rules_timeout, rules_unavailable
from gateway.rules.replicas import Replica, ReplicaSet, RulesAccess
from gateway.rules.stream import Entry, MoveStream, Transport
from kit.errors import Refused

_RETRY_ATTEMPTS = 3


class RulesRouter:
    """Where each game type's actions go. One per gateway process.

    ``addresses`` per game: fixed ``host:port`` entries, or one ``dns:///name:port`` entry whose
    addresses are looked up every ``resolve_every_s`` (gateway/rules/discovery.py; ``resolve`` is
    the lookup, injected by tests)."""

    def __init__(
        self,
        addresses: Mapping[str, Sequence[str]],
        *,
        streams_per_replica: int = 2,
        timeout_s: float = 5.0,
        max_message_bytes: int = 4 << 20,
        access: RulesAccess | None = None,
        resolve_every_s: float = 5.0,
        resolve: Resolve = resolve_dns,
        batch_wait_s: float = 0.0,
    ) -> None:
        """`batch_wait_s`: how long a stream's writer holds the first entry it takes, so that the
        entries queued meanwhile leave in the same message (TAFEL_RULES_BATCH_WAIT_MS). Each message
        costs both ends a wake-up whatever it carries, and a wake-up, not an entry, is most of what
        a move costs (docs/benchmarks.md, eleventh pass); an action waits at most this long more."""
        self.timeout_s = timeout_s
        access = access or RulesAccess()
        self._sets: dict[str, ReplicaSet] = {}
        for game, entries in addresses.items():
            if not entries:
                continue
            target = DnsTarget.parse(entries[0]) if len(entries) == 1 else None
            tls_name = target.host if target is not None else None

            def make(address: str, game: str = game, tls_name: str | None = tls_name) -> Replica:
                return Replica(
                    game,
                    address,
                    streams_per_replica,
                    max_message_bytes,
                    access,
                    tls_name=tls_name,
                    batch_wait_s=batch_wait_s,
                )

            replica_set = ReplicaSet(make, retire_after_s=timeout_s)
            if target is None:
                replica_set.update(entries)
            else:
                replica_set.discovery = Discovery(
                    game, target, replica_set.update, every_s=resolve_every_s, resolve=resolve
                )
            self._sets[game] = replica_set
        self._descriptions: dict[str, rules_pb2.DescribeGameResponse] = {}

    @property
    def games(self) -> tuple[str, ...]:
        return tuple(self._sets)

    def offers(self, game: str) -> bool:
        return game in self._sets

    def replicas(self, game: str) -> tuple[str, ...]:
        """The addresses game's actions go to now."""
        replica_set = self._sets.get(game)
        return () if replica_set is None else tuple(replica.address for replica in replica_set.replicas)

    def start(self) -> None:
        for replica_set in self._sets.values():
            replica_set.start()

    async def unreachable(self, timeout_s: float) -> list[str]:
        """The games none of whose replicas answers SERVING now (the gateway's health check): a
        game with no replica able to work cannot be played through this gateway."""

        async def reachable(replica_set: ReplicaSet) -> bool:
            replicas = replica_set.replicas
            answers = await asyncio.gather(*(replica.serving(timeout_s) for replica in replicas))
            return any(answers)

        games = tuple(self._sets)
        found = await asyncio.gather(*(reachable(self._sets[game]) for game in games))
        return [game for game, ok in zip(games, found, strict=True) if not ok]

    async def close(self) -> None:
        for replica_set in self._sets.values():
            await replica_set.close()

    def _set(self, game: str) -> ReplicaSet:
        replica_set = self._sets.get(game)
        if replica_set is None:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_GAME", f"there is no game type {game} here")
        return replica_set

    def _stream(self, replica: Replica, game_id: str) -> MoveStream:
        streams = replica.streams
        index = (zlib.crc32(game_id.encode()) >> 8) % len(streams)
        stream = streams[index]
        if stream.up:
            return stream
        for other in streams:
            if other.up:
                return other
        return stream

    def apply(
        self, game: str, request: rules_pb2.ApplyMoveRequest, *, timeout_s: float | None = None
    ) -> Awaitable[rules_pb2.ApplyMoveResponse]:
        """Apply one action over the long-lived streams (await the answer); raises Refused. Not a
        coroutine itself: the caller awaits _over_streams directly (one frame fewer per move)."""
        applied: Awaitable[rules_pb2.ApplyMoveResponse] = self._over_streams(
            game, request.game_id, "request", request, timeout_s
        )
        return applied

    async def _over_streams(self, game: str, game_id: str, field: str, entry: Entry, timeout_s: float | None) -> Any:
        """One entry over the long-lived streams, its answer's result (a refusal raised as
        Refused)."""
        timeout = self.timeout_s if timeout_s is None else timeout_s
        # time.monotonic, not the loop's clock: get_running_loop is a getpid system call per
        # action in Python 3.11 (the timer comes from the stream, which keeps its loop).
        deadline = time.monotonic() + timeout
        replica_set = self._set(game)
        for _ in range(_RETRY_ATTEMPTS):
            # The current set each round: a replica added or dropped meanwhile counts.
            replicas = replica_set.ordered(game_id)
            if replicas is None:
                replicas = tuple(await replica_set.order(game_id, deadline - time.monotonic()))
            for replica in replicas:
                if replica.retired:
                    continue
                stream = self._stream(replica, game_id)
                if not stream.up:
                    # Give a reconnecting stream a moment (it may just be starting).
                    if not await stream.wait_up(min(0.2, max(0.0, deadline - time.monotonic()))):
                        replica_set.suspect()
                        continue
                try:
                    # The stream fails it past the deadline (one sweep per stream, not a timer each).
                    future = stream.submit(entry, field, deadline)
                except Transport:
                    continue
                try:
                    answer = await future
                except Transport:
                    replica_set.suspect()
                    continue
                except TimeoutError:
                    raise rules_timeout() from None
                kind = answer.WhichOneof("result")
                if kind is None or kind == "refusal":
                    raise refused_from_refusal(answer.refusal)
                return getattr(answer, kind)
        raise rules_unavailable()

    async def create_game(
        self, game: str, request: rules_pb2.CreateGameRequest, *, timeout_s: float | None = None
    ) -> rules_pb2.CreateGameResponse:
        response: rules_pb2.CreateGameResponse = await self._over_streams(
            game, request.game_id, "create", request, timeout_s
        )
        return response

    async def get_view(
        self, game: str, request: rules_pb2.GetViewRequest, *, timeout_s: float | None = None
    ) -> rules_pb2.GetViewResponse:
        response: rules_pb2.GetViewResponse = await self._over_streams(
            game, request.game_id, "view", request, timeout_s
        )
        return response

    async def replay_views(self, game: str, game_id: str, *, timeout_s: float | None = None) -> list[Any]:
        """The game's every position as a spectator sees it (GetReplayViews; GameViews, by version),
        asked of the game's replicas in turn: any of them rebuilds it from the shared store. A
        unary call: a replay is read once, and its answer can be large for the stream's entries."""
        request = rules_pb2.GetReplayViewsRequest(game_id=game_id)
        response: rules_pb2.GetReplayViewsResponse = await self._unary(
            game,
            game_id,
            lambda replica, t: replica.stub.GetReplayViews(request, timeout=t, metadata=replica.metadata),
            timeout_s,
        )
        return list(response.views)

    async def describe(self, game: str, *, timeout_s: float | None = None) -> rules_pb2.DescribeGameResponse:
        """The game's description (DescribeGame), asked of its first replica that answers and kept:
        a rules service describes a game the same way for as long as it runs."""
        cached = self._descriptions.get(game)
        if cached is not None:
            return cached
        request = rules_pb2.DescribeGameRequest()
        response: rules_pb2.DescribeGameResponse = await self._unary(
            game,
            game,
            lambda replica, t: replica.stub.DescribeGame(request, timeout=t, metadata=replica.metadata),
            timeout_s,
        )
        self._descriptions[game] = response
        return response

    async def _unary(
        self, game: str, key: str, call: Callable[[Replica, float], Awaitable[Any]], timeout_s: float | None
    ) -> Any:
        """One unary call, on `key`'s replicas in turn until one answers: its answer, or its refusal
        raised (UNAVAILABLE: the next replica, suspected)."""
        timeout = self.timeout_s if timeout_s is None else timeout_s
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        replica_set = self._set(game)
        last: Refused | None = None
        for replica in await replica_set.order(key, deadline - loop.time()):
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            try:
                return await call(replica, remaining)
            except grpc.aio.AioRpcError as error:
                refused = refused_from_error(error)
                if refused.code != grpc.StatusCode.UNAVAILABLE:
                    raise refused from None
                replica_set.suspect()
                last = refused
        raise last or rules_unavailable()
