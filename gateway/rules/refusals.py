"""What the gateway answers when a rules service refuses, fails or does not answer: a rules
service's Refusal (on the stream) or gRPC error (on a unary call) as the Refused the gateway's
features raise (kit/errors.py), with the game's current version where the refusal knows it."""

from __future__ import annotations

import contextlib

import grpc
from tafel.rules.v1 import rules_pb2

from kit.errors import Refused, reason_of

STATUS_BY_VALUE: dict[int, grpc.StatusCode] = {code.value[0]: code for code in grpc.StatusCode}


def rules_unavailable() -> Refused:
    return Refused(grpc.StatusCode.UNAVAILABLE, "RULES_UNAVAILABLE", "the game's rules service is unavailable; retry")


def rules_timeout() -> Refused:
    return Refused(
        grpc.StatusCode.UNAVAILABLE, "RULES_TIMEOUT", "the game's rules service did not answer in time; retry"
    )


def refused_from_refusal(refusal: rules_pb2.Refusal) -> Refused:
    code = STATUS_BY_VALUE.get(refusal.code, grpc.StatusCode.UNKNOWN)
    known_version = refusal.current_version or code in (
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    return Refused(
        code,
        refusal.reason or code.name,
        refusal.message or code.name.lower(),
        current_version=refusal.current_version if known_version else None,
    )


def refused_from_error(error: grpc.aio.AioRpcError) -> Refused:
    code = error.code()
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED):
        return rules_unavailable()
    version: int | None = None
    for key, value in error.trailing_metadata() or ():
        if key == "current_version":
            with contextlib.suppress(ValueError):
                version = int(value)
    return Refused(code, reason_of(error) or code.name, error.details() or code.name.lower(), current_version=version)
