"""A Connect-protocol client shaped like grpc.aio.Channel, over httpx: the generated stubs (and the
Python SDK, which takes a channel) call the web edge (gateway/web) with it exactly as they call the
native gateway. Refusals come back as grpc.aio.AioRpcError with the same code, message and
`grpc-status-details-bin` (google.rpc.Status with the ErrorInfo), so client code sees no difference.

Unary calls: `POST /<service>/<method>` with `application/proto` or `application/json`.
Server streams: `application/connect+proto|json`, enveloped (1 flag byte, 4-byte length); the
end-of-stream envelope (flag 0x02) is JSON with the error, if any. Used by tests/web and
tools/bench_edge.py.
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc
import httpx
from google.protobuf import any_pb2, json_format
from google.protobuf.message import Message
from google.rpc import status_pb2

Metadata = Sequence[tuple[str, str | bytes]]

# Connect's error codes (connectrpc.com/docs/protocol#error-codes) and its HTTP fallbacks.
_CODES = {("canceled" if c is grpc.StatusCode.CANCELLED else c.name.lower()): c for c in grpc.StatusCode}
_HTTP_CODES = {
    400: grpc.StatusCode.INTERNAL,
    401: grpc.StatusCode.UNAUTHENTICATED,
    403: grpc.StatusCode.PERMISSION_DENIED,
    404: grpc.StatusCode.UNIMPLEMENTED,
    429: grpc.StatusCode.UNAVAILABLE,
    502: grpc.StatusCode.UNAVAILABLE,
    503: grpc.StatusCode.UNAVAILABLE,
    504: grpc.StatusCode.UNAVAILABLE,
}
_END_STREAM = 0x02


def _b64decode(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


def _reason(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"


def rpc_error(error: dict[str, Any] | None, http_status: int = 200) -> grpc.aio.AioRpcError:
    """A Connect error object as the AioRpcError grpc would raise for the same status."""
    if not error:
        code = _HTTP_CODES.get(http_status, grpc.StatusCode.UNKNOWN)
        return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), f"HTTP {http_status}")
    code = _CODES.get(str(error.get("code", "")), grpc.StatusCode.UNKNOWN)
    message = str(error.get("message", ""))
    status = status_pb2.Status(code=code.value[0], message=message)
    for detail in error.get("details", ()):
        status.details.append(
            any_pb2.Any(type_url=f"type.googleapis.com/{detail['type']}", value=_b64decode(detail["value"]))
        )
    trailing = grpc.aio.Metadata()
    if status.details:
        trailing.add("grpc-status-details-bin", status.SerializeToString())
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), trailing, message)


class ConnectChannel:
    """`unary_unary` / `unary_stream` like grpc.aio.Channel; `codec` is "proto" or "json"."""

    def __init__(
        self,
        base_url: str,
        *,
        codec: str = "proto",
        http2: bool = False,
        max_connections: int = 100,
        called: set[str] | None = None,
    ) -> None:
        if codec not in ("proto", "json"):
            raise ValueError("codec is 'proto' or 'json'")
        self.codec = codec
        self.called = called if called is not None else set()  # the methods called (test coverage)
        self.client = httpx.AsyncClient(
            base_url=base_url,
            http1=not http2,
            http2=http2,
            timeout=httpx.Timeout(None),
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )

    async def close(self) -> None:
        await self.client.aclose()

    async def __aenter__(self) -> ConnectChannel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def headers(self, metadata: Metadata | None, timeout: float | None, *, stream: bool) -> dict[str, str]:
        prefix = "application/connect+" if stream else "application/"
        headers = {"content-type": prefix + self.codec, "connect-protocol-version": "1"}
        if timeout is not None:
            headers["connect-timeout-ms"] = str(max(1, int(timeout * 1000)))
        for key, value in metadata or ():
            headers[key] = base64.b64encode(value).decode() if isinstance(value, bytes) else value
        return headers

    def encode(self, request: Message) -> bytes:
        if self.codec == "json":
            return json_format.MessageToJson(request, indent=None).encode()
        return request.SerializeToString()

    def decode(self, data: bytes, message_class: type[Message]) -> Message:
        if self.codec == "json":
            message = message_class()
            json_format.Parse(data, message, ignore_unknown_fields=True)
            return message
        return message_class.FromString(data)

    def unary_unary(
        self, method: str, request_serializer: Any = None, response_deserializer: Any = None, **_: Any
    ) -> Callable[..., Any]:
        message_class: type[Message] = response_deserializer.__self__

        # The grpc.aio stub signature: `timeout` is the call's deadline, sent to the server.
        async def call(
            request: Message, *, metadata: Metadata | None = None, timeout: float | None = None, **_: Any  # noqa: ASYNC109
        ) -> Message:
            self.called.add(method)
            try:
                response = await self.client.post(
                    method, content=self.encode(request), headers=self.headers(metadata, timeout, stream=False)
                )
            except httpx.TransportError as error:
                raise grpc.aio.AioRpcError(
                    grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), _reason(error)
                ) from None
            if response.status_code != 200:
                try:
                    body = response.json()
                except ValueError:
                    body = None
                raise rpc_error(body if isinstance(body, dict) else None, response.status_code)
            return self.decode(response.content, message_class)

        return call

    def unary_stream(
        self, method: str, request_serializer: Any = None, response_deserializer: Any = None, **_: Any
    ) -> Callable[..., StreamCall]:
        message_class: type[Message] = response_deserializer.__self__

        def call(request: Message, *, metadata: Metadata | None = None, timeout: float | None = None,
                 **_: Any) -> StreamCall:
            self.called.add(method)
            return StreamCall(self, method, request, self.headers(metadata, timeout, stream=True), message_class)

        return call


    def stream_stream(self, method: str, *_: Any, **__: Any) -> Callable[..., Any]:
        """Bidirectional streams (Play) are native gRPC only: browsers cannot open one."""

        def call(*_: Any, **__: Any) -> Any:
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.UNIMPLEMENTED, grpc.aio.Metadata(), grpc.aio.Metadata(),
                f"{method} is a bidirectional stream: use native gRPC",
            )

        return call


class StreamCall:
    """A server-streaming call: iterate it (async for); `cancel()` drops the connection."""

    def __init__(
        self, channel: ConnectChannel, method: str, request: Message, headers: dict[str, str],
        message_class: type[Message],
    ) -> None:
        self._channel = channel
        message = channel.encode(request)
        self._body = struct.pack(">BI", 0, len(message)) + message  # a stream's request is enveloped too
        self._method = method
        self._headers = headers
        self._class = message_class
        self._iterator: AsyncIterator[Message] | None = None
        self._closing: asyncio.Future[None] | None = None
        self._response: httpx.Response | None = None
        self._opening: asyncio.Future[httpx.Response] | None = None
        self._cancelled = False

    def __aiter__(self) -> AsyncIterator[Message]:
        if self._iterator is None:
            self._iterator = self._responses()
        return self._iterator

    async def read(self) -> Message:
        return await anext(self.__aiter__())

    def cancel(self) -> bool:
        """Like grpc's: the connection is dropped now and a pending read ends with CANCELLED."""
        self._cancelled = True
        if self._response is not None:
            self._closing = asyncio.ensure_future(self._response.aclose())
        return True

    async def wait_for_connection(self) -> None:
        """Starts the call. (Unlike grpc's, it does not wait for the server's headers: the edge sends
        them with a stream's first message, and a watch of a quiet game has none yet.)"""
        if self._opening is None:
            self._opening = asyncio.ensure_future(self._send())
        await asyncio.sleep(0)

    async def _send(self) -> httpx.Response:
        client = self._channel.client
        request = client.build_request("POST", self._method, content=self._body, headers=self._headers)
        try:
            self._response = await client.send(request, stream=True)
        except httpx.TransportError as error:
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), _reason(error)
            ) from None
        return self._response

    async def _open(self) -> httpx.Response:
        if self._opening is None:
            self._opening = asyncio.ensure_future(self._send())
        return await self._opening

    async def _responses(self) -> AsyncIterator[Message]:
        frame = struct.Struct(">BI")
        response = await self._open()
        try:
            if response.status_code != 200:
                await response.aread()
                try:
                    body = response.json()
                except ValueError:
                    body = None
                raise rpc_error(body if isinstance(body, dict) else None, response.status_code)
            buffer = b""
            async for chunk in response.aiter_bytes():
                buffer += chunk
                while len(buffer) >= 5:
                    flags, size = frame.unpack_from(buffer)
                    if len(buffer) < 5 + size:
                        break
                    data, buffer = buffer[5 : 5 + size], buffer[5 + size :]
                    if flags & _END_STREAM:
                        end = json.loads(data or b"{}")
                        if end.get("error"):
                            raise rpc_error(end["error"])
                        return
                    yield self._channel.decode(data, self._class)
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.INTERNAL, grpc.aio.Metadata(), grpc.aio.Metadata(), "stream ended without its end"
            )
        except (httpx.TransportError, httpx.StreamError) as error:
            code = grpc.StatusCode.CANCELLED if self._cancelled else grpc.StatusCode.UNAVAILABLE
            raise grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), str(error)) from None
        finally:
            await response.aclose()
