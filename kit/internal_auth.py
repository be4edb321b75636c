"""Internal calls carry a shared secret: a rules service started with TAFEL_INTERNAL_SECRET answers
only callers that send it (the gateways) in the ``x-tafel-internal`` metadata; everyone else gets
UNAUTHENTICATED before any servicer runs. Health checks stay open (orchestrators probe them).

With mutual TLS (TAFEL_TLS_CLIENT_CA) the transport already proves the caller; the secret is the
cheaper guard for deployments that terminate TLS elsewhere or run on a private network, and the
two together are defence in depth."""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from kit.errors import Refused, abort_stream, status_of

HEADER = "x-tafel-internal"
_OPEN = ("/grpc.health.v1.Health/",)


def internal_metadata(secret: str) -> tuple[tuple[str, str], ...]:
    """What an internal caller adds to each call (nothing when no secret is configured)."""
    return ((HEADER, secret),) if secret else ()


def _refusal_handler(method_is_streaming: bool) -> grpc.RpcMethodHandler:
    refused = Refused(
        grpc.StatusCode.UNAUTHENTICATED, "INTERNAL_ONLY", "this service answers only the platform's gateways"
    )
    status = status_of(refused)

    async def refuse(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await context.abort(status.code, status.details, status.trailing_metadata)

    async def refuse_stream(requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        await abort_stream(requests, context, refused)
        yield None  # pragma: no cover - abort raises

    # The request is never read, so an undecodable one is refused the same way.
    if method_is_streaming:
        return grpc.stream_stream_rpc_method_handler(refuse_stream)
    return grpc.unary_unary_rpc_method_handler(refuse)


class InternalAuth(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    def __init__(self, secret: str) -> None:
        self._secret = secret.encode()
        self._unary = _refusal_handler(False)
        self._streaming = _refusal_handler(True)

    def allowed(self, metadata: Any) -> bool:
        for key, value in metadata or ():
            if key == HEADER:
                given = value if isinstance(value, bytes) else str(value).encode()
                return hmac.compare_digest(given, self._secret)
        return False

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        method: str = handler_call_details.method
        if method.startswith(_OPEN) or self.allowed(handler_call_details.invocation_metadata):
            return await continuation(handler_call_details)
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        return self._streaming if handler.request_streaming else self._unary
