"""Connect endpoints over the gateway's gRPC method handlers: each call runs the handler the
native server runs, with an EdgeContext. Unary and server-streaming methods are served; the
bidirectional Play stream answers UNIMPLEMENTED with where to find it (native gRPC)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import Endpoint

from gateway.web.context import EdgeContext
from gateway.web.methods import Method

log = logging.getLogger("tafel.gateway.web")

FAILED = "the gateway could not complete the call; retry later"


def _info(method: Method, stream_type: StreamType) -> MethodInfo[Any, Any]:
    return MethodInfo(
        name=method.name,
        service_name=method.service,
        input=method.input,
        output=method.output,
        idempotency_level=IdempotencyLevel.UNKNOWN,
        stream_type=stream_type,
    )


def _unexpected(method: Method) -> ConnectError:
    # Like grpc.aio for an unhandled error: UNKNOWN, and the cause stays in the log.
    log.exception("unexpected error", extra={"method": method.path})
    return ConnectError(Code.UNKNOWN, FAILED)


def _unary(method: Method) -> Endpoint[Any, Any]:
    behaviour = method.handler.unary_unary

    async def call(request: Any, ctx: RequestContext[Any, Any]) -> Any:
        try:
            return await behaviour(request, EdgeContext(ctx))
        except ConnectError:
            raise
        except Exception:
            raise _unexpected(method) from None

    return Endpoint.unary(_info(method, StreamType.UNARY), call)


def _server_stream(method: Method) -> Endpoint[Any, Any]:
    behaviour = method.handler.unary_stream
    output = method.output

    async def call(request: Any, ctx: RequestContext[Any, Any]) -> AsyncIterator[Any]:
        # Event streams may hand over responses already encoded (shared by every watcher of a game):
        # binary bodies send them as they are, JSON bodies need the message back.
        as_json = "json" in ctx.request_headers.get("content-type", "")
        responses = behaviour(request, EdgeContext(ctx))
        try:
            async for response in responses:
                yield output.FromString(response) if as_json and type(response) is bytes else response
        except ConnectError:
            raise
        except Exception:
            raise _unexpected(method) from None
        finally:
            await responses.aclose()

    return Endpoint.server_stream(_info(method, StreamType.SERVER_STREAM), call)


def _not_on_the_web(method: Method) -> Endpoint[Any, Any]:
    async def call(requests: AsyncIterator[Any], ctx: RequestContext[Any, Any]) -> AsyncIterator[Any]:
        raise ConnectError(
            Code.UNIMPLEMENTED,
            f"{method.name} is a bidirectional stream, which browsers cannot open: use the native gRPC API "
            "for it, or SubmitMove and WatchGame here",
        )
        yield  # an async generator, as the endpoint type asks

    return Endpoint.bidi_stream(_info(method, StreamType.BIDI_STREAM), call)


def endpoints_of(methods: list[Method]) -> Mapping[str, Endpoint[Any, Any]]:
    table: dict[str, Endpoint[Any, Any]] = {}
    for method in methods:
        if method.bidirectional:
            table[method.path] = _not_on_the_web(method)
        elif method.server_streaming:
            table[method.path] = _server_stream(method)
        else:
            table[method.path] = _unary(method)
    return table
