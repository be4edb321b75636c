"""Routing to the rules services.

Per game type, a pool of replicas (TAFEL_RULES_<GAME>); per replica one channel and a few
long-lived bidirectional ``ApplyMoves`` streams that multiplex many games' actions, matched to their
answers by correlation id. Each stream has one writer task fed by a queue (a grpc.aio stream takes
one write at a time) and one reader that settles the waiting futures. The writer sends everything
queued at once as one batched message (a stream message costs far more than the bytes it carries),
and the rules service then answers in batches too. The writer holds a message's first entry for
TAFEL_RULES_BATCH_WAIT_MS (1 ms), so that more join it. Game creations and views ride the same streams
when the service announces it (rules.proto ApplyMoves: "tafel-stream-calls" in the stream's
initial metadata), as unary calls otherwise: a unary call costs both ends several times a stream
entry (docs/benchmarks.md, issue 19 second pass). A broken stream fails its
pending actions with UNAVAILABLE and reconnects with backoff; the router then retries the action on
the next replica with the same request id, which the rules service answers at most once.

A game always goes to the same replica while the set of replicas holds still and that replica is
up, so the replica's decoded-state cache hits: rendezvous hashing over the current set, which moves
few games when a replica joins or leaves. The set is fixed (``host:port`` list) or found by DNS and
kept up to date (``dns:///name:port``, gateway/rules_discovery.py). DescribeGame is a unary call.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import time
import zlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tafel.rules.v1 import rules_pb2, rules_pb2_grpc

from gateway.rules_discovery import Discovery, DnsTarget, Resolve, resolve_dns
from kit.errors import Refused, reason_of
from kit.mailbox import Mailbox
from kit.retry import Attempts, Backoff
from kit.tasks import spawn

log = logging.getLogger("tafel.gateway.rules")
STATUS_BY_VALUE: dict[int, grpc.StatusCode] = {code.value[0]: code for code in grpc.StatusCode}
_RETRY_ATTEMPTS = 3
_MASK = (1 << 64) - 1
_T = TypeVar("_T")
STREAM_CALLS_KEY = "tafel-stream-calls"
RULES_SERVICE = rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name
ORDERS_KEPT = 65_536  # games whose replica order a ReplicaSet keeps
# How often a stream fails its actions past their deadline: one timer per stream instead of one
# per action (an action's timeout is seconds; it fires at most this much late).
SWEEP_S = 0.1
# What a stream entry carries: ApplyMovesRequest's field and its message.
Entry = rules_pb2.ApplyMoveRequest | rules_pb2.CreateGameRequest | rules_pb2.GetViewRequest


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


def rules_unavailable() -> Refused:
    return Refused(grpc.StatusCode.UNAVAILABLE, "RULES_UNAVAILABLE", "the game's rules service is unavailable; retry")


def rules_timeout() -> Refused:
    return Refused(
        grpc.StatusCode.UNAVAILABLE, "RULES_TIMEOUT", "the game's rules service did not answer in time; retry"
    )


def refused_from_refusal(refusal: rules_pb2.Refusal) -> Refused:
    code = STATUS_BY_VALUE.get(refusal.code, grpc.StatusCode.UNKNOWN)
    known_version = refusal.current_version or code in (
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    return Refused(
        code,
        refusal.reason or code.name,
        refusal.message or code.name.lower(),
        current_version=refusal.current_version if known_version else None,
    )


def refused_from_error(error: grpc.aio.AioRpcError) -> Refused:
    code = error.code()
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED):
        return rules_unavailable()
    version: int | None = None
    for key, value in error.trailing_metadata() or ():
        if key == "current_version":
            with contextlib.suppress(ValueError):
                version = int(value)
    return Refused(code, reason_of(error) or code.name, error.details() or code.name.lower(), current_version=version)


class _Transport(Exception):
    """The action never got an answer from this stream: it may be retried elsewhere."""


class MoveStream:
    """One long-lived ApplyMoves stream to one replica."""

    def __init__(
        self,
        stub: rules_pb2_grpc.RulesServiceStub,
        name: str,
        metadata: tuple[tuple[str, str], ...] = (),
        batch_wait_s: float = 0.0,
    ) -> None:
        self._stub = stub
        self.name = name
        self._metadata = metadata
        # How long the writer holds a first entry for others to join its message (RulesRouter).
        self._batch_wait_s = batch_wait_s
        self._ids = itertools.count(1)
        # correlation id -> the action's future and its deadline (time.monotonic)
        self._pending: dict[int, tuple[asyncio.Future[rules_pb2.ApplyMovesResponse], float]] = {}
        self._sweeper: asyncio.TimerHandle | None = None
        # Made in start(), on the running loop (a router may be built before there is one).
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: Mailbox[tuple[int, str, Entry]] | None = None
        self._up = asyncio.Event()
        self._is_up = False  # _up.is_set(), read on every action without a call into asyncio
        # The service on the other end answers creations and views on this stream: known from the
        # stream's initial metadata (a service that predates them sends none until its first answer).
        self.calls = False
        self.announced = asyncio.Event()  # this connection's initial metadata has been read
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def up(self) -> bool:
        return self._is_up

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    def start(self) -> None:
        if self._task is None:
            loop = self._loop = asyncio.get_running_loop()
            self._queue = Mailbox(loop)
            # _run never ends but by close(); should a bug end it anyway, a later start() (every
            # wait_up) makes the stream again instead of leaving this replica down for good.
            self._task = spawn(self._run(), f"rules stream {self.name}", log=log, on_failure=self._ended)

    def _ended(self, _: BaseException) -> None:
        self._task = None

    async def close(self) -> None:
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._fail_all()

    async def wait_up(self, timeout_s: float) -> bool:
        self.start()
        try:
            await asyncio.wait_for(self._up.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    def submit(
        self, entry: Entry, field: str = "request", deadline: float | None = None
    ) -> asyncio.Future[rules_pb2.ApplyMovesResponse]:
        """Queue one entry (`field` of ApplyMovesRequest: request, create or view); its future
        fails with TimeoutError once `deadline` (time.monotonic) has passed unanswered."""
        queue, loop = self._queue, self._loop
        if not self._is_up or queue is None or loop is None:
            raise _Transport()
        correlation = next(self._ids)
        future: asyncio.Future[rules_pb2.ApplyMovesResponse] = loop.create_future()
        self._pending[correlation] = (future, float("inf") if deadline is None else deadline)
        if self._sweeper is None:
            self._sweeper = loop.call_later(SWEEP_S, self._sweep)
        queue.put_nowait((correlation, field, entry))
        return future

    def _sweep(self) -> None:
        """Fail (and forget) the actions past their deadline; again in SWEEP_S while any wait."""
        self._sweeper = None
        now = time.monotonic()
        pending = self._pending
        late = [correlation for correlation, (_, deadline) in pending.items() if deadline <= now]
        for correlation in late:
            future = pending.pop(correlation)[0]
            if not future.done():  # (done: its caller was cancelled)
                future.set_exception(TimeoutError())
        if pending and self._loop is not None:
            self._sweeper = self._loop.call_later(SWEEP_S, self._sweep)

    def _fail_all(self) -> None:
        pending, self._pending = self._pending, {}
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        for future, _ in pending.values():
            if not future.done():
                future.set_exception(_Transport())
        if self._queue is not None:
            self._queue.clear()

    async def _run(self) -> None:
        attempts = Attempts(Backoff(first_s=0.05, cap_s=1.0))
        failing = False
        while not self._closed:
            call = self._stub.ApplyMoves(metadata=self._metadata)
            # A writer that fails cancels the call: the actions in flight fail now and the stream
            # is made again, rather than queue unsent until their deadlines.
            writer = spawn(self._write(call), f"rules stream {self.name} writer", log=log, on_failure=_cancelling(call))
            announced = spawn(self._learn_calls(call), f"rules stream {self.name} metadata", log=log)
            self._up.set()
            self._is_up = True
            healthy = False
            try:
                async for response in call:
                    healthy = True
                    if response.WhichOneof("result") is not None:
                        self._settle(response)
                    for answer in response.batch:
                        self._settle(answer)
            except grpc.aio.AioRpcError as error:
                if not self._closed:
                    log.warning("rules stream broke", extra={"stream": self.name, "code": error.code().name})
            except Exception:
                # A bug (an answer we could not settle): its actions fail below and the stream is
                # made again after the backoff; logged once per run of failures.
                if not failing:
                    log.exception("rules stream failed", extra={"stream": self.name})
                failing = True
            except asyncio.CancelledError:
                call.cancel()
                writer.cancel()
                announced.cancel()
                self._up.clear()
                self._is_up = False
                raise
            finally:
                self._up.clear()
                self._is_up = False
                self.calls = False
                self.announced.clear()
                writer.cancel()
                announced.cancel()
                call.cancel()
                self._fail_all()
            if healthy:
                attempts.reset()
                failing = False
            await attempts.failed()

    async def _learn_calls(self, call: Any) -> None:
        with contextlib.suppress(grpc.aio.AioRpcError):
            metadata = await call.initial_metadata()
            self.calls = any(
                key == STREAM_CALLS_KEY and "create" in str(value).split(",") and "view" in str(value).split(",")
                for key, value in metadata or ()
            )
            self.announced.set()

    def _settle(self, answer: rules_pb2.ApplyMovesResponse) -> None:
        pending = self._pending.pop(answer.correlation_id, None)
        if pending is not None and not pending[0].done():
            pending[0].set_result(answer)

    async def _write(self, call: Any) -> None:
        queue = self._queue
        assert queue is not None  # (made by start(), which runs _run)
        try:
            wait = self._batch_wait_s
            while True:
                correlation, field, entry = await queue.get()
                if wait > 0:
                    await asyncio.sleep(wait)  # (one timer a message, not an entry)
                rest = queue.get_many()
                if not rest:
                    await call.write(_put(rules_pb2.ApplyMovesRequest(), correlation, field, entry))
                    continue
                # Everything queued goes out in one message; the answers come back batched.
                message = rules_pb2.ApplyMovesRequest()
                batch = message.batch
                _put(batch.add(), correlation, field, entry)
                for correlation, field, entry in rest:
                    _put(batch.add(), correlation, field, entry)
                await call.write(message)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError, grpc.aio.UsageError):
            call.cancel()


def _cancelling(call: Any) -> Callable[[BaseException], None]:
    return lambda _: call.cancel()


def _put(
    message: rules_pb2.ApplyMovesRequest, correlation: int, field: str, entry: Entry
) -> rules_pb2.ApplyMovesRequest:
    message.correlation_id = correlation
    getattr(message, field).CopyFrom(entry)
    return message


@dataclass(frozen=True)
class RulesAccess:
    """How a gateway reaches its rules services: TLS credentials (mutual when they carry a client
    certificate) and the shared internal secret sent on every call (kit/internal_auth.py)."""

    credentials: grpc.ChannelCredentials | None = None
    metadata: tuple[tuple[str, str], ...] = ()


def _mix(value: int) -> int:
    """splitmix64's finaliser: spreads close inputs over all 64 bits."""
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK
    return value ^ (value >> 31)


def _key(text: str) -> int:
    # Not hash(): every gateway process must put a game on the same replica.
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


class Seeded(Protocol):
    seed: int


_R = TypeVar("_R", bound=Seeded)


def rendezvous(game_id: str, replicas: Sequence[_R]) -> list[_R]:
    """The replicas in the order a game tries them: highest score of (game, replica) first.

    Rendezvous hashing: adding a replica moves only the games it now wins (about 1/N of them) and
    removing one moves only its own games, each to its own next choice, so the other replicas'
    cached states stay hot through a scale-up or a pod's restart."""
    key = _key(game_id)
    return sorted(replicas, key=lambda replica: _mix(key ^ replica.seed), reverse=True)


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
        self.seed = _key(address)
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


class RulesRouter:
    """Where each game type's actions go. One per gateway process.

    ``addresses`` per game: fixed ``host:port`` entries, or one ``dns:///name:port`` entry whose
    addresses are looked up every ``resolve_every_s`` (gateway/rules_discovery.py; ``resolve`` is
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
            game, request.game_id, "request", request, None, timeout_s
        )
        return applied

    async def _over_streams(
        self,
        game: str,
        game_id: str,
        field: str,
        entry: Entry,
        unary: Callable[[Replica, float], Any] | None,
        timeout_s: float | None,
    ) -> Any:
        """One entry over the long-lived streams, its answer's result (a refusal raised as
        Refused). `unary` is the call for a replica whose stream does not take this entry (a
        service that predates stream creations and views)."""
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
                if unary is not None and not stream.calls:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise rules_timeout()
                    try:
                        return await _on_replica(replica_set, replica, unary, remaining)
                    except _Unanswered:
                        continue
                try:
                    # The stream fails it past the deadline (one sweep per stream, not a timer each).
                    future = stream.submit(entry, field, deadline)
                except _Transport:
                    continue
                try:
                    answer = await future
                except _Transport:
                    replica_set.suspect()
                    continue
                except TimeoutError:
                    raise rules_timeout() from None
                kind = answer.WhichOneof("result")
                if kind is None or kind == "refusal":
                    raise refused_from_refusal(answer.refusal)
                return getattr(answer, kind)
        raise rules_unavailable()

    async def _unary(
        self, game: str, game_id: str, call: Callable[[Replica, float], Any], timeout_s: float | None
    ) -> Any:
        timeout = self.timeout_s if timeout_s is None else timeout_s
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        replica_set = self._set(game)
        last: Refused | None = None
        for replica in await replica_set.order(game_id, deadline - loop.time()):
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            try:
                return await _on_replica(replica_set, replica, call, remaining)
            except _Unanswered as unanswered:
                last = unanswered.refused
        raise last or rules_unavailable()

    async def create_game(
        self, game: str, request: rules_pb2.CreateGameRequest, *, timeout_s: float | None = None
    ) -> rules_pb2.CreateGameResponse:
        response: rules_pb2.CreateGameResponse = await self._over_streams(
            game,
            request.game_id,
            "create",
            request,
            lambda r, t: r.stub.CreateGame(request, timeout=t, metadata=r.metadata),
            timeout_s,
        )
        return response

    async def get_view(
        self, game: str, request: rules_pb2.GetViewRequest, *, timeout_s: float | None = None
    ) -> rules_pb2.GetViewResponse:
        response: rules_pb2.GetViewResponse = await self._over_streams(
            game,
            request.game_id,
            "view",
            request,
            lambda r, t: r.stub.GetView(request, timeout=t, metadata=r.metadata),
            timeout_s,
        )
        return response

    async def describe(self, game: str, *, timeout_s: float | None = None) -> rules_pb2.DescribeGameResponse:
        cached = self._descriptions.get(game)
        if cached is not None:
            return cached
        response: rules_pb2.DescribeGameResponse = await self._unary(
            game,
            game,
            lambda r, t: r.stub.DescribeGame(rules_pb2.DescribeGameRequest(), timeout=t, metadata=r.metadata),
            timeout_s,
        )
        self._descriptions[game] = response
        return response


class _Unanswered(Exception):
    """A replica could not be reached (UNAVAILABLE): try the next one."""

    def __init__(self, refused: Refused) -> None:
        super().__init__(refused.message)
        self.refused = refused


async def _on_replica(
    replica_set: ReplicaSet, replica: Replica, call: Callable[[Replica, float], Any], timeout_s: float
) -> Any:
    """One unary call on one replica: its answer, its refusal raised, or _Unanswered (suspected)."""
    try:
        return await call(replica, timeout_s)
    except grpc.aio.AioRpcError as error:
        refused = refused_from_error(error)
        if refused.code != grpc.StatusCode.UNAVAILABLE:
            raise refused from None
        replica_set.suspect()
        raise _Unanswered(refused) from None
