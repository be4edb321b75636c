"""NotificationService: the caller's inbox (list, mark read, clear) and their notice settings.
Every caller is signed in (guests have an inbox too, kept about a day). Each change reaches every
client of the account as AccountEvent.inbox (written by the inbox's scripts with the change)."""

from __future__ import annotations

from typing import Any

import grpc
from tafel.play.v1 import notices_pb2, notices_pb2_grpc

from gateway.auth import Authenticator
from gateway.notices.inbox import Inbox
from gateway.notices.settings import NoticeSettingsStore
from gateway.paging import decode_offset, encode_offset
from kit.errors import invalid, refusing

UNAVAILABLE = "the inbox is unavailable; retry"
DEFAULT_PAGE = 50
MAX_PAGE = 100


class NotificationServicer(notices_pb2_grpc.NotificationServiceServicer):
    def __init__(self, auth: Authenticator, inbox: Inbox, settings: NoticeSettingsStore) -> None:
        self.auth = auth
        self.inbox = inbox
        self.settings = settings

    @refusing(UNAVAILABLE)
    async def ListNotifications(
        self, request: notices_pb2.ListNotificationsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> notices_pb2.ListNotificationsResponse:
        me = self.auth.identity(context.invocation_metadata())
        if request.page_size < 0 or request.page_size > MAX_PAGE:
            raise invalid("BAD_PAGE_SIZE", f"page_size is 1-{MAX_PAGE} (0 = {DEFAULT_PAGE})", field="page_size")
        listing = "inbox-unread" if request.unread_only else "inbox"
        place = decode_offset(listing, request.page_token)
        page = await self.inbox.listing(
            me.player_id,
            unread_only=request.unread_only,
            page_size=request.page_size or DEFAULT_PAGE,
            token=str(place) if request.page_token else "",
        )
        return notices_pb2.ListNotificationsResponse(
            notifications=page.notifications,
            next_page_token=encode_offset(listing, int(page.next_token)) if page.next_token else "",
            unread=page.unread,
        )

    @refusing(UNAVAILABLE)
    async def MarkNotificationsRead(
        self, request: notices_pb2.MarkNotificationsReadRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> notices_pb2.MarkNotificationsReadResponse:
        me = self.auth.identity(context.invocation_metadata())
        unread = await self.inbox.mark_read(me.player_id, list(request.notification_ids), every=request.all)
        return notices_pb2.MarkNotificationsReadResponse(unread=unread)

    @refusing(UNAVAILABLE)
    async def ClearNotifications(
        self, request: notices_pb2.ClearNotificationsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> notices_pb2.ClearNotificationsResponse:
        me = self.auth.identity(context.invocation_metadata())
        unread = await self.inbox.clear(me.player_id, list(request.notification_ids), every=request.all)
        return notices_pb2.ClearNotificationsResponse(unread=unread)

    @refusing(UNAVAILABLE)
    async def GetNotificationSettings(
        self, request: notices_pb2.GetNotificationSettingsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> notices_pb2.GetNotificationSettingsResponse:
        me = self.auth.identity(context.invocation_metadata())
        return notices_pb2.GetNotificationSettingsResponse(settings=await self.settings.get(me.player_id))

    @refusing(UNAVAILABLE)
    async def UpdateNotificationSettings(
        self, request: notices_pb2.UpdateNotificationSettingsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> notices_pb2.UpdateNotificationSettingsResponse:
        me = self.auth.identity(context.invocation_metadata())
        settings = await self.settings.update(me, request.settings)
        return notices_pb2.UpdateNotificationSettingsResponse(settings=settings)
