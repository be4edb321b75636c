"""SafetyService: a player blocks, mutes and reports, and reads their own warnings and sanctions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from tafel.play.v1 import safety_pb2, safety_pb2_grpc, social_pb2

from gateway.auth import Authenticator, Identity
from gateway.standing.store import StandingStore
from kit.errors import refusing
from kit.ids import check_id

UNAVAILABLE = "the safety service's storage is unavailable; retry"


# A chat line and the lines around it, in a channel the caller may read (gateway/chat), or a refusal.
ChatContext = Callable[[Identity, social_pb2.ChatChannel, str], Awaitable[list[social_pb2.ChatMessage]]]


class SafetyServicer(safety_pb2_grpc.SafetyServiceServicer):
    def __init__(self, auth: Authenticator, store: StandingStore, chat_context: ChatContext | None = None) -> None:
        self.auth = auth
        self.store = store
        self.chat_context = chat_context

    @refusing(UNAVAILABLE)
    async def BlockPlayer(
        self, request: safety_pb2.BlockPlayerRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> safety_pb2.BlockPlayerResponse:
        me = self.auth.identity(context.invocation_metadata())
        other = await self.store.block(me, request.username)
        return safety_pb2.BlockPlayerResponse(player=other.player())

    @refusing(UNAVAILABLE)
    async def UnblockPlayer(
        self, request: safety_pb2.UnblockPlayerRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> safety_pb2.UnblockPlayerResponse:
        me = self.auth.identity(context.invocation_metadata())
        await self.store.unblock(me, request.username)
        return safety_pb2.UnblockPlayerResponse()

    @refusing(UNAVAILABLE)
    async def MutePlayer(
        self, request: safety_pb2.MutePlayerRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> safety_pb2.MutePlayerResponse:
        me = self.auth.identity(context.invocation_metadata())
        other = await self.store.mute(me, request.username)
        return safety_pb2.MutePlayerResponse(player=other.player())

    @refusing(UNAVAILABLE)
    async def UnmutePlayer(
        self, request: safety_pb2.UnmutePlayerRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> safety_pb2.UnmutePlayerResponse:
        me = self.auth.identity(context.invocation_metadata())
        await self.store.unmute(me, request.username)
        return safety_pb2.UnmutePlayerResponse()

    @refusing(UNAVAILABLE)
    async def ListBlocked(
        self, request: safety_pb2.ListBlockedRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> safety_pb2.ListBlockedResponse:
        me = self.auth.identity(context.invocation_metadata())
        blocked, muted = await self.store.blocked_and_muted(me.player_id)
        return safety_pb2.ListBlockedResponse(blocked=blocked, muted=muted)

    @refusing(UNAVAILABLE)
    async def Report(
        self, request: safety_pb2.ReportRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> safety_pb2.ReportResponse:
        me = self.auth.identity(context.invocation_metadata())
        check_id("request_id", request.request_id)
        if request.game_id:
            check_id("game_id", request.game_id)
        chat = None
        if request.message_id and self.chat_context is not None:
            # A chat line: in the channel named, or else the players' channel of game_id.
            channel = social_pb2.ChatChannel()
            if request.HasField("chat_channel"):
                channel.CopyFrom(request.chat_channel)
            else:
                channel.kind = social_pb2.CHAT_CHANNEL_KIND_GAME_PLAYERS
                channel.id = request.game_id
            lookup = self.chat_context

            async def chat_lines() -> tuple[social_pb2.ChatChannel, list[social_pb2.ChatMessage]]:
                return channel, await lookup(me, channel, request.message_id)

            chat = chat_lines
        return safety_pb2.ReportResponse(report_id=await self.store.report(me, request, chat))

    @refusing(UNAVAILABLE)
    async def GetMyStanding(
        self, request: safety_pb2.GetMyStandingRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> safety_pb2.GetMyStandingResponse:
        me = self.auth.identity(context.invocation_metadata())
        warnings = await self.store.warnings(me.player_id)
        sanctions = await self.store.in_force(me.player_id)
        return safety_pb2.GetMyStandingResponse(
            warnings=[w.to_proto() for w in warnings],
            sanctions=[s.to_proto() for s in sorted(sanctions, key=lambda s: -s.starts_ms)],
        )
