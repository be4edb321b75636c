"""AccountService: the gRPC face of gateway/auth.py."""

from __future__ import annotations

from typing import Any

import grpc
from tafel.play.v1 import play_pb2, play_pb2_grpc

from gateway.auth import Authenticator, Identity
from gateway.limits import peer_host
from kit.errors import Refused, refusing

UNAVAILABLE = "account storage is unavailable; retry"


class AccountServicer(play_pb2_grpc.AccountServiceServicer):
    def __init__(self, auth: Authenticator) -> None:
        self.auth = auth

    def _session_of(self, context: grpc.aio.ServicerContext[Any, Any]) -> Identity | None:
        """A valid session the caller already holds (it vouches for the owner: no lock-out)."""
        try:
            return self.auth.identity(context.invocation_metadata())
        except Refused:
            return None

    @refusing(UNAVAILABLE)
    async def Register(
        self, request: play_pb2.RegisterRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.RegisterResponse:
        source = peer_host(context.peer() or "")
        session = await self.auth.register(request.username, request.password, source=source)
        return play_pb2.RegisterResponse(session=session)

    @refusing(UNAVAILABLE)
    async def SignIn(
        self, request: play_pb2.SignInRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.SignInResponse:
        session = await self.auth.sign_in(
            request.username,
            request.password,
            source=peer_host(context.peer() or ""),
            session=self._session_of(context),
        )
        return play_pb2.SignInResponse(session=session)

    @refusing(UNAVAILABLE)
    async def SignInAsGuest(
        self, request: play_pb2.SignInAsGuestRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.SignInAsGuestResponse:
        return play_pb2.SignInAsGuestResponse(session=await self.auth.guest())

    @refusing(UNAVAILABLE)
    async def GetMe(
        self, request: play_pb2.GetMeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.GetMeResponse:
        return play_pb2.GetMeResponse(player=await self.auth.player(context))

    @refusing(UNAVAILABLE)
    async def RefreshSession(
        self, request: play_pb2.RefreshSessionRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.RefreshSessionResponse:
        identity = self.auth.identity(context.invocation_metadata())
        return play_pb2.RefreshSessionResponse(session=self.auth.refresh(identity))

    @refusing(UNAVAILABLE)
    async def SignOut(
        self, request: play_pb2.SignOutRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.SignOutResponse:
        identity = self.auth.identity(context.invocation_metadata())
        await self.auth.sign_out(identity, everywhere=request.all_sessions)
        return play_pb2.SignOutResponse()
