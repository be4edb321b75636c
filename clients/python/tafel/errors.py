"""Exceptions the SDK raises: one class per gRPC status the platform uses, each carrying the
server's machine reason (google.rpc.ErrorInfo.reason) and readable message.

`message` is always for people. The platform's refusals carry an ErrorInfo and a sentence of the
server's, and some an ErrorInfo metadata map (ACCOUNT_SUSPENDED's and CHAT_MUTED's "until", ROLE_REQUIRED's
"roles"); a status without one comes from gRPC itself (a refused connection, a deadline), whose
text ("failed to connect to all addresses; last error: UNKNOWN: ipv4:...") is for programmers: it
goes to `detail` (and `str()`, for logs), and `message` gets a plain sentence for the status."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from tafel.i18n import N_


class TafelError(Exception):
    """A call the platform refused. `reason` is a stable code such as COLUMN_FULL."""

    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(
        self,
        reason: str,
        message: str,
        code: grpc.StatusCode | None = None,
        *,
        detail: str = "",
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        text = f"{reason}: {message}" if reason else message
        super().__init__(f"{text} ({detail})" if detail else text)
        self.reason = reason
        self.message = message
        self.detail = detail  # gRPC's own text, when the status was gRPC's and not the platform's
        # The ErrorInfo's metadata: facts a client acts on without parsing the message.
        self.metadata: dict[str, str] = dict(metadata or {})
        if code is not None:
            self.code = code
        # True for a refusal the platform or gRPC sent (error_for, from_rpc_error): its `message` is
        # the server's English, and tafel.refusals says it in the player's language by `reason`.
        self.remote = False

    @property
    def until(self) -> datetime | None:
        """When the refusal ends (ACCOUNT_SUSPENDED, CHAT_MUTED: metadata "until", RFC 3339), as an
        aware datetime; None for a refusal without an end (ACCOUNT_BANNED) or one it does not apply to."""
        text = self.metadata.get("until", "")
        if not text:
            return None
        try:
            # fromisoformat reads RFC 3339 from Python 3.11 on, "Z" included.
            return datetime.fromisoformat(text)
        except ValueError:
            return None


class InvalidArgument(TafelError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(TafelError):
    code = grpc.StatusCode.NOT_FOUND


class AlreadyExists(TafelError):
    code = grpc.StatusCode.ALREADY_EXISTS


class PermissionDenied(TafelError):
    code = grpc.StatusCode.PERMISSION_DENIED


class Unauthenticated(TafelError):
    code = grpc.StatusCode.UNAUTHENTICATED


class IllegalMove(TafelError):
    """FAILED_PRECONDITION: not your turn, a full column, the game is over, ..."""

    code = grpc.StatusCode.FAILED_PRECONDITION


class VersionConflict(TafelError):
    """ABORTED: the game moved on since the version the move was made against."""

    code = grpc.StatusCode.ABORTED


class RateLimited(TafelError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class Unavailable(TafelError):
    """UNAVAILABLE: a dependency is down; retrying later is safe (requests are idempotent)."""

    code = grpc.StatusCode.UNAVAILABLE


_BY_CODE: dict[grpc.StatusCode, type[TafelError]] = {
    cls.code: cls
    for cls in (
        InvalidArgument,
        NotFound,
        AlreadyExists,
        PermissionDenied,
        Unauthenticated,
        IllegalMove,
        VersionConflict,
        RateLimited,
        Unavailable,
    )
}


# The sentence a person reads for a status that gRPC made, not the platform (no reason attached);
# in English here, in the player's language through tafel.refusals.refusal_text.
PLAIN_MESSAGES: dict[grpc.StatusCode, str] = {
    grpc.StatusCode.UNAVAILABLE: N_("the game server cannot be reached"),
    grpc.StatusCode.DEADLINE_EXCEEDED: N_("the game server did not answer in time"),
    grpc.StatusCode.CANCELLED: N_("the connection to the game server was interrupted"),
    grpc.StatusCode.INTERNAL: N_("the game server ran into a problem"),
    grpc.StatusCode.UNKNOWN: N_("the game server ran into a problem"),
    grpc.StatusCode.UNIMPLEMENTED: N_("the game server does not offer this (it may be older than this program)"),
    grpc.StatusCode.RESOURCE_EXHAUSTED: N_("the game server is too busy right now"),
    grpc.StatusCode.UNAUTHENTICATED: N_("the game server did not accept this sign-in"),
}
PLAIN_FALLBACK = N_("the game server refused this")


def error_for(
    code: grpc.StatusCode, reason: str, message: str, metadata: Mapping[str, str] | None = None
) -> TafelError:
    cls = _BY_CODE.get(code, TafelError)
    error = cls(reason, message, code, metadata=metadata)
    error.remote = True
    return error


def from_rpc_error(error: grpc.aio.AioRpcError) -> TafelError:
    reason = ""
    metadata: dict[str, str] = {}
    status = rpc_status.from_call(error)
    if status is not None:
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason = info.reason
                metadata = dict(info.metadata)
    if reason:
        return error_for(error.code(), reason, error.details() or "", metadata)
    cls = _BY_CODE.get(error.code(), TafelError)
    plain = PLAIN_MESSAGES.get(error.code(), PLAIN_FALLBACK)
    made = cls(error.code().name, plain, error.code(), detail=error.details() or "")
    made.remote = True
    return made
