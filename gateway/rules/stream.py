"""One long-lived bidirectional ``ApplyMoves`` stream to one rules replica, multiplexing many games'
actions, game creations and views, matched to their answers by correlation id.

One writer task fed by a queue (a grpc.aio stream takes one write at a time) sends everything
queued at once (up to MAX_BATCH_ENTRIES) as one batched message (a stream message costs far more
than the bytes it carries), holding a message's first entry ``batch_wait_s`` so that more join
it; the rules service answers in batches too, and one reader settles the waiting futures. A broken stream fails its
pending entries with Transport (the router retries them on the next replica, with the same
request id, which the rules service answers at most once) and is made again with backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable
from typing import Any

import grpc
from tafel.rules.v1 import rules_pb2, rules_pb2_grpc

from kit.queues import take_waiting
from kit.retry import Attempts, Backoff
from kit.tasks import spawn

log = logging.getLogger("tafel.gateway.rules")
# How often a stream fails its actions past their deadline: one timer per stream instead of one
# per action (an action's timeout is seconds; it fires at most this much late).
SWEEP_S = 0.1
# The most entries one message carries: a rules service bounds what a stream has in flight (1,024
# in services/host/stream.py) and reads a batch whole, so a batch well under that keeps a stream
# moving whatever the far end's build; a round of 10,000 players queues thousands at once.
MAX_BATCH_ENTRIES = 512
# What a stream entry carries: ApplyMovesRequest's field and its message.
Entry = rules_pb2.ApplyMoveRequest | rules_pb2.CreateGameRequest | rules_pb2.GetViewRequest


class Transport(Exception):
    """The entry never got an answer from this stream: it may be retried elsewhere."""


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
        # How long the writer holds a first entry for others to join its message.
        self._batch_wait_s = batch_wait_s
        self._ids = itertools.count(1)
        # correlation id -> the action's future and its deadline (time.monotonic)
        self._pending: dict[int, tuple[asyncio.Future[rules_pb2.ApplyMovesResponse], float]] = {}
        self._sweeper: asyncio.TimerHandle | None = None
        # Made in start(), on the running loop (a router may be built before there is one).
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[tuple[int, str, Entry]] | None = None
        self._up = asyncio.Event()
        self._is_up = False  # _up.is_set(), read on every action without a call into asyncio
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
            self._loop = asyncio.get_running_loop()
            self._queue = asyncio.Queue()
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
            raise Transport()
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
                future.set_exception(Transport())
        if self._queue is not None:
            take_waiting(self._queue)

    async def _run(self) -> None:
        attempts = Attempts(Backoff(first_s=0.05, cap_s=1.0))
        failing = False
        while not self._closed:
            call = self._stub.ApplyMoves(metadata=self._metadata)
            # A writer that fails cancels the call: the actions in flight fail now and the stream
            # is made again, rather than queue unsent until their deadlines.
            writer = spawn(self._write(call), f"rules stream {self.name} writer", log=log, on_failure=_cancelling(call))
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
                self._up.clear()
                self._is_up = False
                raise
            finally:
                self._up.clear()
                self._is_up = False
                writer.cancel()
                call.cancel()
                self._fail_all()
            if healthy:
                attempts.reset()
                failing = False
            await attempts.failed()

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
                if wait > 0 and queue.qsize() < MAX_BATCH_ENTRIES - 1:
                    await asyncio.sleep(wait)  # (one timer a message, not an entry)
                rest = take_waiting(queue, MAX_BATCH_ENTRIES - 1)
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
