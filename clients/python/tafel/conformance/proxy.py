"""A gRPC proxy between the client under test and the gateway. Every call of any method is
relayed as raw bytes (the client's metadata, such as its token, goes along), and a scenario's
Policy sees every request, response and final status: it can record them, answer in the
gateway's place (a refusal the client must recover from), or cut the call (UNAVAILABLE, as a
dropped connection or a restarted gateway looks to a client) - after the gateway has acted,
when the point is to lose the answer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import grpc
from google.rpc import status_pb2
from grpc_status import rpc_status

# Metadata gRPC manages itself; everything else the client sent is relayed.
_RESERVED = ("grpc-", ":", "user-agent", "te", "content-type")
_DETAILS = "grpc-status-details-bin"


@dataclass(frozen=True)
class Cut:
    """End the call with this status instead of relaying (a google.rpc.Status: code, message
    and, for a refusal, an ErrorInfo in its details)."""

    status: status_pb2.Status


@dataclass(frozen=True)
class Reply:
    """Send this response to the client in the gateway's place; the request is not relayed."""

    raw: bytes


class Policy:
    """What a scenario does with the traffic; the default relays everything untouched."""

    def request(self, method: str, raw: bytes) -> Cut | Reply | None:
        return None

    def response(self, method: str, raw: bytes) -> Cut | None:
        return None

    def status(self, method: str, code: grpc.StatusCode, trailing: Sequence[tuple[str, str | bytes]]) -> None:
        return None


@dataclass(frozen=True)
class _End:
    code: grpc.StatusCode
    details: str
    trailing: tuple[tuple[str, str | bytes], ...]


def cut_status(code: grpc.StatusCode, message: str) -> status_pb2.Status:
    return status_pb2.Status(code=code.value[0], message=message)


class Proxy:
    """Relays to one of `upstreams` (gateways of one platform): `current` names it, so a
    scenario can move the client's traffic to another gateway while one restarts."""

    def __init__(self, upstreams: str | Sequence[str], policy: Policy | None = None) -> None:
        self.upstreams = [upstreams] if isinstance(upstreams, str) else list(upstreams)
        self.policy = policy or Policy()
        self._channels = [grpc.aio.insecure_channel(address) for address in self.upstreams]
        self.current = 0
        self._server = grpc.aio.server()
        self._server.add_generic_rpc_handlers((_Handler(self),))
        self.port = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self) -> Proxy:
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        await self._server.start()
        return self

    async def stop(self) -> None:
        await self._server.stop(0)
        for channel in self._channels:
            await channel.close()

    async def relay(
        self, method: str, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> AsyncIterator[bytes]:
        metadata = tuple((k, v) for k, v in context.invocation_metadata() or () if not k.startswith(_RESERVED))
        remaining = context.time_remaining()
        call = self._channels[self.current].stream_stream(method)(metadata=metadata, timeout=remaining)
        out: asyncio.Queue[bytes | Cut | _End] = asyncio.Queue()

        async def up() -> None:
            async for raw in requests:
                action = self.policy.request(method, raw)
                if action is None:
                    await call.write(raw)
                elif isinstance(action, Reply):
                    out.put_nowait(action.raw)
                else:
                    out.put_nowait(action)
                    return
            await call.done_writing()

        async def down() -> None:
            try:
                async for raw in call:
                    action = self.policy.response(method, raw)
                    if action is not None:
                        out.put_nowait(action)
                        return
                    out.put_nowait(raw)
            except grpc.aio.AioRpcError:
                pass  # the final status below says why
            code = await call.code()
            trailing = tuple((k, v) for k, v in (await call.trailing_metadata() or ()))
            self.policy.status(method, code, trailing)
            out.put_nowait(_End(code, await call.details() or "", trailing))

        tasks = (asyncio.ensure_future(up()), asyncio.ensure_future(down()))
        try:
            while True:
                item = await out.get()
                if isinstance(item, bytes):
                    yield item
                    continue
                if isinstance(item, Cut):
                    status = rpc_status.to_status(item.status)
                    context.set_trailing_metadata(status.trailing_metadata)
                    context.set_code(status.code)
                    context.set_details(status.details)
                else:
                    if item.code is not grpc.StatusCode.OK:
                        # The refusal's ErrorInfo travels in grpc-status-details-bin: keep it.
                        kept = tuple((k, v) for k, v in item.trailing if k == _DETAILS or not k.startswith(_RESERVED))
                        context.set_trailing_metadata(kept)
                        context.set_code(item.code)
                        context.set_details(item.details)
                return
        finally:
            call.cancel()
            for task in tasks:
                task.cancel()


class _Handler(grpc.GenericRpcHandler):  # type: ignore[misc]
    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        method: str = handler_call_details.method

        # An async generator function, so that grpc.aio streams what it yields.
        async def relay(
            requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
        ) -> AsyncIterator[bytes]:
            async for raw in self.proxy.relay(method, requests, context):
                yield raw

        # Every call is a stream at the HTTP/2 level: one streaming relay serves unary calls too.
        return grpc.stream_stream_rpc_method_handler(relay)
