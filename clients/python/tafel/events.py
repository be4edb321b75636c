"""The account's event stream (EventService.WatchMyEvents): challenges to and by you, games that
start for you, offers in your games. One per client, resumed by itself after a cut:

    async with client.event_stream() as events:      # live once this line is done
        pending = await client.list_challenges()     # what waited before: no gap, see below
        async for event in events:
            if event.WhichOneof("kind") == "challenge": ...

Every event has an id (`event.event_id`, increasing per account). When the stream breaks (a
dropped connection, a gateway killed or stopping), it opens again, on whichever gateway the
channel reaches, after the last id it handed out: every event after it comes once, in order;
nothing is lost or doubled. A stream opened without an id starts at the account's newest event
(the server's `ready` says which), and a cut before the first event resumes from there too, so
what happens while it reconnects is never skipped. Read what was pending before with
`list_challenges` after entering: a challenge made in between shows in both (tell them apart by
challenge_id).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

import grpc

from tafel.errors import TafelError, Unavailable, from_rpc_error
from tafel.play.v1 import challenges_pb2, challenges_pb2_grpc
from tafel.requests import is_after
from tafel.retry import STREAM_RETRYABLE, Attempts, Link


class Connection(Protocol):
    """What the stream needs of its client (a TafelClient)."""

    @property
    def events(self) -> challenges_pb2_grpc.EventServiceStub: ...

    def metadata(self) -> tuple[tuple[str, str], ...]: ...


class AccountEventStream:
    """Use as `async with client.event_stream(...) as events: async for event in events`."""

    def __init__(
        self,
        client: Connection,
        after_event_id: str = "",
        *,
        max_retries: int | None,
        on_connection: Callable[[bool], Awaitable[None]] | None = None,
    ) -> None:
        self.client = client
        # The last event handed out (or, before the first, where the stream started): the resume point.
        self.last_event_id = after_event_id
        self.attempts = Attempts(max_retries)
        self.link = Link(on_connection)
        self._ready = asyncio.Event()
        self._responses: AsyncGenerator[challenges_pb2.AccountEvent | None, None] | None = None
        self._pending: asyncio.Future[challenges_pb2.AccountEvent | None] | None = None
        self.resumed_from: list[str] = []  # after_event_id of every reopening (for tests and logs)

    async def __aenter__(self) -> AccountEventStream:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Open the stream and wait until the gateway has it live (its `ready`)."""
        while not self._ready.is_set():
            if await self._next(None) is not None:  # pragma: no cover - the server sends ready first
                raise TafelError("NO_READY", "the event stream sent an event before it was ready")

    async def close(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)
        if self._responses is not None:
            await self._responses.aclose()

    def __aiter__(self) -> AsyncIterator[challenges_pb2.AccountEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[challenges_pb2.AccountEvent]:
        while True:
            try:
                yield await self.next_event()
            except StopAsyncIteration:
                return

    async def next_event(self, timeout: float | None = None) -> challenges_pb2.AccountEvent:
        """The next event; TimeoutError after `timeout` seconds (the stream stays as it was)."""
        while True:
            event = await self._next(timeout)
            if event is not None:
                return event

    async def _next(self, timeout: float | None) -> challenges_pb2.AccountEvent | None:
        # One read in flight across timeouts: cancelling the generator's step would end it.
        if self._responses is None:
            self._responses = self._run()
        if self._pending is None:
            self._pending = asyncio.ensure_future(self._responses.__anext__())
        done, _ = await asyncio.wait((self._pending,), timeout=timeout)
        if not done:
            raise TimeoutError
        step, self._pending = self._pending, None
        return step.result()

    async def _run(self) -> AsyncGenerator[challenges_pb2.AccountEvent | None, None]:
        """Yields None for each `ready` (the stream is live) and every event once, reopening the
        call after a cut from the last id handed out."""
        while True:
            request = challenges_pb2.WatchMyEventsRequest(after_event_id=self.last_event_id)
            if self._ready.is_set():
                self.resumed_from.append(self.last_event_id)
            call: Any = self.client.events.WatchMyEvents(request, metadata=self.client.metadata())
            try:
                async for response in call:
                    self.attempts.reset()
                    if response.WhichOneof("kind") == "ready":
                        if not self.last_event_id:
                            # Started "from now": resume from this point, not from a later "now"
                            # ("0-0", the stream's start, for an account that had no event yet).
                            self.last_event_id = response.ready.last_event_id or "0-0"
                        self._ready.set()
                        await self.link.up()
                        yield None
                        continue
                    event = response.event
                    if self.last_event_id and not is_after(event.event_id, self.last_event_id):
                        continue  # defensive: never hand an event out twice
                    self.last_event_id = event.event_id
                    yield event
                # The server ends the stream only with an error; an OK end is a gateway going away.
            except grpc.aio.AioRpcError as error:
                # CANCELLED: the server's (a gateway whose stop grace ran out): this side's own
                # cancellation surfaces as asyncio's.
                if error.code() not in STREAM_RETRYABLE or self.attempts.exhausted:
                    raise from_rpc_error(error) from None
            finally:
                call.cancel()
            await self.link.down()
            if self.attempts.exhausted:
                raise Unavailable("UNAVAILABLE", "the event stream could not be resumed")
            await self.attempts.failed()
