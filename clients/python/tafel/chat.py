"""Watching a chat channel (ChatService.WatchChat): a game's players' or spectators' channel, a
room's before its game, a tournament's. Resumed by itself after a cut:

    async with client.chat_stream(channel) as chat:     # live once this line is done
        print(chat.ready.can_write)                     # may this player write here now?
        async for message in chat:                      # history first, then live lines
            print(message.author.username, message.text)

Every message has an id ("<ms>-<n>", increasing in its channel). When the stream breaks (a
dropped connection, a gateway killed or stopping: SHUTTING_DOWN), it opens again, on whichever
gateway the channel reaches, after the last message it handed out: every message after it comes
once, in order. A stream opened without an id starts with the channel's latest messages (up to
100) as history. Lines by players you block or mute never come; with chat turned off in your
settings `ready.chat_off` is set and nothing comes until you turn it on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from tafel.play.v1 import social_pb2, social_pb2_grpc
from tafel.requests import chat_kind
from tafel.resuming import ResumingStream

ChatChannel = social_pb2.ChatChannel


class Connection(Protocol):
    """What the stream needs of its client (a TafelClient)."""

    @property
    def chat(self) -> social_pb2_grpc.ChatServiceStub: ...

    def metadata(self) -> tuple[tuple[str, str], ...]: ...


def channel(kind: str | int, id: str) -> social_pb2.ChatChannel:
    """A channel by its kind ("players", "spectators", "room", "tournament" or a ChatChannelKind)
    and its id (the game id, room code or tournament id)."""
    return social_pb2.ChatChannel(kind=chat_kind(kind), id=id)


class ChatStream(ResumingStream[social_pb2.ChatMessage]):
    """Use as `async with client.chat_stream(channel) as chat: async for message in chat`."""

    what = "the chat"

    def __init__(
        self,
        client: Connection,
        channel: social_pb2.ChatChannel,
        after_message_id: str = "",
        *,
        max_retries: int | None,
        on_connection: Callable[[bool], Awaitable[None]] | None = None,
        on_ready: Callable[[social_pb2.ChatReady], None] | None = None,
    ) -> None:
        super().__init__(after_message_id, max_retries=max_retries, on_connection=on_connection)
        self.client = client
        self.channel = channel
        # The latest `ready`: whether chat is off for the caller, whether they may write here.
        self.ready = social_pb2.ChatReady()
        self._told = on_ready

    @property
    def last_message_id(self) -> str:
        """The last message handed out: where the stream resumes."""
        return self.last_id

    async def __aenter__(self) -> ChatStream:
        await self.start()
        return self

    async def next_message(self, timeout: float | None = None) -> social_pb2.ChatMessage:
        """The next message; TimeoutError after `timeout` seconds (the stream stays as it was)."""
        return await self.next_item(timeout)

    def open_call(self) -> Any:
        # Unlike the event stream, a chat watch opened without an id sends history after its
        # `ready`; so the resume point is only ever a message handed out (a cut before the first
        # one asks for the history again, none of which was seen).
        request = social_pb2.WatchChatRequest(channel=self.channel, after_message_id=self.last_id)
        return self.client.chat.WatchChat(request, metadata=self.client.metadata())

    def ready_of(self, response: social_pb2.WatchChatResponse) -> Any | None:
        return response.ready if response.WhichOneof("kind") == "ready" else None

    def on_ready(self, ready: social_pb2.ChatReady) -> None:
        self.ready = ready
        if self._told is not None:
            self._told(ready)

    def item_of(self, response: social_pb2.WatchChatResponse) -> social_pb2.ChatMessage:
        return response.message

    def items_of(self, response: social_pb2.WatchChatResponse) -> list[social_pb2.ChatMessage]:
        # A busy channel's waiting lines come several in one response (`lines`).
        if response.WhichOneof("kind") == "lines":
            return list(response.lines.messages)
        return [response.message]

    def id_of(self, item: social_pb2.ChatMessage) -> str:
        return item.message_id
