"""Exceptions the SDK raises: one class per gRPC status the platform uses, each carrying the
server's machine reason (google.rpc.ErrorInfo.reason) and readable message."""

from __future__ import annotations

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status


class TafelError(Exception):
    """A call the platform refused. `reason` is a stable code such as COLUMN_FULL."""

    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(self, reason: str, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(f"{reason}: {message}" if reason else message)
        self.reason = reason
        self.message = message
        if code is not None:
            self.code = code


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


def error_for(code: grpc.StatusCode, reason: str, message: str) -> TafelError:
    cls = _BY_CODE.get(code, TafelError)
    return cls(reason, message, code)


def from_rpc_error(error: grpc.aio.AioRpcError) -> TafelError:
    reason = ""
    status = rpc_status.from_call(error)
    if status is not None:
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason = info.reason
    return error_for(error.code(), reason or error.code().name, error.details() or "")
