"""A server stream that opens with a `ready` and then sends items with increasing ids, reopened by
itself after a cut from the last id it handed out: the account's event stream (tafel/events.py)
and a chat channel's watch (tafel/chat.py) both are one.

Reading is done one step at a time with a single read in flight (`next_item(timeout)`), so a
caller may wait with a timeout and try again without ending the stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, Generic, TypeVar

import grpc

from tafel.errors import TafelError, Unavailable, from_rpc_error
from tafel.requests import is_after
from tafel.retry import STREAM_RETRYABLE, Attempts, Link

Item = TypeVar("Item")


class ResumingStream(Generic[Item]):
    """Use as `async with stream: async for item in stream`. Subclasses say how to open the call
    (`open_call`) and what a response holds (`ready_of`, `item_of`, `id_of`)."""

    what = "the stream"  # in the error when it cannot be resumed

    def __init__(
        self,
        after_id: str = "",
        *,
        max_retries: int | None,
        on_connection: Callable[[bool], Awaitable[None]] | None = None,
    ) -> None:
        # The last item handed out (or where the stream was positioned): the resume point.
        self.last_id = after_id
        self.attempts = Attempts(max_retries)
        self.link = Link(on_connection)
        self._ready = asyncio.Event()
        self._responses: AsyncGenerator[Item | None, None] | None = None
        self._pending: asyncio.Future[Item | None] | None = None
        self.resumed_from: list[str] = []  # the resume point of every reopening (for tests and logs)

    # -- what a subclass says ---------------------------------------------------------------------

    def open_call(self) -> Any:
        """The server-streaming call, opened after `self.last_id`."""
        raise NotImplementedError

    def ready_of(self, response: Any) -> Any | None:
        """The response's `ready`, or None when it carries an item."""
        raise NotImplementedError

    def item_of(self, response: Any) -> Item:
        raise NotImplementedError

    def items_of(self, response: Any) -> list[Item]:
        """The items a response carries, in order (one, unless the stream sends them in batches)."""
        return [self.item_of(response)]

    def id_of(self, item: Item) -> str:
        raise NotImplementedError

    def on_ready(self, ready: Any) -> None:
        """Each `ready` (the first and every reopening's): a subclass keeps what it says."""

    # -- reading ------------------------------------------------------------------------------------

    async def __aenter__(self) -> ResumingStream[Item]:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Open the stream and wait until the gateway has it live (its `ready`)."""
        while not self._ready.is_set():
            if await self._next(None) is not None:  # pragma: no cover - the server sends ready first
                raise TafelError("NO_READY", f"{self.what} sent an item before it was ready")

    async def close(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)
        if self._responses is not None:
            await self._responses.aclose()

    def __aiter__(self) -> AsyncIterator[Item]:
        return self._items()

    async def _items(self) -> AsyncIterator[Item]:
        while True:
            try:
                yield await self.next_item()
            except StopAsyncIteration:
                return

    async def next_item(self, timeout: float | None = None) -> Item:
        """The next item; TimeoutError after `timeout` seconds (the stream stays as it was)."""
        while True:
            item = await self._next(timeout)
            if item is not None:
                return item

    async def _next(self, timeout: float | None) -> Item | None:
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

    async def _run(self) -> AsyncGenerator[Item | None, None]:
        """Yields None for each `ready` (the stream is live) and every item once, reopening the
        call after a cut from the last id handed out."""
        while True:
            if self._ready.is_set():
                self.resumed_from.append(self.last_id)
            call: Any = self.open_call()
            try:
                async for response in call:
                    self.attempts.reset()
                    ready = self.ready_of(response)
                    if ready is not None:
                        self.on_ready(ready)
                        self._ready.set()
                        await self.link.up()
                        yield None
                        continue
                    for item in self.items_of(response):
                        if self.last_id and not is_after(self.id_of(item), self.last_id):
                            continue  # defensive: never hand an item out twice
                        self.last_id = self.id_of(item)
                        yield item
                # The server ends the stream only with an error; an OK end is a gateway going away.
            except grpc.aio.AioRpcError as error:
                # UNAVAILABLE: a cut, or a gateway stopping (SHUTTING_DOWN). CANCELLED: the server's
                # (a gateway whose stop grace ran out): this side's own cancellation is asyncio's.
                if error.code() not in STREAM_RETRYABLE or self.attempts.exhausted:
                    raise from_rpc_error(error) from None
            finally:
                call.cancel()
            await self.link.down()
            if self.attempts.exhausted:
                raise Unavailable("UNAVAILABLE", f"{self.what} could not be resumed")
            await self.attempts.failed()
