"""Per-peer and per-token call limits on the gateway's public port, and caps on open streams.

Every call of a limited method takes one token from two buckets: the caller's network peer (its
IP address) and, when the call carries a valid session token, the player. An empty bucket answers
RESOURCE_EXHAUSTED (reason RATE_LIMITED) with a google.rpc.RetryInfo saying when a token is back,
so a client waits instead of hammering. Long-lived streams (Play, WatchGame, WatchRoom, FindMatch)
are also capped per player while open (reason TOO_MANY_STREAMS).

Before any of that, the guard (gateway/standing/guard.py) decides whether the caller may call the
method at all (its role, a suspension or ban), and ends a stream whose account is suspended while it
is open: this wrapper is the one place every public call passes, on the port and the web edge.
So it is also where presence learns who is connected (gateway/people/presence.py): a player's first
open stream on this gateway and their last one closing are told to `presence`.

The buckets live in this process (no Redis round trip per call): N gateway replicas allow N times
the figures, which is the point of a per-replica guard against floods (the cost is bounded by what
one replica will do). Bucket tables are bounded (least recently used evicted), so a flood of
distinct peers or tokens cannot grow memory without bound.
"""

from __future__ import annotations

import asyncio
import inspect
import ipaddress
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

import grpc

from gateway.auth import Authenticator, Identity
from gateway.settings import LimitSettings, Rate
from gateway.standing.guard import Guard
from kit.errors import Refused, abort, abort_stream
from kit.undecodable import WrappedHandlers, handler_factory

MAX_KEYS = 100_000  # buckets kept per table


class Buckets:
    """Token buckets by key, at most MAX_KEYS of them (least recently used dropped: a dropped
    bucket comes back full, which only ever errs towards letting a call through)."""

    def __init__(self, rate: Rate, max_keys: int = MAX_KEYS) -> None:
        self.rate = rate
        self.max_keys = max_keys
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, key: str, now: float) -> float:
        """0 if a token was taken, else the seconds until one is back."""
        level, at = self._buckets.pop(key, (self.rate.burst, now))
        level = min(self.rate.burst, level + (now - at) * self.rate.per_s)
        wait = 0.0
        if level >= 1.0:
            level -= 1.0
        else:
            wait = (1.0 - level) / self.rate.per_s
        self._buckets[key] = (level, now)
        if len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        return wait

    def __len__(self) -> int:
        return len(self._buckets)


def peer_host(peer: str) -> str:
    """'ipv4:1.2.3.4:5678' / 'ipv6:[::1]:5678' -> the address; an IPv6 peer counts by its /64
    (one host owns a whole /64, so per-address buckets would be free to multiply)."""
    kind, _, rest = peer.partition(":")
    host = rest.rsplit(":", 1)[0].strip("[]") if kind in ("ipv4", "ipv6") else peer
    if kind == "ipv6":
        try:
            return str(ipaddress.IPv6Network(f"{host}/64", strict=False).network_address)
        except ValueError:
            return host
    return host


SIGN_INS = frozenset({"Register", "SignIn", "SignInAsGuest"})
ROOM_LOOKUPS = frozenset({"GetRoom", "JoinRoom", "WatchRoom"})


def too_many(reason: str, message: str, wait_s: float) -> Refused:
    return Refused(grpc.StatusCode.RESOURCE_EXHAUSTED, reason, message, retry_after_s=wait_s)


class StreamPresence(Protocol):
    """Told when a player's first stream on this gateway opens and their last one closes."""

    def opened(self, identity: Identity) -> None: ...

    def closed(self, player_id: str) -> None: ...


class CallLimiter(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Wraps each public method once; the wrapper charges the buckets before the servicer runs."""

    def __init__(
        self,
        auth: Authenticator,
        settings: LimitSettings,
        guard: Guard | None = None,
        clock: Callable[[], float] = time.monotonic,
        presence: StreamPresence | None = None,
    ) -> None:
        self.auth = auth
        self.presence = presence
        self.guard = guard
        self.settings = settings
        self.clock = clock
        self.per_peer = Buckets(settings.calls_per_peer)
        self.per_player = Buckets(settings.calls_per_player)
        self.sign_ins = Buckets(settings.sign_ins_per_peer)
        self.rooms_player = Buckets(settings.room_lookups_per_player)
        self.rooms_peer = Buckets(settings.room_lookups_per_peer)
        self.open_streams: dict[str, int] = {}
        self._wrapped = WrappedHandlers(self.wrap)

    def identity_of(self, context: grpc.aio.ServicerContext[Any, Any]) -> Identity | None:
        try:
            return self.auth.identity(context.invocation_metadata())
        except Refused:
            return None  # the servicer answers UNAUTHENTICATED itself

    def player_of(self, context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
        identity = self.identity_of(context)
        return identity.player_id if identity is not None else None

    def admit_call(self, method: str, context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
        """The guard's decision, then the call's tokens (Refused either way); the player id."""
        if self.guard is not None:
            self.guard.admit(
                method,
                lambda: self.identity_of(context),
                lambda: self.auth.identity(context.invocation_metadata()),
            )
        return self.charge(method.rsplit("/", 1)[-1], context)

    def charge(self, name: str, context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
        """Take the call's tokens (Refused when a bucket is empty); returns the player id."""
        now = self.clock()
        peer = peer_host(context.peer() or "")
        wait = self.per_peer.take(peer, now)
        if wait:
            raise too_many("RATE_LIMITED", "too many calls from your address; slow down", wait)
        if name in SIGN_INS:
            wait = self.sign_ins.take(peer, now)
            if wait:
                raise too_many("RATE_LIMITED", "too many sign-ins from your address; slow down", wait)
            return None
        player = self.player_of(context)
        if player is not None:
            wait = self.per_player.take(player, now)
            if wait:
                raise too_many("RATE_LIMITED", "too many calls for this session; slow down", wait)
        if name in ROOM_LOOKUPS:
            wait = self.rooms_peer.take(peer, now)
            if not wait and player is not None:
                wait = self.rooms_player.take(player, now)
            if wait:
                raise too_many("RATE_LIMITED", "too many room look-ups; slow down", wait)
        return player

    def open_stream(self, player: str | None, context: grpc.aio.ServicerContext[Any, Any] | None = None) -> None:
        if player is None:
            return
        count = self.open_streams.get(player, 0)
        if count >= self.settings.streams_per_player:
            raise too_many(
                "TOO_MANY_STREAMS",
                f"this session already has {count} open streams; close one first",
                1.0,
            )
        self.open_streams[player] = count + 1
        if count == 0 and self.presence is not None and context is not None:
            identity = self.identity_of(context)
            if identity is not None:
                self.presence.opened(identity)

    def close_stream(self, player: str | None) -> None:
        if player is None:
            return
        left = self.open_streams.get(player, 1) - 1
        if left > 0:
            self.open_streams[player] = left
        else:
            self.open_streams.pop(player, None)
            if self.presence is not None:
                self.presence.closed(player)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        return self._wrapped.of(handler, handler_call_details.method)

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        """The handler with the limits in front. Public: the web edge (gateway/web), which runs
        the gateway's handlers itself rather than through this server, can put the same limits
        in front of them (its context has peer() and invocation_metadata() too)."""
        limiter = self
        guard = self.guard
        deserializer, serializer = handler.request_deserializer, handler.response_serializer

        async def admit(request: Any, context: grpc.aio.ServicerContext[Any, Any], stream: bool) -> str | None:
            """Charge the call (and count the stream open), or refuse it; the caller, for streams."""
            try:
                player = limiter.admit_call(method, context)
                if stream:
                    limiter.open_stream(player, context)
                return player
            except Refused as refused:
                if handler.request_streaming:
                    await abort_stream(request, context, refused)
                await abort(context, refused)

        if not handler.response_streaming:
            inner: Any = handler.stream_unary if handler.request_streaming else handler.unary_unary

            async def unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                await admit(request, context, False)
                result = inner(request, context)
                return await result if inspect.isawaitable(result) else result

            return handler_factory(handler.request_streaming, False)(unary, deserializer, serializer)
        inner = handler.stream_stream if handler.request_streaming else handler.unary_stream
        make = handler_factory(handler.request_streaming, True)
        if inspect.isasyncgenfunction(inner):

            async def streaming_gen(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
                player = await admit(request, context, True)
                task = guard.watch(player) if guard is not None else None
                kicked = None
                try:
                    async for response in inner(request, context):
                        yield response
                except asyncio.CancelledError:
                    kicked = ended_by(guard, player, task)
                    if kicked is None:
                        raise
                finally:
                    limiter.close_stream(player)
                    kicked = kicked or ended_by(guard, player, task)
                if kicked is not None:
                    await abort(context, kicked)

            return make(streaming_gen, deserializer, serializer)

        async def streaming(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            player = await admit(request, context, True)
            task = guard.watch(player) if guard is not None else None
            kicked = None
            try:
                result = inner(request, context)
                outcome = await result if inspect.isawaitable(result) else result
            except asyncio.CancelledError:
                kicked = ended_by(guard, player, task)
                if kicked is None:
                    raise
            finally:
                limiter.close_stream(player)
                kicked = kicked or ended_by(guard, player, task)
            if kicked is not None:
                await abort(context, kicked)
            return outcome

        return make(streaming, deserializer, serializer)


def ended_by(guard: Guard | None, player: str | None, task: asyncio.Task[object] | None) -> Refused | None:
    """The refusal a stream was ended with by the guard (its cancellation then taken back), or None."""
    if guard is None:
        return None
    refused = guard.unwatch(player, task)
    if refused is not None and task is not None:
        task.uncancel()
    return refused
