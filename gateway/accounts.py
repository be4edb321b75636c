"""AccountService: the gRPC face of gateway/auth.py."""

from __future__ import annotations

from typing import Any

import grpc
from redis.exceptions import RedisError
from tafel.play.v1 import play_pb2, play_pb2_grpc

from gateway.auth import Authenticator
from services.kit.errors import Refused, abort


def _unavailable() -> Refused:
    return Refused(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE", "account storage is unavailable; retry")


class AccountServicer(play_pb2_grpc.AccountServiceServicer):
    def __init__(self, auth: Authenticator) -> None:
        self.auth = auth

    async def Register(
        self, request: play_pb2.RegisterRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.RegisterResponse:
        try:
            return play_pb2.RegisterResponse(session=await self.auth.register(request.username, request.password))
        except Refused as refused:
            await abort(context, refused)
        except RedisError:
            await abort(context, _unavailable())

    async def SignIn(
        self, request: play_pb2.SignInRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.SignInResponse:
        try:
            return play_pb2.SignInResponse(session=await self.auth.sign_in(request.username, request.password))
        except Refused as refused:
            await abort(context, refused)
        except RedisError:
            await abort(context, _unavailable())

    async def SignInAsGuest(
        self, request: play_pb2.SignInAsGuestRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.SignInAsGuestResponse:
        return play_pb2.SignInAsGuestResponse(session=await self.auth.guest())

    async def GetMe(
        self, request: play_pb2.GetMeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.GetMeResponse:
        try:
            return play_pb2.GetMeResponse(player=await self.auth.player(context))
        except Refused as refused:
            await abort(context, refused)
