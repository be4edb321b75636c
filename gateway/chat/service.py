"""ChatService (protos/tafel/play/v1/social.proto): SendChatMessage, WatchChat, ListChatMessages.

A line is written once per request id by one script in its channel's slot (gateway/chat/store.py);
watches get lines from this gateway's one reader per channel (gateway/chat/hub.py) and resume
after any id on any gateway, every line once, in order. Lines by players the viewer blocks or
mutes are never sent, in watches and listings alike."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
from tafel.play.v1 import social_pb2, social_pb2_grpc

from gateway.auth import Authenticator, Identity
from gateway.chat.access import Access, ChatAccess
from gateway.chat.hub import END, Avoided, ChatHub, ChatWatch
from gateway.chat.model import (
    HISTORY,
    MAX_PAGE,
    Channel,
    channel_of,
    check_message_id,
    clean_text,
    message_key,
)
from gateway.chat.store import ChatStore
from gateway.standing.model import CHAT_MUTE, iso
from gateway.standing.tables import StandingTables
from kit.errors import Refused, invalid, refusing
from kit.ids import check_id
from kit.redis.keys import settings_key
from kit.redis.layer import RedisLayer

UNAVAILABLE = "chat is unavailable; retry"
S = social_pb2


class ChatServicer(social_pb2_grpc.ChatServiceServicer):
    def __init__(
        self,
        auth: Authenticator,
        layer: RedisLayer,
        store: ChatStore,
        access: ChatAccess,
        hub: ChatHub,
        tables: StandingTables,
    ) -> None:
        self.auth = auth
        self.layer = layer
        self.store = store
        self.access = access
        self.hub = hub
        self.tables = tables

    # -- what a caller may do ------------------------------------------------------------------

    async def chat_off(self, player_id: str) -> bool:
        return bool(await self.layer.call("HGET", settings_key(player_id), "chat") == b"0")

    def muted(self, player_id: str) -> Refused | None:
        muted = [s for s in self.tables.in_force(player_id) if s.kind == CHAT_MUTE]
        if not muted:
            return None
        ends = 0 if any(s.ends_ms == 0 for s in muted) else max(s.ends_ms for s in muted)
        until = iso(ends) if ends else ""
        return Refused(
            grpc.StatusCode.PERMISSION_DENIED,
            "CHAT_MUTED",
            f"you are muted in chat until {until}" if until else "you are muted in chat",
            metadata={"until": until},
        )

    def can_write(self, me: Identity, access: Access, chat_off: bool) -> bool:
        return access.can_write and not me.guest and not chat_off and self.muted(me.player_id) is None

    async def readable(self, me: Identity, channel: Channel) -> Access:
        return await self.access.decide(channel, me.player_id)

    async def context(self, me: Identity, proto: S.ChatChannel, message_id: str) -> list[S.ChatMessage]:
        """A reported message and the lines around it, in a channel the reporter may read
        (SafetyService.Report; blocks and mutes not applied: moderators see what was said)."""
        channel = channel_of(proto)
        await self.readable(me, channel)
        return await self.store.around(channel, message_id)

    # -- the calls -----------------------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def SendChatMessage(
        self, request: S.SendChatMessageRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> S.SendChatMessageResponse:
        me = self.auth.identity(context.invocation_metadata())
        check_id("request_id", request.request_id)
        channel = channel_of(request.channel)
        if me.guest:
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, "CHAT_NEEDS_ACCOUNT", "guests read chat; register to talk")
        access = await self.readable(me, channel)
        earlier = await self.store.remembered(channel, me.player_id, request.request_id)
        if earlier is not None:
            return S.SendChatMessageResponse(message=earlier)
        if not access.can_write:
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, "CHAT_NOT_ALLOWED", access.why_not)
        muted = self.muted(me.player_id)
        if muted is not None:
            raise muted
        if await self.chat_off(me.player_id):
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION, "CHAT_OFF", "you turned chat off in your settings; turn it on"
            )
        line = clean_text(request.text)
        wait_ms = await self.store.wait_ms(me.player_id, request.request_id)
        if wait_ms > 0:
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "CHAT_TOO_FAST",
                "at most 5 lines in 10 seconds; wait a moment",
                metadata={"retry_after_ms": str(wait_ms)},
                retry_after_s=wait_ms / 1000,
            )
        message = S.ChatMessage(author=me.player(), text=line)
        sent = await self.store.append(channel, me.player_id, request.request_id, message)
        return S.SendChatMessageResponse(message=sent)

    @refusing(UNAVAILABLE)
    async def ListChatMessages(
        self, request: S.ListChatMessagesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> S.ListChatMessagesResponse:
        me = self.auth.identity(context.invocation_metadata())
        channel = channel_of(request.channel)
        if request.page_size < 0:
            raise invalid("BAD_PAGE_SIZE", "page_size is negative", field="page_size")
        size = min(request.page_size or HISTORY, MAX_PAGE)
        if request.after_message_id:
            check_message_id(request.after_message_id)
        await self.readable(me, channel)
        lines = await self.store.after(channel, request.after_message_id, size + 1)
        more = len(lines) > size
        lines = lines[:size]
        async with self.hub.avoided(me.player_id) as avoided:
            hidden = await avoided.current()
        return S.ListChatMessagesResponse(messages=[m for m in lines if m.author.player_id not in hidden], more=more)

    @refusing(UNAVAILABLE)
    async def WatchChat(
        self, request: S.WatchChatRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[S.WatchChatResponse]:
        me = self.auth.identity(context.invocation_metadata())
        channel = channel_of(request.channel)
        after = request.after_message_id
        if after:
            check_message_id(after)
        access = await self.readable(me, channel)
        async with self.hub.avoided(me.player_id) as avoided, self.hub.watch(channel, me.player_id) as watch:
            avoided.watches.add(watch)
            try:
                # `after`: the last line handed on ("" until one is: the first catch-up is the history).
                while True:
                    if avoided.chat_off:
                        # Nothing but `ready` while chat is off; a new `ready` and the lines said
                        # meanwhile once it is on again.
                        last = await self.store.check_after(channel, after)
                        yield S.WatchChatResponse(
                            ready=S.ChatReady(last_message_id=last, chat_off=True, can_write=False)
                        )
                        await self._until_chat_on(avoided, watch)
                    last = await self.store.check_after(channel, after)
                    yield S.WatchChatResponse(
                        ready=S.ChatReady(last_message_id=last, can_write=self.can_write(me, access, False))
                    )
                    hidden = await avoided.current()
                    if after:
                        while True:
                            page = await self.store.after(channel, after, MAX_PAGE)
                            for message in page:
                                if message.author.player_id not in hidden:
                                    yield S.WatchChatResponse(message=message)
                            if page:
                                after = page[-1].message_id
                            if len(page) < MAX_PAGE:
                                break
                    else:
                        history = await self.store.latest(channel, HISTORY)
                        for message in history:
                            if message.author.player_id not in hidden:
                                yield S.WatchChatResponse(message=message)
                        if history:
                            after = history[-1].message_id
                    sent = message_key(after) if after else (0, 0)
                    while True:
                        items = await watch.take()
                        if END in items:
                            raise _shutting_down()
                        hidden = await avoided.current()
                        if avoided.chat_off:
                            break  # turned off: these lines wait for the catch-up when it is on again
                        out: list[S.ChatMessage] = []
                        for item in items:
                            if not isinstance(item, list):
                                continue  # CHANGED: the lists were re-read above
                            for message in item:
                                key = message_key(message.message_id)
                                if key <= sent:
                                    continue
                                sent, after = key, message.message_id
                                if message.author.player_id not in hidden:
                                    out.append(message)
                        if len(out) == 1:
                            yield S.WatchChatResponse(message=out[0])
                        elif out:
                            yield S.WatchChatResponse(lines=S.ChatLines(messages=out))
            finally:
                avoided.watches.discard(watch)

    async def _until_chat_on(self, avoided: Avoided, watch: ChatWatch) -> None:
        """Wait while the viewer has chat off, dropping the lines handed to the watch meanwhile
        (read again from the channel afterwards), so a quiet watch holds nothing."""
        while avoided.chat_off:
            if END in await watch.take():
                raise _shutting_down()
            await avoided.current()


def _shutting_down() -> Refused:
    return Refused(grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", "this gateway is stopping; resume elsewhere")
