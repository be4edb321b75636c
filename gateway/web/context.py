"""The part of grpc.aio.ServicerContext the gateway's servicers use, over a Connect request: call
metadata from the HTTP headers (so `authorization: Bearer <token>` is read by the same code), the
caller's deadline, and `abort`, which becomes a ConnectError carrying the same status code,
message and google.rpc details (ErrorInfo) the native server would send."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any, NoReturn

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.request import RequestContext
from google.protobuf.message import DecodeError
from google.rpc import status_pb2
from protobuf.wkt import Any as WireAny

STATUS_DETAILS_KEY = "grpc-status-details-bin"

# Transport headers, not call metadata (grpc.aio does not show them to servicers either).
_NOT_METADATA = frozenset(
    {
        "content-type",
        "content-length",
        "content-encoding",
        "accept-encoding",
        "connection",
        "host",
        "te",
        "grpc-timeout",
        "grpc-encoding",
        "grpc-accept-encoding",
        "connect-protocol-version",
        "connect-timeout-ms",
        "connect-content-encoding",
        "connect-accept-encoding",
        "origin",
        "referer",
        "cookie",
        "x-grpc-web",
    }
)


def connect_code(code: grpc.StatusCode) -> Code:
    if code is grpc.StatusCode.CANCELLED:
        return Code.CANCELED
    return Code[code.name] if code.name in Code.__members__ else Code.UNKNOWN


def error_details(trailing_metadata: Sequence[tuple[str, str | bytes]] | None) -> list[ErrorDetail]:
    """The google.rpc.Status details a servicer attached to its abort, as Connect error details."""
    for key, value in trailing_metadata or ():
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            return [ErrorDetail(WireAny(type_url=d.type_url, value=d.value)) for d in status.details]
    return []


def metadata_of(ctx: RequestContext[Any, Any]) -> tuple[tuple[str, str | bytes], ...]:
    items: list[tuple[str, str | bytes]] = []
    for key, value in ctx.request_headers.allitems():
        name = key.lower()
        if name in _NOT_METADATA or name.startswith(("sec-", "access-control-")):
            continue
        if name.endswith("-bin"):
            try:
                items.append((name, base64.b64decode(value + "=" * (-len(value) % 4))))
            except (binascii.Error, ValueError):
                continue  # grpc drops undecodable binary metadata too
        else:
            items.append((name, value))
    return tuple(items)


class EdgeContext:
    """One call's servicer context on the edge."""

    def __init__(self, ctx: RequestContext[Any, Any]) -> None:
        self._ctx = ctx
        self._metadata: tuple[tuple[str, str | bytes], ...] | None = None

    def invocation_metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        if self._metadata is None:
            self._metadata = metadata_of(self._ctx)
        return self._metadata

    def time_remaining(self) -> float | None:
        remaining = self._ctx.timeout_ms
        return None if remaining is None else max(0.0, remaining / 1000.0)

    def cancelled(self) -> bool:
        # A call whose client went away is cancelled as a task (its awaits raise), as on grpc.aio.
        return False

    def peer(self) -> str:
        return f"ipv4:{self._ctx.client_address}" if self._ctx.client_address else "unknown"

    async def send_initial_metadata(self, metadata: Sequence[tuple[str, str | bytes]]) -> None:
        """Headers go out with the first message on the edge."""

    async def abort(
        self, code: grpc.StatusCode, details: str = "", trailing_metadata: Sequence[tuple[str, str | bytes]] = ()
    ) -> NoReturn:
        try:
            found = error_details(trailing_metadata)
        except DecodeError:
            found = []
        raise ConnectError(connect_code(code), details, found)
