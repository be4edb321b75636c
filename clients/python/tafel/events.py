"""The account's event stream (EventService.WatchMyEvents): challenges to and by you, games that
start for you, offers in your games, and the presence of the players you follow (`presence`: a
PresenceChanged, see `presence_of`). One per client, resumed by itself after a cut:

    async with client.event_stream() as events:      # live once this line is done
        pending = await client.list_challenges()     # what waited before: no gap, see below
        async for event in events:
            if event.WhichOneof("kind") == "challenge": ...

Every event has an id (`event.event_id`, increasing per account). When the stream breaks (a
dropped connection, a gateway killed or stopping), it opens again, on whichever gateway the
channel reaches, after the last id it handed out: every event after it comes once, in order;
nothing is lost or doubled. A stream opened without an id starts at the account's newest event
(the server's `ready` says which), and a cut before the first event resumes from there too, so
what happens while it reconnects is never skipped. Read what was pending before with
`list_challenges` after entering: a challenge made in between shows in both (tell them apart by
challenge_id).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from tafel.play.v1 import challenges_pb2, challenges_pb2_grpc, social_pb2
from tafel.resuming import ResumingStream


class Connection(Protocol):
    """What the stream needs of its client (a TafelClient)."""

    @property
    def events(self) -> challenges_pb2_grpc.EventServiceStub: ...

    def metadata(self) -> tuple[tuple[str, str], ...]: ...


class AccountEventStream(ResumingStream[challenges_pb2.AccountEvent]):
    """Use as `async with client.event_stream(...) as events: async for event in events`."""

    what = "the event stream"

    def __init__(
        self,
        client: Connection,
        after_event_id: str = "",
        *,
        max_retries: int | None,
        on_connection: Callable[[bool], Awaitable[None]] | None = None,
    ) -> None:
        super().__init__(after_event_id, max_retries=max_retries, on_connection=on_connection)
        self.client = client

    @property
    def last_event_id(self) -> str:
        """The last event handed out (or, before the first, where the stream started)."""
        return self.last_id

    async def __aenter__(self) -> AccountEventStream:
        await self.start()
        return self

    async def next_event(self, timeout: float | None = None) -> challenges_pb2.AccountEvent:
        """The next event; TimeoutError after `timeout` seconds (the stream stays as it was)."""
        return await self.next_item(timeout)

    def open_call(self) -> Any:
        request = challenges_pb2.WatchMyEventsRequest(after_event_id=self.last_id)
        return self.client.events.WatchMyEvents(request, metadata=self.client.metadata())

    def ready_of(self, response: challenges_pb2.WatchMyEventsResponse) -> Any | None:
        return response.ready if response.WhichOneof("kind") == "ready" else None

    def on_ready(self, ready: challenges_pb2.EventStreamReady) -> None:
        if not self.last_id:
            # Started "from now": resume from this point, not from a later "now" ("0-0", the
            # stream's start, for an account that had no event yet).
            self.last_id = ready.last_event_id or "0-0"

    def item_of(self, response: challenges_pb2.WatchMyEventsResponse) -> challenges_pb2.AccountEvent:
        return response.event

    def id_of(self, item: challenges_pb2.AccountEvent) -> str:
        return item.event_id


def presence_of(event: challenges_pb2.AccountEvent) -> social_pb2.PresenceChanged | None:
    """A followed player's new presence (online, playing which game, last seen), or None for any
    other event."""
    return event.presence if event.WhichOneof("kind") == "presence" else None
