"""Requests that do not decode answer INVALID_ARGUMENT with a plain message, on every RPC.

grpc.aio runs a method's request deserializer itself; when it raises (a DecodeError on random
bytes) the call ends UNKNOWN with the exception's text, or INTERNAL on a bidirectional stream. A
server interceptor wraps every method handler once: its deserializer turns a failure into an
`Undecodable` marker, and the wrapped behaviour answers the marker with INVALID_ARGUMENT
(reason MALFORMED_REQUEST) before the servicer sees it. Streams check every message they read.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from kit.errors import invalid, status_of

REASON = "MALFORMED_REQUEST"


class Undecodable:
    """What a wrapped deserializer returns for bytes that are not a request of the method."""

    __slots__ = ()


_UNDECODABLE = Undecodable()


def _tolerant(deserializer: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def deserialize(raw: bytes) -> Any:
        try:
            return deserializer(raw)
        except Exception:  # DecodeError, or anything a generated parser raises on hostile bytes
            return _UNDECODABLE

    return deserialize


async def _refuse(context: grpc.aio.ServicerContext[Any, Any], method: str) -> None:
    name = method.rsplit("/", 1)[-1]
    status = status_of(invalid(REASON, f"the request is not a valid {name} request message"))
    await context.abort(status.code, status.details, status.trailing_metadata)


async def _checked(
    requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any], method: str
) -> AsyncIterator[Any]:
    async for request in requests:
        if request is _UNDECODABLE:
            await _refuse(context, method)
        yield request


def handler_factory(request_streaming: bool, response_streaming: bool) -> Callable[..., grpc.RpcMethodHandler]:
    """The grpc constructor of a method handler of this arity (interceptors rebuild handlers)."""
    made: Callable[..., grpc.RpcMethodHandler]
    if request_streaming:
        made = grpc.stream_stream_rpc_method_handler if response_streaming else grpc.stream_unary_rpc_method_handler
    else:
        made = grpc.unary_stream_rpc_method_handler if response_streaming else grpc.unary_unary_rpc_method_handler
    return made


def _wrap(handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
    deserializer = _tolerant(handler.request_deserializer)
    serializer = handler.response_serializer
    if not handler.request_streaming:
        inner: Any = handler.unary_stream if handler.response_streaming else handler.unary_unary
        if handler.response_streaming and inspect.isasyncgenfunction(inner):

            async def unary_gen(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
                if request is _UNDECODABLE:
                    await _refuse(context, method)
                async for response in inner(request, context):
                    yield response

            return grpc.unary_stream_rpc_method_handler(unary_gen, deserializer, serializer)

        async def unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            if request is _UNDECODABLE:
                await _refuse(context, method)
            result = inner(request, context)
            return await result if inspect.isawaitable(result) else result

        return handler_factory(False, handler.response_streaming)(unary, deserializer, serializer)
    inner = handler.stream_stream if handler.response_streaming else handler.stream_unary
    if handler.response_streaming and inspect.isasyncgenfunction(inner):

        async def stream_gen(
            requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            async for response in inner(_checked(requests, context, method), context):
                yield response

        return grpc.stream_stream_rpc_method_handler(stream_gen, deserializer, serializer)

    async def stream(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        result = inner(_checked(requests, context, method), context)
        return await result if inspect.isawaitable(result) else result

    return handler_factory(True, handler.response_streaming)(stream, deserializer, serializer)


class WrappedHandlers:
    """Method handlers wrapped once each, for interceptors that rebuild them: keyed by the
    handler itself, since every server of a group (kit/server.py ServerGroup) has its own."""

    def __init__(self, wrap: Callable[[grpc.RpcMethodHandler, str], grpc.RpcMethodHandler]) -> None:
        self._wrap = wrap
        self._made: dict[tuple[str, int], tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def of(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        key = (method, id(handler))
        made = self._made.get(key)
        if made is not None and made[0] is handler:  # (the id of a handler no longer alive is not it)
            return made[1]
        wrapped = self._wrap(handler, method)
        self._made[key] = (handler, wrapped)
        return wrapped


class UndecodableGuard(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Wraps each method's handler the first time it is called (cached: no cost per call after)."""

    def __init__(self) -> None:
        self._wrapped = WrappedHandlers(_wrap)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None or handler.request_deserializer is None:
            return handler
        return self._wrapped.of(handler, handler_call_details.method)
