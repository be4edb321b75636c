"""EventService.WatchMyEvents: an account's events after an id, then live.

No gap, no duplicate: the watch subscribes to the account's wake-up channel and has it confirmed
before it reads the stream after the last id it delivered; every wake-up (and every re-confirmed
subscription after a reconnect) makes it read again from that id. Ids order everything, so a
wake-up for an event already read reads nothing. A watch resumed on another gateway with the last
id it saw continues exactly there."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
from tafel.play.v1 import challenges_pb2, challenges_pb2_grpc

from gateway.auth import Authenticator
from gateway.events.feed import events_key, wake_channel
from kit.errors import Refused, invalid, refusing
from kit.flag import Flag
from kit.ids import stream_id
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub
from kit.redis.replies import pairs, text
from kit.when_set import when_set

UNAVAILABLE = "the event stream's storage is unavailable; retry"
BATCH = 200


def _event(entry_id: bytes, flat: Any) -> challenges_pb2.WatchMyEventsResponse:
    event = challenges_pb2.AccountEvent.FromString(pairs(flat)[b"e"])
    event.event_id = text(entry_id)
    return challenges_pb2.WatchMyEventsResponse(event=event)


class EventServicer(challenges_pb2_grpc.EventServiceServicer):
    def __init__(self, auth: Authenticator, redis: RedisLayer, pubsub: PubSub, stopping: asyncio.Event) -> None:
        self.auth = auth
        self.redis = redis
        self.pubsub = pubsub
        self.stopping = stopping
        self.watching = 0  # open watches on this gateway (a gauge)

    async def _check_start(self, key: str, after: str) -> str:
        """The id to read after: `after`, or the stream's last id for a watch from now."""
        newest: Any = await self.redis.call("XREVRANGE", key, "+", "-", "COUNT", 1)
        last = text(newest[0][0]) if newest else ""
        if not after:
            return last or "0-0"
        parts = stream_id(after)
        if parts is None:
            raise invalid("BAD_EVENT_ID", 'after_event_id is not an event id like "1700000000000-0"')
        if last and parts > stream_id(last):  # type: ignore[operator]
            raise Refused(grpc.StatusCode.OUT_OF_RANGE, "EVENT_ID_OUT_OF_RANGE", "this event id is past the end")
        if newest:
            info = pairs(await self.redis.call("XINFO", "STREAM", key))
            trimmed = text(info.get(b"max-deleted-entry-id", b"0-0"))
            if parts < stream_id(trimmed):  # type: ignore[operator]
                raise Refused(
                    grpc.StatusCode.OUT_OF_RANGE,
                    "EVENT_ID_OUT_OF_RANGE",
                    "events after this id are no longer kept; list what is pending and watch from now",
                )
        return after

    @refusing(UNAVAILABLE)
    async def WatchMyEvents(
        self, request: challenges_pb2.WatchMyEventsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[challenges_pb2.WatchMyEventsResponse]:
        me = self.auth.identity(context.invocation_metadata())
        key = events_key(me.player_id)
        wake = Flag()
        subscription = self.pubsub.subscribe(
            wake_channel(me.player_id), lambda channel, payload: wake.set(), on_live=lambda again: wake.set()
        )
        self.watching += 1
        # One Event wakes the stream for both (no waiting task of its own: an idle stream costs
        # its Event and the future of its wait only).
        forget_stop = when_set(self.stopping, wake.set)
        try:
            try:
                await subscription.ready()
            except TimeoutError:
                raise Refused(
                    grpc.StatusCode.UNAVAILABLE, "EVENTS_UNAVAILABLE", "live events cannot be followed now; retry"
                ) from None
            last = await self._check_start(key, request.after_event_id)
            yield challenges_pb2.WatchMyEventsResponse(
                ready=challenges_pb2.EventStreamReady(last_event_id="" if last == "0-0" else last)
            )
            while True:
                wake.clear()
                entries: Any = await self.redis.call("XRANGE", key, f"({last}", "+", "COUNT", BATCH)
                for entry_id, flat in entries:
                    yield _event(entry_id, flat)
                    last = text(entry_id)
                if len(entries) == BATCH:
                    continue
                if not self.stopping.is_set():
                    await wake.wait()
                if self.stopping.is_set():
                    raise Refused(
                        grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", "this gateway is stopping; resume elsewhere"
                    )
        finally:
            self.watching -= 1
            forget_stop()
            subscription.cancel()
