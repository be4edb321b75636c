"""The diagnostics service every server offers: empty unary and streamed round trips."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
from tafel.diagnostics.v1 import diagnostics_pb2, diagnostics_pb2_grpc


class DiagnosticsServicer(diagnostics_pb2_grpc.DiagnosticsServiceServicer):
    async def Echo(
        self, request: diagnostics_pb2.EchoRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> diagnostics_pb2.EchoResponse:
        return diagnostics_pb2.EchoResponse(nonce=request.nonce)

    async def EchoStream(
        self,
        request_iterator: AsyncIterator[diagnostics_pb2.EchoStreamRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[diagnostics_pb2.EchoStreamResponse]:
        async for message in request_iterator:
            yield diagnostics_pb2.EchoStreamResponse(nonce=message.nonce)


SERVICE_NAME = diagnostics_pb2.DESCRIPTOR.services_by_name["DiagnosticsService"].full_name
