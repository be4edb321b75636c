"""GameService's registration: the generated one, with Play and WatchGame taking pre-encoded
responses (encoding.py: shared event deliveries). The web edge (gateway/web) serves the same
handlers."""

from __future__ import annotations

import grpc
from tafel.play.v1 import play_pb2_grpc

from gateway.play.service import GameServicer
from kit.handlers import add_pre_encoded

SERVICE = "tafel.play.v1.GameService"


def add_game_service(servicer: GameServicer, server: grpc.aio.Server) -> None:
    add_pre_encoded(play_pb2_grpc.add_GameServiceServicer_to_server, servicer, server, SERVICE, ("Play", "WatchGame"))
