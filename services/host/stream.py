"""ApplyMoves: many games' actions on one stream (rules.proto), each through the same move path as
the unary call (MovePath.act), each in its own task, so a slow game never blocks another.

One reader takes the stream's messages (an entry, or a batch of entries as the gateway sends them)
and starts a task per entry, at most MAX_IN_FLIGHT_PER_STREAM at once; one writer (the generator)
sends the answers as they complete. A caller that batches its requests gets every answer ready at
once joined in one message: a stream message costs far more than the bytes it carries.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from functools import partial
from typing import Any

import grpc
from tafel.rules.v1 import rules_pb2

from kit import errors
from kit.errors import Refused, invalid
from kit.queues import take_waiting
from kit.tasks import spawn as supervised
from services.host import encoded
from services.host.codec import MalformedMessage
from services.host.metrics import RulesMetrics
from services.host.moves import Begun

MAX_IN_FLIGHT_PER_STREAM = 1024
log = logging.getLogger("tafel.rules")


@dataclass(frozen=True)
class StreamCalls:
    """What a stream entry may ask for: an action (its encoded ApplyMoveResponse), a new game, a
    view. Each raises Refused (or MalformedMessage) as the unary call does. `begin` and `end`: an
    action of a batch taken without a task of its own (MovePath.begin, MovePath.end)."""

    act: Callable[[rules_pb2.ApplyMoveRequest], Awaitable[bytes]]
    create: Callable[[rules_pb2.CreateGameRequest], Awaitable[rules_pb2.CreateGameResponse]]
    view: Callable[[rules_pb2.GetViewRequest], Awaitable[rules_pb2.GetViewResponse]]
    begin: Callable[[rules_pb2.ApplyMoveRequest], Begun[Any] | None]
    end: Callable[[Begun[Any]], Awaitable[bytes | None]]


class ApplyMovesStream:
    """One ApplyMoves stream: a reader starting a task per entry, a writer sending the answers."""

    def __init__(self, calls: StreamCalls, metrics: RulesMetrics) -> None:
        self.calls = calls
        self.metrics = metrics
        self.loop = asyncio.get_running_loop()
        self.answers: asyncio.Queue[bytes | None] = asyncio.Queue()  # None: the reader is done
        self.slots = asyncio.Semaphore(MAX_IN_FLIGHT_PER_STREAM)
        self.tasks: dict[int, asyncio.Task[None]] = {}  # by the number _start gave them
        self.started = 0
        self.batching = False  # the caller batches: so are the answers

    async def run(
        self,
        requests: AsyncIterator[rules_pb2.ApplyMovesRequest],
        context: grpc.aio.ServicerContext[rules_pb2.ApplyMovesRequest, bytes],
    ) -> AsyncGenerator[bytes, None]:
        """The writer: the answers as they complete (encoded ApplyMovesResponses; when the caller
        batches, those ready at once joined in one)."""
        await context.send_initial_metadata(())  # the caller's stream is open before the first answer
        self.metrics.open_streams.inc()
        # Its failure ends the stream (read's finally); supervised, so it is also logged.
        reader = supervised(self._read(requests), "rules stream reader", log=log)
        try:
            while True:
                answer = await self.answers.get()
                if answer is None:
                    break
                rest = take_waiting(self.answers) if self.batching else []
                if not rest:
                    yield answer
                    continue
                batch, ended = [answer], False
                for more in rest:
                    if more is None:
                        ended = True
                        break
                    batch.append(more)
                yield encoded.answer_batch(batch)
                if ended:
                    break
        finally:
            self.metrics.open_streams.dec()
            reader.cancel()
            for task in tuple(self.tasks.values()):
                task.cancel()

    async def _read(self, requests: AsyncIterator[rules_pb2.ApplyMovesRequest]) -> None:
        slots = self.slots
        try:
            async for message in requests:
                if message.HasField("request") or message.HasField("create") or message.HasField("view"):
                    await slots.acquire()
                    self._start(message)
                if message.batch:
                    self.batching = True
                    begun: list[tuple[rules_pb2.ApplyMovesRequest, Begun[Any]]] = []
                    for item in message.batch:
                        if begun and slots.locked():
                            # The begun actions' slots come free only once their replies are
                            # read: hand them to a task before waiting for one, or a batch of
                            # more than the slots waits on itself and the stream reads no more.
                            self._spawn(partial(self._end_batch, begun))
                            begun = []
                        await slots.acquire()
                        started = self._begin(item)
                        if started is not None:
                            begun.append((item, started))
                    if begun:
                        self._spawn(partial(self._end_batch, begun))
            if self.tasks:
                await asyncio.gather(*self.tasks.values(), return_exceptions=True)
        finally:
            self.answers.put_nowait(None)

    def _spawn(self, work: Callable[[int], Coroutine[Any, Any, None]]) -> None:
        """A task on the stream's books (`work` takes itself off them by its number at its end; no
        done callback: one loop callback a move fewer). Not supervised: every entry's failure
        becomes its refusal (and a bug is logged) where it happens."""
        self.started += 1
        self.tasks[self.started] = self.loop.create_task(work(self.started))

    def _start(self, message: rules_pb2.ApplyMovesRequest) -> None:
        """The entry in a task of its own; it holds one of the stream's slots."""
        self._spawn(partial(self._entry, message))

    def _begin(self, message: rules_pb2.ApplyMovesRequest) -> Begun[Any] | None:
        """A batch's entry: its action begun without a task (MovePath.begin), else answered now
        (a refusal) or started as any entry. Holds one of the stream's slots."""
        if not message.HasField("request"):
            self._start(message)
            return None
        try:
            begun = self.calls.begin(message.request)
        except MalformedMessage as bad:
            self._answer(refusal(message.correlation_id, invalid(bad.reason, bad.message)))
            return None
        except Refused as refused:
            self._answer(refusal(message.correlation_id, refused))
            return None
        if begun is None:
            self._start(message)
        return begun

    async def _end_batch(self, begun: list[tuple[rules_pb2.ApplyMovesRequest, Begun[Any]]], number: int) -> None:
        """The begun actions' answers, in the order their commits went out (one connection
        answers in order)."""
        waiting = iter(begun)
        try:
            for message, one in waiting:
                correlation_id = message.correlation_id
                try:
                    applied = await self.calls.end(one)
                    if applied is None:
                        self._start(message)  # act() from the start; the slot goes with it
                        continue
                    answer = encoded.applied_answer(correlation_id, applied)
                except Refused as refused:
                    answer = refusal(correlation_id, refused)
                except Exception:
                    log.exception("action failed", extra={"correlation_id": correlation_id})
                    answer = refusal(correlation_id, Refused(grpc.StatusCode.INTERNAL, "INTERNAL", errors.INTERNAL))
                self._answer(answer)
        finally:
            for _, one in waiting:  # the stream ended first: nobody reads these replies
                one.future.cancel()
            self.tasks.pop(number, None)

    def _answer(self, answer: bytes) -> None:
        """An entry's answer to the writer; its slot free again."""
        self.slots.release()
        self.answers.put_nowait(answer)

    async def _entry(self, message: rules_pb2.ApplyMovesRequest, number: int) -> None:
        """One entry answered: its result or its refusal, never nothing."""
        correlation_id = message.correlation_id
        try:
            if message.HasField("request"):
                answer = encoded.applied_answer(correlation_id, await self.calls.act(message.request))
            else:
                response = rules_pb2.ApplyMovesResponse(correlation_id=correlation_id)
                if message.HasField("create"):
                    response.created.CopyFrom(await self.calls.create(message.create))
                else:
                    response.viewed.CopyFrom(await self.calls.view(message.view))
                answer = response.SerializeToString()
        except MalformedMessage as bad:
            answer = refusal(correlation_id, invalid(bad.reason, bad.message))
        except Refused as refused:
            answer = refusal(correlation_id, refused)
        except Exception:
            # A bug: this entry is refused INTERNAL now (the gateway's caller would wait for its
            # deadline), without the exception's text; logged once, here.
            log.exception("action failed", extra={"correlation_id": correlation_id})
            answer = refusal(correlation_id, Refused(grpc.StatusCode.INTERNAL, "INTERNAL", errors.INTERNAL))
        except BaseException:  # cancelled with the stream: nobody reads an answer
            self.slots.release()
            raise
        finally:
            self.tasks.pop(number, None)
        self._answer(answer)


def refusal(correlation_id: int, refused: Refused) -> bytes:
    """The encoded ApplyMovesResponse refusing an entry."""
    response = rules_pb2.ApplyMovesResponse(correlation_id=correlation_id)
    response.refusal.code = refused.code.value[0]
    response.refusal.reason = refused.reason
    response.refusal.message = refused.message
    if refused.current_version is not None:
        response.refusal.current_version = refused.current_version
    return response.SerializeToString()
