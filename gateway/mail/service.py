"""EmailService (protos/tafel/play/v1/notices.proto): SetEmail, GetEmail, ConfirmEmail,
Unsubscribe. The address and its tokens are gateway/mail/store.py's, what is mailed
gateway/mail/mailer.py's; the links' pure parts gateway/mail/model.py's."""

from __future__ import annotations

from typing import Any

import grpc
from tafel.play.v1 import notices_pb2, notices_pb2_grpc

from gateway.auth import Authenticator
from gateway.mail.mailer import Mailer
from gateway.mail.model import (
    bad_token,
    clean_address,
    language_of,
    new_confirm_token,
    parse_unsubscribe,
    split_confirm_token,
)
from gateway.mail.store import Address, MailStore
from kit.errors import Refused, refusing

UNAVAILABLE = "e-mail is unavailable; retry"
N = notices_pb2


def address_proto(address: Address) -> notices_pb2.EmailAddress:
    return N.EmailAddress(address=address.address, confirmed=bool(address.address), pending_address=address.pending)


class EmailServicer(notices_pb2_grpc.EmailServiceServicer):
    def __init__(self, auth: Authenticator, store: MailStore, mailer: Mailer) -> None:
        self.auth = auth
        self.store = store
        self.mailer = mailer

    async def unsubscribe(self, token: str) -> str:
        """Stop the kind of mail the token names; its kind ("digest" / "immediate"). Shared with the
        web edge's RFC 8058 one-click POST."""
        claim = parse_unsubscribe(token)
        address = await self.store.get(claim.player_id)
        if not address.address or not claim.valid_for(self.mailer.key, address.nonce):
            raise bad_token()
        await self.mailer.stop_kind(claim.player_id, claim.kind)
        return claim.kind

    @refusing(UNAVAILABLE)
    async def SetEmail(
        self, request: N.SetEmailRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> N.SetEmailResponse:
        me = self.auth.identity(context.invocation_metadata())
        if me.guest:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION, "EMAIL_NEEDS_ACCOUNT", "guests have no e-mail; register first"
            )
        address = clean_address(request.address)
        language = language_of(request.language)
        token, digest = new_confirm_token(me.player_id)
        name = me.display_name or me.username
        result = await self.store.set(me.player_id, address, language, me.username, digest, self.mailer.now_ms())
        if result.wait_ms > 0:
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "EMAIL_TOO_FAST",
                "at most 3 confirmation mails an hour; wait a while",
                metadata={"retry_after_ms": str(result.wait_ms)},
                retry_after_s=result.wait_ms / 1000,
            )
        if result.mail:
            await self.mailer.send_confirmation(me.player_id, address, language, name, token)
        elif not address:
            await self.mailer.outbox.drop_player(me.player_id)  # removed: nothing queued goes out either
        return N.SetEmailResponse(email=address_proto(await self.store.get(me.player_id)))

    @refusing(UNAVAILABLE)
    async def GetEmail(
        self, request: N.GetEmailRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> N.GetEmailResponse:
        me = self.auth.identity(context.invocation_metadata())
        if me.guest:
            return N.GetEmailResponse(email=N.EmailAddress())
        return N.GetEmailResponse(email=address_proto(await self.store.get(me.player_id)))

    @refusing(UNAVAILABLE)
    async def ConfirmEmail(
        self, request: N.ConfirmEmailRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> N.ConfirmEmailResponse:
        player_id, digest = split_confirm_token(request.token)
        state, _address, username = await self.store.confirm(player_id, digest, self.mailer.now_ms())
        if state == 0:
            raise bad_token()
        if state == 1:
            await self.mailer.confirmed(player_id)
        return N.ConfirmEmailResponse(email=address_proto(await self.store.get(player_id)), username=username)

    @refusing(UNAVAILABLE)
    async def Unsubscribe(
        self, request: N.UnsubscribeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> N.UnsubscribeResponse:
        return N.UnsubscribeResponse(stopped=await self.unsubscribe(request.token))
