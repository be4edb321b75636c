"""The edge's method table: the gateway's own gRPC method handlers, collected from the same
`register` function that fills the native server, with each method's messages and stream shape
from the proto descriptors. Nothing here knows what a method does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import descriptor_pool, message_factory
from google.protobuf.message import Message

from kit.handlers import Collector


@dataclass(frozen=True)
class Method:
    service: str  # e.g. tafel.play.v1.GameService
    name: str  # e.g. SubmitMove
    handler: grpc.RpcMethodHandler
    input: type[Message]
    output: type[Message]

    @property
    def path(self) -> str:
        return f"/{self.service}/{self.name}"

    @property
    def bidirectional(self) -> bool:
        return bool(self.handler.request_streaming)

    @property
    def server_streaming(self) -> bool:
        return bool(self.handler.response_streaming)


HandlerWrap = Callable[[grpc.RpcMethodHandler, str], grpc.RpcMethodHandler]


def collect_methods(register: Callable[[Any], None], wrap: HandlerWrap | None = None) -> list[Method]:
    """`wrap` puts the native server's interceptors (the gateway's call limits) in front of each
    handler, so a caller cannot dodge them by switching transport."""
    collector = Collector()
    register(collector)
    pool = descriptor_pool.Default()
    methods: list[Method] = []
    for service, handlers in collector.services.items():
        descriptor = pool.FindServiceByName(service)
        for name, handler in handlers.items():
            method = descriptor.methods_by_name[name]
            methods.append(
                Method(
                    service=service,
                    name=name,
                    handler=wrap(handler, f"/{service}/{name}") if wrap is not None else handler,
                    input=message_factory.GetMessageClass(method.input_type),
                    output=message_factory.GetMessageClass(method.output_type),
                )
            )
    return methods
