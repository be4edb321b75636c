"""GameService's registration: the generated one, with Play and WatchGame taking pre-encoded
responses (encoding.py). The web edge (gateway/web) serves the same handlers."""

from __future__ import annotations

from typing import Any

import grpc
from tafel.play.v1 import play_pb2, play_pb2_grpc

from gateway.play.service import GameServicer
from kit.wire import encoded_or_message

SERVICE = "tafel.play.v1.GameService"


class _Handlers:
    """Collects the generated method handlers instead of registering them."""

    handlers: dict[str, grpc.RpcMethodHandler]

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        pass

    def add_registered_method_handlers(self, service: str, handlers: dict[str, grpc.RpcMethodHandler]) -> None:
        self.handlers = handlers


def add_game_service(servicer: GameServicer, server: grpc.aio.Server) -> None:
    """Register GameService with Play and WatchGame taking pre-encoded responses (shared event
    deliveries); everything else is the generated registration."""
    collected = _Handlers()
    play_pb2_grpc.add_GameServiceServicer_to_server(servicer, collected)
    handlers = dict(collected.handlers)
    handlers["Play"] = grpc.stream_stream_rpc_method_handler(
        servicer.Play,
        request_deserializer=play_pb2.PlayRequest.FromString,
        response_serializer=encoded_or_message,
    )
    handlers["WatchGame"] = grpc.unary_stream_rpc_method_handler(
        servicer.WatchGame,
        request_deserializer=play_pb2.WatchGameRequest.FromString,
        response_serializer=encoded_or_message,
    )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    server.add_registered_method_handlers(SERVICE, handlers)
