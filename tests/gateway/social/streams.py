"""An account's event stream held open in a test: events collected as they come."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import grpc
from tafel.play.v1 import challenges_pb2, challenges_pb2_grpc

from tests.gateway.standing.helpers import Person


class Events:
    def __init__(self, person: Person, after: str = "", channel: grpc.aio.Channel | None = None) -> None:
        stub = challenges_pb2_grpc.EventServiceStub(channel or person.channel)
        self.call = stub.WatchMyEvents(challenges_pb2.WatchMyEventsRequest(after_event_id=after), metadata=person.md)
        self.events: list[challenges_pb2.AccountEvent] = []
        self.ready: challenges_pb2.EventStreamReady | None = None
        self.error: grpc.aio.AioRpcError | None = None
        self._changed = asyncio.Event()
        self._task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            async for message in self.call:
                if message.HasField("ready"):
                    self.ready = message.ready
                else:
                    self.events.append(message.event)
                self._changed.set()
        except grpc.aio.AioRpcError as error:
            self.error = error
            self._changed.set()

    async def started(self) -> Events:
        await self.until(lambda: self.ready is not None)
        return self

    async def until(self, predicate: Callable[[], Any], timeout_s: float = 10.0) -> None:
        async with asyncio.timeout(timeout_s):
            while True:
                self._changed.clear()  # before looking: a message after the look sets it again
                if predicate():
                    return
                if self.error is not None:
                    raise AssertionError(f"the event stream ended: {self.error}")
                await self._changed.wait()

    def of(self, kind: str) -> list[Any]:
        return [getattr(e, kind) for e in self.events if e.WhichOneof("kind") == kind]

    @property
    def last_id(self) -> str:
        return self.events[-1].event_id if self.events else (self.ready.last_event_id if self.ready else "")

    async def close(self) -> None:
        self.call.cancel()
        self._task.cancel()
