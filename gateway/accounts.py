"""AccountService: the gRPC face of gateway/auth.py."""

from __future__ import annotations

from typing import Any

import grpc
from tafel.play.v1 import play_pb2, play_pb2_grpc

from gateway.auth import Authenticator, Identity
from gateway.limits import peer_host
from gateway.standing.account_life import AccountLife
from gateway.standing.roles import PLAYER
from gateway.standing.tables import StandingTables
from kit.errors import Refused, refusing

UNAVAILABLE = "account storage is unavailable; retry"


class AccountServicer(play_pb2_grpc.AccountServiceServicer):
    def __init__(self, auth: Authenticator, tables: StandingTables, life: AccountLife) -> None:
        self.auth = auth
        self.tables = tables
        self.life = life

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
        session = await self.auth.register(
            request.username, request.password, source=source, display_name=request.display_name
        )
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
        return play_pb2.SignInAsGuestResponse(session=await self.auth.guest(request.display_name))

    @refusing(UNAVAILABLE)
    async def GetMe(
        self, request: play_pb2.GetMeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.GetMeResponse:
        identity = self.auth.identity(context.invocation_metadata())
        role = PLAYER if identity.guest else self.tables.role(identity.player_id)
        return play_pb2.GetMeResponse(player=identity.player(), role=role)  # type: ignore[arg-type]

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

    @refusing(UNAVAILABLE)
    async def ChangePassword(
        self, request: play_pb2.ChangePasswordRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.ChangePasswordResponse:
        identity = self.auth.identity(context.invocation_metadata())
        session = await self.auth.change_password(identity, request.current_password, request.new_password)
        return play_pb2.ChangePasswordResponse(session=session)

    @refusing(UNAVAILABLE)
    async def DeleteAccount(
        self, request: play_pb2.DeleteAccountRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.DeleteAccountResponse:
        identity = self.auth.identity(context.invocation_metadata())
        await self.life.delete(identity, request.password)
        return play_pb2.DeleteAccountResponse()

    @refusing(UNAVAILABLE)
    async def ExportMyData(
        self, request: play_pb2.ExportMyDataRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.ExportMyDataResponse:
        identity = self.auth.identity(context.invocation_metadata())
        return play_pb2.ExportMyDataResponse(json=await self.life.export(identity))

    @refusing(UNAVAILABLE)
    async def SetDisplayName(
        self, request: play_pb2.SetDisplayNameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.SetDisplayNameResponse:
        identity = self.auth.identity(context.invocation_metadata())
        return play_pb2.SetDisplayNameResponse(session=await self.auth.set_display_name(identity, request.display_name))
