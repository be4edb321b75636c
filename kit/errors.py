"""Refusals: a gRPC status, a stable machine reason and a readable message.

On unary calls they travel as the status with a `google.rpc.ErrorInfo` in the details; on streams
as a `Refusal` message. Never a stack trace, never `str(exc)` of an unexpected error.

A handler raises `Refused` for a domain refusal and lets Redis failures (`RedisError`) propagate;
one decorator turns both into the call's status, for unary and server-streaming handlers alike:

    @refusing("game storage is unavailable; retry")
    async def GetGame(self, request, context): ...          # unary
    @refusing("the lobby's storage is unavailable; retry")
    async def WatchRoom(self, request, context): ... yield  # server streaming

A Redis outage (`is_outage`: the connection lost or timed out, or Redis answering that it cannot
serve now: LOADING, BUSY, READONLY, CLUSTERDOWN, TRYAGAIN, OOM, ...) becomes UNAVAILABLE /
STORE_UNAVAILABLE with the decorator's message (retryable, readable, never the exception's text).
Any other error reply is Redis refusing a command we built, which no retry mends: a bug (a
caller's value that should have been refused before it reached Redis), logged and answered
INTERNAL like any other, never UNAVAILABLE. Where a refusal travels as a message instead (the Play
stream's `Refusal`), `as_refused(error, message)` gives the same mapping for one action.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, NoReturn, TypeVar, cast

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status
from redis.exceptions import (
    ClusterDownError,
    DataError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisError,
    ResponseError,
    TryAgainError,
)

DOMAIN = "tafel.games"
FIRST_MESSAGE_WAIT_S = 0.25


class Refused(Exception):
    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        *,
        current_version: int | None = None,
        metadata: dict[str, str] | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s  # sent as google.rpc.RetryInfo (rate limits)
        self.code = code
        self.reason = reason
        self.message = message
        self.current_version = current_version
        self.metadata = dict(metadata or {})
        if current_version is not None:
            self.metadata["current_version"] = str(current_version)


def invalid(reason: str, message: str, **metadata: str) -> Refused:
    return Refused(grpc.StatusCode.INVALID_ARGUMENT, reason, message, metadata=metadata)


STORE_UNAVAILABLE = "storage is unavailable; retry"
INTERNAL = "the server failed to answer; retry"
_log = logging.getLogger("tafel.errors")


def store_unavailable(message: str = STORE_UNAVAILABLE) -> Refused:
    """Redis could not be reached: UNAVAILABLE (retry), reason STORE_UNAVAILABLE."""
    return Refused(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE", message)


# Error replies that say Redis cannot serve now (a replica promoted, a load, a script running, a
# full memory): the same as a lost connection to the caller. The pipelined connection
# (kit/redis/pipe.py) raises every error reply as a plain ResponseError, hence the prefixes.
_OUTAGE_REPLIES = (ReadOnlyError, ClusterDownError, TryAgainError, OutOfMemoryError, NoScriptError)
_OUTAGE_PREFIXES = frozenset(
    {
        "LOADING",
        "BUSY",
        "READONLY",
        "MASTERDOWN",
        "CLUSTERDOWN",
        "TRYAGAIN",
        "OOM",
        "NOREPLICAS",
        "NOSCRIPT",
        "MISCONF",
        "MOVED",
        "ASK",
        "UNBLOCKED",
    }
)


def is_outage(error: RedisError) -> bool:
    """True when `error` means Redis could not serve (retry later); False when Redis refused the
    command itself (an error reply such as ERR or WRONGTYPE, or a value redis-py would not send):
    retrying that command cannot succeed."""
    if isinstance(error, DataError):
        return False
    if not isinstance(error, ResponseError) or isinstance(error, _OUTAGE_REPLIES):
        return True
    words = str(error).split(maxsplit=1)
    return bool(words) and words[0] in _OUTAGE_PREFIXES


def as_refused(error: Refused | RedisError, message: str = STORE_UNAVAILABLE) -> Refused:
    """The refusal to answer for `error`: itself, STORE_UNAVAILABLE (with `message`) for a Redis
    outage, or INTERNAL (logged) for a command Redis refused. For refusals that travel as
    messages: `except (Refused, RedisError) as e`."""
    if isinstance(error, Refused):
        return error
    if is_outage(error):
        return store_unavailable(message)
    _log.error("redis refused a command", exc_info=error)
    return Refused(grpc.StatusCode.INTERNAL, "INTERNAL", INTERNAL)


Handler = TypeVar("Handler", bound=Callable[..., Any])


def refusing(message: str = STORE_UNAVAILABLE, *, internal: str = INTERNAL) -> Callable[[Handler], Handler]:
    """Decorate a gRPC handler `(self, request, context)` (a coroutine or an async generator):
    `Refused` aborts the call with its status, a Redis outage with STORE_UNAVAILABLE and
    `message`. Any other exception (a bug, or a command Redis refused) is logged with its stack
    and the call ends INTERNAL with `internal`: gRPC's own answer, UNKNOWN "Unexpected <class>:
    <text>", would show the caller the exception's text."""

    def refusal_for(error: Exception) -> Refused | None:
        if isinstance(error, Refused) or (isinstance(error, RedisError) and is_outage(error)):
            return as_refused(error, message)
        if isinstance(error, grpc.aio.AbortError) or getattr(error, ABORTED, False):
            return None
        _log.exception("call failed")
        return Refused(grpc.StatusCode.INTERNAL, "INTERNAL", internal)

    async def answer(error: Exception, context: grpc.aio.ServicerContext[object, object]) -> NoReturn:
        """End the call with the status `error` maps to; an abort on its way out goes on as it is."""
        refused = refusal_for(error)
        if refused is None:
            raise error
        await abort(context, refused)

    def decorate(handler: Handler) -> Handler:
        if inspect.isasyncgenfunction(handler):

            @functools.wraps(handler)
            async def streaming(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
                try:
                    async with contextlib.aclosing(handler(*args, **kwargs)) as responses:
                        async for response in responses:
                            yield response
                except Exception as error:
                    await answer(error, _context_of(args, kwargs))

            return cast(Handler, streaming)

        @functools.wraps(handler)
        async def unary(*args: Any, **kwargs: Any) -> Any:
            try:
                return await handler(*args, **kwargs)
            except Exception as error:
                await answer(error, _context_of(args, kwargs))

        return cast(Handler, unary)

    return decorate


def _context_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> grpc.aio.ServicerContext[object, object]:
    # Not an isinstance check: the web edge passes its own context with the same abort().
    context: grpc.aio.ServicerContext[object, object] = kwargs["context"] if "context" in kwargs else args[-1]
    return context


def status_of(refused: Refused) -> grpc.Status:
    info = error_details_pb2.ErrorInfo(reason=refused.reason, domain=DOMAIN, metadata=refused.metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    details = [detail]
    if refused.retry_after_s is not None:
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromNanoseconds(max(1, int(refused.retry_after_s * 1e9)))
        details.append(any_pb2.Any())
        details[-1].Pack(retry)
    code_value: int = refused.code.value[0]
    status = status_pb2.Status(code=code_value, message=refused.message, details=details)
    return rpc_status.to_status(status)


ABORTED = "tafel_aborted"  # set on what a context's abort() raised, so @refusing lets it through


async def abort(context: grpc.aio.ServicerContext[object, object], refused: Refused) -> NoReturn:
    status = status_of(refused)
    try:
        await context.abort(status.code, status.details, status.trailing_metadata)
    except Exception as raised:
        # grpc.aio raises AbortError; the web edge's context (gateway/web) a ConnectError. Either
        # is the call's answer on its way out, not a failure of the handler.
        setattr(raised, ABORTED, True)
        raise
    raise AssertionError("unreachable: abort raises")


async def abort_stream(
    requests: AsyncIterator[object], context: grpc.aio.ServicerContext[object, object], refused: Refused
) -> NoReturn:
    """Refuse a client-streaming call: take the caller's first message if it comes at once, then
    abort. Ending the stream while that message is still on its way makes the caller's gRPC client
    report INTERNAL ("Internal error from Core", set by the client when its write fails) instead
    of the refusal. A caller that sends nothing is refused after FIRST_MESSAGE_WAIT_S."""
    iterator = aiter(requests)
    with contextlib.suppress(StopAsyncIteration, TimeoutError, grpc.aio.AioRpcError):
        await asyncio.wait_for(anext(iterator), FIRST_MESSAGE_WAIT_S)
    await abort(context, refused)


def retry_delay_of(error: grpc.aio.AioRpcError | grpc.RpcError) -> float | None:
    """The google.rpc.RetryInfo delay of a failed call (client side) in seconds, or None."""
    status = rpc_status.from_call(error)
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return float(info.retry_delay.ToNanoseconds()) / 1e9
    return None


def reason_of(error: grpc.aio.AioRpcError | grpc.RpcError) -> str | None:
    """The ErrorInfo reason of a failed call (client side), or None."""
    status = rpc_status.from_call(error)
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return str(info.reason)
    return None


UNAVAILABLE_CODE = code_pb2.UNAVAILABLE
