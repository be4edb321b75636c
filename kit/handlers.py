"""The generated gRPC registration, taken apart: a generated ``add_*Servicer_to_server`` function
fills a Collector instead of a server, so its method handlers can be changed (methods that answer
with bytes already encoded) or served elsewhere (the web edge's method table, gateway/web) before
they are registered. The one place that stands in for a server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import grpc

from kit.undecodable import handler_factory

Handlers = dict[str, grpc.RpcMethodHandler]


class Collector:
    """Stands in for grpc.aio.Server while generated code registers: keeps each service's method
    handlers instead of serving them."""

    def __init__(self) -> None:
        self.services: dict[str, Handlers] = {}

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        """Generated code registers every service twice; the registered handlers are enough."""

    def add_registered_method_handlers(self, service: str, handlers: Handlers) -> None:
        self.services[service] = dict(handlers)


def collect(add_generated: Callable[[Any, Any], None], servicer: Any) -> Handlers:
    """The method handlers `add_generated` would register for `servicer` (one service)."""
    collector = Collector()
    add_generated(servicer, collector)
    (handlers,) = collector.services.values()
    return handlers


def encoded_or_message(message: Any) -> bytes:
    """A response serializer for methods whose handlers may answer with bytes already encoded."""
    if type(message) is bytes:
        return message
    data: bytes = message.SerializeToString()
    return data


def add_pre_encoded(
    add_generated: Callable[[Any, Any], None],
    servicer: Any,
    server: grpc.aio.Server,
    service: str,
    methods: Iterable[str],
) -> None:
    """Register `servicer` as its generated add_*_to_server function would, except that the
    named methods may answer with encoded bytes (encoded_or_message) as well as messages."""
    handlers = collect(add_generated, servicer)
    for name in methods:
        old = handlers[name]
        behaviour = (
            (old.stream_stream if old.response_streaming else old.stream_unary)
            if old.request_streaming
            else (old.unary_stream if old.response_streaming else old.unary_unary)
        )
        handlers[name] = handler_factory(old.request_streaming, old.response_streaming)(
            behaviour, request_deserializer=old.request_deserializer, response_serializer=encoded_or_message
        )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    server.add_registered_method_handlers(service, handlers)
