"""kit/errors.refusing over a real grpc.aio server: refusals and Redis failures become statuses
with an ErrorInfo reason and a readable message (never the exception's text), for unary and
server-streaming handlers, and a bug is INTERNAL without its text."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from redis.exceptions import BusyLoadingError, ReadOnlyError, RedisError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from kit.errors import Refused, abort, as_refused, is_outage, reason_of, refusing

SECRET = "connection refused to 10.0.0.7:6379"


class Handlers:
    @refusing("widgets are unavailable; retry")
    async def unary(self, request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        if request == b"refuse":
            raise Refused(grpc.StatusCode.NOT_FOUND, "NO_WIDGET", "there is no such widget")
        if request == b"redis":
            raise RedisConnectionError(SECRET)
        if request == b"refused-by-redis":  # a value Redis rejects: no retry mends it
            raise ResponseError("ERR Invalid stream ID specified as stream command argument " + SECRET)
        if request == b"bug":
            raise ZeroDivisionError(SECRET)
        if request == b"abort":  # a handler may still answer by aborting itself
            await abort(context, Refused(grpc.StatusCode.FAILED_PRECONDITION, "NOT_NOW", "not now"))
        return b"ok:" + request

    @refusing("widgets are unavailable; retry", internal="the widget call failed; retry")
    async def stream(self, request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[bytes]:
        yield b"first"
        if request == b"redis":
            raise RedisConnectionError(SECRET)
        if request == b"bug":
            raise ZeroDivisionError(SECRET)
        yield b"second"


@pytest.fixture
async def channel() -> AsyncIterator[grpc.aio.Channel]:
    handlers = Handlers()
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "test.Widgets",
                {
                    "Unary": grpc.unary_unary_rpc_method_handler(handlers.unary),
                    "Stream": grpc.unary_stream_rpc_method_handler(handlers.stream),
                },
            )
        ]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as opened:
        yield opened
    await server.stop(0)


async def _unary(channel: grpc.aio.Channel, body: bytes) -> bytes:
    return bytes(await channel.unary_unary("/test.Widgets/Unary")(body, timeout=10))


async def test_unary_maps_refusals_and_redis_failures(channel: grpc.aio.Channel) -> None:
    assert await _unary(channel, b"x") == b"ok:x"
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await _unary(channel, b"refuse")
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND and reason_of(refused.value) == "NO_WIDGET"
    with pytest.raises(grpc.aio.AioRpcError) as down:
        await _unary(channel, b"redis")
    assert down.value.code() == grpc.StatusCode.UNAVAILABLE
    assert reason_of(down.value) == "STORE_UNAVAILABLE"
    assert down.value.details() == "widgets are unavailable; retry"
    with pytest.raises(grpc.aio.AioRpcError) as rejected:  # Redis answered: not an outage, no retry
        await _unary(channel, b"refused-by-redis")
    assert rejected.value.code() == grpc.StatusCode.INTERNAL and reason_of(rejected.value) == "INTERNAL"
    assert rejected.value.details() == "the server failed to answer; retry"
    with pytest.raises(grpc.aio.AioRpcError) as bug:  # not gRPC's UNKNOWN "Unexpected <text>"
        await _unary(channel, b"bug")
    assert bug.value.code() == grpc.StatusCode.INTERNAL and reason_of(bug.value) == "INTERNAL"
    assert bug.value.details() == "the server failed to answer; retry"
    with pytest.raises(grpc.aio.AioRpcError) as aborted:
        await _unary(channel, b"abort")
    assert aborted.value.code() == grpc.StatusCode.FAILED_PRECONDITION and reason_of(aborted.value) == "NOT_NOW"


class EdgeAbort(Exception):
    """What a non-grpc context's abort raises (the web edge's is connectrpc's ConnectError)."""


class EdgeLikeContext:
    async def abort(self, code: grpc.StatusCode, details: str = "", trailing_metadata: Any = ()) -> None:
        raise EdgeAbort(code, details)


async def test_an_abort_by_another_context_passes_through_unchanged() -> None:
    with pytest.raises(EdgeAbort) as raised:
        await Handlers().unary(b"abort", EdgeLikeContext())  # type: ignore[arg-type]
    assert raised.value.args == (grpc.StatusCode.FAILED_PRECONDITION, "not now")
    with pytest.raises(EdgeAbort) as mapped:
        await Handlers().unary(b"redis", EdgeLikeContext())  # type: ignore[arg-type]
    assert mapped.value.args == (grpc.StatusCode.UNAVAILABLE, "widgets are unavailable; retry")


async def test_stream_maps_failures_after_its_first_message(channel: grpc.aio.Channel) -> None:
    call = channel.unary_stream("/test.Widgets/Stream")
    assert [bytes(m) async for m in call(b"x", timeout=10)] == [b"first", b"second"]
    for body, code, reason, message in (
        (b"redis", grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE", "widgets are unavailable; retry"),
        (b"bug", grpc.StatusCode.INTERNAL, "INTERNAL", "the widget call failed; retry"),
    ):
        got: list[bytes] = []
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            async for m in call(body, timeout=10):
                got.append(bytes(m))
        assert got == [b"first"]
        assert failed.value.code() == code and reason_of(failed.value) == reason
        assert failed.value.details() == message


@pytest.mark.parametrize(
    ("error", "outage"),
    [
        (RedisConnectionError(SECRET), True),
        (RedisTimeoutError(SECRET), True),
        (BusyLoadingError("LOADING Redis is loading the dataset in memory"), True),
        (ReadOnlyError("READONLY You can't write against a read only replica."), True),
        # The pipelined connection raises every error reply as a plain ResponseError.
        (ResponseError("LOADING Redis is loading the dataset in memory"), True),
        (ResponseError("BUSY Redis is busy running a script"), True),
        (ResponseError("CLUSTERDOWN The cluster is down"), True),
        (ResponseError("TRYAGAIN Multiple keys request during rehashing of slot"), True),
        (ResponseError("OOM command not allowed when used memory > 'maxmemory'."), True),
        (ResponseError("ERR Invalid stream ID specified as stream command argument"), False),
        (ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"), False),
        (ResponseError("ERR value is not an integer or out of range"), False),
        (ResponseError(""), False),
    ],
)
def test_an_outage_is_unavailable_and_a_refused_command_is_internal(error: RedisError, outage: bool) -> None:
    assert is_outage(error) is outage
    refused = as_refused(error, "widgets are unavailable; retry")
    if outage:
        assert (refused.code, refused.reason) == (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")
    else:
        assert (refused.code, refused.reason) == (grpc.StatusCode.INTERNAL, "INTERNAL")
        assert SECRET not in refused.message and "ERR" not in refused.message
