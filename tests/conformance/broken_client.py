"""Deliberately broken clients: the reference client with one fault each, to show that the kit's
matching scenario fails them.

    python -m tests.conformance.broken_client new-request-id  <the kit's arguments>
    python -m tests.conformance.broken_client skip-on-resume  <the kit's arguments>
    python -m tests.conformance.broken_client events-from-now <the kit's arguments>
    python -m tests.conformance.broken_client ignore-offers   <the kit's arguments>
    python -m tests.conformance.broken_client chat-from-start <the kit's arguments>"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator

import grpc
from google.protobuf.message import Message
from tafel.client import TafelClient, new_request_id
from tafel.conformance.reference_client import ReferenceClient, main, parse
from tafel.errors import from_rpc_error
from tafel.messages import game_move
from tafel.play.v1 import challenges_pb2, play_pb2, play_pb2_grpc, social_pb2


class NewRequestIdOnRetry(ReferenceClient):
    """Resends a move whose answer was lost as a new request (a fresh request id). Its moves go
    over a channel of its own without gRPC's retry policy: on the SDK's channel gRPC itself would
    resend the very same request (tafel/retry.py), and the fault would never show."""

    def __init__(self, client: TafelClient, game: str) -> None:
        super().__init__(client, game)
        channel = grpc.aio.insecure_channel(parse(sys.argv[2:]).server, options=[("grpc.enable_retries", 0)])
        self.games = play_pb2_grpc.GameServiceStub(channel)

    async def submit(self, game_id: str, move: Message, version: int) -> None:
        for _ in range(5):
            request = play_pb2.SubmitMoveRequest(
                game_id=game_id, expected_version=version, request_id=new_request_id(), move=game_move(move)
            )
            try:
                await self.games.SubmitMove(request, metadata=self.client.metadata(), timeout=10)
                return
            except grpc.aio.AioRpcError as error:
                if error.code() is not grpc.StatusCode.UNAVAILABLE:
                    raise from_rpc_error(error) from None


class SkipOnResume(ReferenceClient):
    """Resumes a cut watch one event too far (from the event after the last one it saw)."""

    async def events_after(self, game_id: str, after: str) -> AsyncGenerator[play_pb2.WatchGameResponse, None]:
        last, resumed = after, False
        while True:
            call = self.client.games.WatchGame(
                play_pb2.WatchGameRequest(game_id=game_id, after_event_id=last), metadata=self.client.metadata()
            )
            try:
                skip = resumed
                async for response in call:
                    if skip:
                        skip = False
                        continue
                    last = response.event.event_id
                    yield response
                return
            except grpc.aio.AioRpcError as error:
                if error.code() is not grpc.StatusCode.UNAVAILABLE:
                    raise
                resumed = True


class EventsFromNow(ReferenceClient):
    """Reopens a cut account event stream from "now" (no after_event_id) instead of the last id
    it saw: whatever happened while it was away is lost."""

    async def account_events(self) -> AsyncGenerator[challenges_pb2.AccountEvent, None]:
        stub = self.client.events
        while True:
            call = stub.WatchMyEvents(challenges_pb2.WatchMyEventsRequest(), metadata=self.client.metadata())
            try:
                async for response in call:
                    if response.WhichOneof("kind") == "event":
                        yield response.event
                return
            except grpc.aio.AioRpcError as error:
                if error.code() is not grpc.StatusCode.UNAVAILABLE:
                    raise


class IgnoresOffers(ReferenceClient):
    """Never answers an offer in its games (a draw offer waits until a move makes it moot)."""

    async def answer_offer(self, offer: play_pb2.Offer) -> None:
        return None


class ChatFromTheStart(ReferenceClient):
    """Reopens a cut chat watch without an after_message_id: the history comes again, and the
    lines it already printed are printed twice."""

    async def chat_lines(
        self, channel: social_pb2.ChatChannel, say: str
    ) -> AsyncGenerator[social_pb2.ChatMessage, None]:
        said = False
        while True:
            call = self.client.chat.WatchChat(
                social_pb2.WatchChatRequest(channel=channel), metadata=self.client.metadata()
            )
            try:
                async for response in call:
                    if response.WhichOneof("kind") == "ready" and say and not said:
                        said = True
                        await self.client.send_chat(channel, say)
                    elif response.WhichOneof("kind") == "message":
                        yield response.message
                    elif response.WhichOneof("kind") == "lines":
                        for message in response.lines.messages:
                            yield message
                return
            except grpc.aio.AioRpcError as error:
                if error.code() is not grpc.StatusCode.UNAVAILABLE:
                    raise


FAULTS: dict[str, type[ReferenceClient]] = {
    "new-request-id": NewRequestIdOnRetry,
    "skip-on-resume": SkipOnResume,
    "events-from-now": EventsFromNow,
    "ignore-offers": IgnoresOffers,
    "chat-from-start": ChatFromTheStart,
}

if __name__ == "__main__":
    main(sys.argv[2:], FAULTS[sys.argv[1]])
