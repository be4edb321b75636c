"""Live game events: one Redis pub/sub connection per gateway process feeds every local watcher.

A game's channel (services.kit.store.game_keys(id).channel) carries one
``tafel.games.v1.GameEventBatch`` per applied action. The hub subscribes a channel when its first
local watcher arrives and unsubscribes a little after the last one leaves; each message is parsed
once and handed to every watcher of that game.

No gap, no duplicate: a watcher subscribes first (and waits for Redis to confirm the
subscription), then reads the game's event stream (XRANGE) after the id it was given, then takes
live batches. A watch from the end of a finished game ends at once (nothing is left to come); an id
past the end of the stream is OUT_OF_RANGE. Every delivered event carries the game's status after
its move: live ones from their batch, replayed ones from the status kept beside each stream entry.
Event ids ("<version>-<index>") order everything: a live event at or before the last
delivered id is dropped; a batch that skips a version makes the watcher read the gap from the stream
first. If the pub/sub connection breaks, the hub reconnects, re-subscribes, and every watcher
re-reads the stream after its last id once its channel is confirmed again. A watcher whose consumer
falls far behind drops its backlog and re-reads the stream when it catches up (bounded memory).

The connection speaks RESP directly (subscribe/unsubscribe/ping and pushed messages only), so the
hub controls reconnects and knows exactly when a subscription is live.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc
from tafel.games.v1 import games_pb2

from kit.errors import Refused
from kit.redis.pipe import (
    PARSE_ERRORS,
    READ_SIZE,
    RedisPipe,
    RespError,
    command,
    open_redis,
    read_reply,
    reply_parser,
)
from services.kit.store import GameStore, StreamEntry, game_keys

log = logging.getLogger("tafel.gateway.watch")
QUEUE_LIMIT = 2048
LINGER_S = 2.0
SUBSCRIBE_TIMEOUT_S = 5.0
PING_EVERY_S = 15.0


def event_key(event_id: str) -> tuple[int, int]:
    version, _, index = event_id.partition("-")
    try:
        return int(version), int(index or 0)
    except ValueError:
        return -1, -1


EVENT_ID = re.compile(r"^[0-9]{1,20}-[0-9]{1,20}$")


def check_event_id(value: str) -> None:
    """A malformed after_event_id is INVALID_ARGUMENT (an id past the end is OUT_OF_RANGE, found
    when the stream is read)."""
    if value and not EVENT_ID.match(value):
        raise Refused(
            grpc.StatusCode.INVALID_ARGUMENT, "BAD_EVENT_ID", "after_event_id must be an event id like 12-1"
        )


def past_the_end(event_id: str, last: str) -> Refused:
    return Refused(
        grpc.StatusCode.OUT_OF_RANGE,
        "EVENT_ID_OUT_OF_RANGE",
        f"after_event_id {event_id} is past the end of the game's events (the last is {last})",
    )


@dataclass
class _Channel:
    name: bytes
    game_id: str
    watchers: set[Watch] = field(default_factory=set)
    confirmed: asyncio.Event = field(default_factory=asyncio.Event)
    resync: bool = False
    linger: asyncio.TimerHandle | None = None


_RESYNC = object()
HISTORY, LAST_OF_HISTORY, LIVE = 0, 1, 2
_END = object()


class LiveBatch:
    """One pub/sub batch as every local watcher of its game receives it: parsed once, stamped
    with its arrival, and a cache where the streams keep each event's encoded delivery, so a
    delivery is built and serialized once per gateway however many watchers it goes to."""

    __slots__ = ("batch", "encoded", "received")

    def __init__(self, batch: games_pb2.GameEventBatch, received: float) -> None:
        self.batch = batch
        self.received = received  # seconds since the epoch
        self.encoded: dict[Any, bytes] = {}


class Watch:
    """One consumer's view of one game's events: history after an id, then live, in order."""

    def __init__(self, hub: EventHub, game_id: str, after_event_id: str) -> None:
        self.hub = hub
        self.game_id = game_id
        self.after = after_event_id
        self.last: tuple[int, int] = event_key(after_event_id) if after_event_id else (-1, -1)
        self.status: games_pb2.GameStatus | None = None  # after the live batch being delivered
        # The live batch and index of the event just yielded, when it came straight from a
        # pub/sub batch (None for events read from the stream).
        self.current: tuple[LiveBatch, int] | None = None
        self._queue: deque[Any] = deque()
        self._ready = asyncio.Event()
        self._prepared: list[tuple[games_pb2.GameEvent, games_pb2.GameStatus | None]] | None = None
        self._finished = False  # the game is over and nothing is left after the starting id

    def _push(self, item: Any) -> None:
        if len(self._queue) >= QUEUE_LIMIT:
            self._queue.clear()
            self._queue.append(_RESYNC)
        else:
            self._queue.append(item)
        self._ready.set()

    def start_after(self, event_id: str) -> None:
        """Start after `event_id` instead (before events() runs): e.g. after a view just read."""
        self.after = event_id
        self.last = event_key(event_id) if event_id else (-1, -1)

    async def _history(self) -> list[tuple[games_pb2.GameEvent, games_pb2.GameStatus | None]]:
        after = "-" if self.last < (0, 0) else f"{self.last[0]}-{self.last[1]}"
        rows = await self.hub.read_stream(self.game_id, after)
        events = []
        for row in rows:
            key = event_key(row.event_id)
            if key > self.last:
                status = games_pb2.GameStatus.FromString(row.status) if row.status else None
                events.append((games_pb2.GameEvent.FromString(row.payload), status))
                self.last = key
        return events

    def _missing(self) -> Refused:
        message = f"there is no game {self.game_id} (or it has expired)"
        return Refused(grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND", message)

    async def prepare(self) -> None:
        """Read the history after the starting id now (events() does it when nobody did): the
        refusals a bad starting point gets (NOT_FOUND, OUT_OF_RANGE) come before anything else."""
        history = await self._history()
        if not history:
            if self.last < (0, 0):
                raise self._missing()
            self._finished = await self._at_the_end()
        self._prepared = history

    async def _at_the_end(self) -> bool:
        """Nothing was left after the starting id: True when the game is over (the watch ends);
        OUT_OF_RANGE when the id is past the stream's end."""
        end = await self.hub.end_of_stream(self.game_id)
        if end is None:
            raise self._missing()
        last, over = end
        if self.last > event_key(last):
            raise past_the_end(self.after, last)
        # Over with events after the XRANGE: they were published after it, so they come live.
        return over and self.last == event_key(last)

    async def events(self) -> AsyncIterator[tuple[games_pb2.GameEvent, int]]:
        """Everything after the starting id, then live events, each with where it came from
        (HISTORY, LAST_OF_HISTORY or LIVE); `status` is the game's status after the event's move
        while it is yielded. Ends after the game's last event (at once when the game is over and
        nothing is left), or when the hub closes. NOT_FOUND when the game has no events at all
        (never created, or expired); OUT_OF_RANGE when the starting id is past the end."""
        if self._prepared is None:
            await self.prepare()
        history, self._prepared = self._prepared or [], []
        if self._finished:
            return
        for position, (event, status) in enumerate(history):
            self.status = status
            yield event, LAST_OF_HISTORY if position == len(history) - 1 else HISTORY
            if event.WhichOneof("kind") == "ended":
                return
        while True:
            while not self._queue:
                self._ready.clear()
                await self._ready.wait()
            item = self._queue.popleft()
            if item is _END:
                return
            self.current = None
            if item is _RESYNC:
                batch_events = await self._history()
            else:
                live: LiveBatch = item
                batch = live.batch
                if not batch.events:
                    continue
                # The game's status after this batch's move (whom it waits on), for deliveries.
                self.status = batch.status if batch.HasField("status") else None
                first = event_key(batch.events[0].event_id)
                if first[0] > self.last[0] + 1 and self.last >= (0, 0):
                    batch_events = await self._history()  # a version went missing: read the gap
                else:
                    for index, event in enumerate(batch.events):
                        key = event_key(event.event_id)
                        if key > self.last:
                            self.last = key
                            self.current = (live, index)
                            yield event, LIVE
                            if event.WhichOneof("kind") == "ended":
                                return
                    self.current = None
                    continue
            for event, status in batch_events:
                self.status = status
                yield event, LIVE
                if event.WhichOneof("kind") == "ended":
                    return


class EventHub:
    """The gateway's single pub/sub connection and its fan-out to local watchers."""

    def __init__(self, redis_url: str, store: GameStore, pipe: RedisPipe | None = None) -> None:
        self.url = redis_url
        self.store = store
        self.pipe = pipe  # the lean pipelined connection for history reads, when there is one
        self._channels: dict[bytes, _Channel] = {}
        # Subscriptions sent and not yet confirmed, in order, per channel name.
        self._waiting: dict[bytes, deque[_Channel]] = {}
        self._writer: asyncio.StreamWriter | None = None
        self._connected = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._generation = 0
        self._last_reply = 0.0
        self.messages = 0
        self.client_id: int | None = None  # the pub/sub connection's Redis client id

    @property
    def watchers(self) -> int:
        return sum(len(ch.watchers) for ch in self._channels.values())

    @property
    def channels(self) -> int:
        return len(self._channels)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="event hub")

    async def close(self) -> None:
        """Stop: every watcher's stream ends (clients reconnect elsewhere with their last id)."""
        self._closed = True
        for channel in self._channels.values():
            for watch in channel.watchers:
                watch._push(_END)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._writer is not None:
            self._writer.close()

    async def read_stream(self, game_id: str, after: str) -> list[StreamEntry]:
        """A game's events after the id `after` ("-" = from the start), as GameStore.read_stream."""
        if self.pipe is None:
            return await self.store.read_stream(game_id, after)
        start = "-" if after in ("", "-") else f"({after}"
        reply: Any = await self.pipe.call("XRANGE", game_keys(game_id).events, start, "+")
        rows: list[StreamEntry] = []
        for event_id, fields in reply:
            values = {bytes(fields[i]): bytes(fields[i + 1]) for i in range(0, len(fields) - 1, 2)}
            if b"e" in values:
                rows.append(StreamEntry(event_id.decode(), values[b"e"], values.get(b"t", b"")))
        return rows

    async def end_of_stream(self, game_id: str) -> tuple[str, bool] | None:
        """The game's last event id and whether it is over (None: no such game)."""
        if self.pipe is None:
            return await self.store.end_of_stream(game_id)
        reply: Any = await self.pipe.call("HMGET", game_keys(game_id).state, "l", "f")
        last, over = reply
        if last is None:
            return None
        return bytes(last).decode(), bytes(over or b"0") == b"1"

    # -- watchers -----------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def watch(self, game_id: str, after_event_id: str = "") -> AsyncIterator[Watch]:
        """Subscribe (confirmed by Redis) and yield a Watch; unsubscribe when done."""
        if self._closed:
            raise Refused(grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", "this gateway is stopping; reconnect")
        check_event_id(after_event_id)
        watch = Watch(self, game_id, after_event_id)
        channel = self._acquire(game_id, watch)
        try:
            try:
                if not channel.confirmed.is_set():  # (a game's second watcher finds it confirmed)
                    async with asyncio.timeout(SUBSCRIBE_TIMEOUT_S):
                        await channel.confirmed.wait()
            except TimeoutError:
                raise Refused(
                    grpc.StatusCode.UNAVAILABLE, "EVENTS_UNAVAILABLE", "live events are unavailable; retry"
                ) from None
            yield watch
        finally:
            self._release(channel, watch)

    def _acquire(self, game_id: str, watch: Watch) -> _Channel:
        name = game_keys(game_id).channel.encode()
        channel = self._channels.get(name)
        if channel is None:
            channel = _Channel(name=name, game_id=game_id)
            self._channels[name] = channel
            self._send_subscribe(channel)
        if channel.linger is not None:
            channel.linger.cancel()
            channel.linger = None
        channel.watchers.add(watch)
        return channel

    def _release(self, channel: _Channel, watch: Watch) -> None:
        channel.watchers.discard(watch)
        if not channel.watchers and self._channels.get(channel.name) is channel and channel.linger is None:
            channel.linger = asyncio.get_running_loop().call_later(LINGER_S, self._unsubscribe, channel)

    def _unsubscribe(self, channel: _Channel) -> None:
        channel.linger = None
        if channel.watchers or self._channels.get(channel.name) is not channel:
            return
        del self._channels[channel.name]
        self._send(command("UNSUBSCRIBE", channel.name))

    def _send_subscribe(self, channel: _Channel) -> None:
        if self._writer is None or not self._connected.is_set():
            return  # (re)connecting: the connection subscribes every channel when it is up
        self._waiting.setdefault(channel.name, deque()).append(channel)
        self._send(command("SUBSCRIBE", channel.name))

    def _send(self, data: bytes) -> None:
        writer = self._writer
        if writer is not None and self._connected.is_set() and not writer.is_closing():
            writer.write(data)

    # -- the connection -----------------------------------------------------------------------------

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await open_redis(self.url, select_db=False)  # pub/sub ignores databases
        writer.write(command("CLIENT", "ID"))
        reply = await read_reply(reader)
        self.client_id = reply if isinstance(reply, int) else None
        return reader, writer

    async def _run(self) -> None:
        backoff = 0.05
        first = True
        while not self._closed:
            try:
                reader, writer = await asyncio.wait_for(self._open(), 5.0)
            except (OSError, ConnectionError, TimeoutError) as error:
                log.warning("pub/sub connect failed", extra={"error": type(error).__name__})
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            backoff = 0.05
            self._writer = writer
            self._waiting.clear()
            self._connected.set()
            self._generation += 1
            # The control channel keeps the connection subscribed; then every game channel.
            for channel in self._channels.values():
                if not first:
                    channel.resync = True
                self._send_subscribe(channel)
            first = False
            pinger = asyncio.get_running_loop().create_task(self._ping())
            try:
                await self._read(reader)
            except (OSError, ConnectionError, asyncio.IncompleteReadError, ValueError, *PARSE_ERRORS) as error:
                if not self._closed:
                    log.warning("pub/sub connection lost", extra={"error": type(error).__name__})
            finally:
                pinger.cancel()
                self._connected.clear()
                self._writer = None
                writer.close()
                for channel in self._channels.values():
                    channel.confirmed.clear()
            if not self._closed:
                await asyncio.sleep(0.05)

    async def _ping(self) -> None:
        while True:
            await asyncio.sleep(PING_EVERY_S)
            sent = time.monotonic()
            self._send(command("PING"))
            await asyncio.sleep(PING_EVERY_S / 2)
            if self._last_reply < sent and self._writer is not None:
                log.warning("pub/sub connection silent; reconnecting")
                self._writer.close()
                return

    async def _read(self, reader: asyncio.StreamReader) -> None:
        parser = reply_parser()
        while True:
            data = await reader.read(READ_SIZE)
            if not data:
                raise ConnectionError("redis closed the connection")
            parser.feed(data)
            self._last_reply = time.monotonic()
            while (reply := parser.gets()) is not False:
                if not isinstance(reply, list) or not reply:
                    if isinstance(reply, RespError):
                        log.warning("pub/sub error", extra={"error": str(reply)})
                    continue
                kind = reply[0]
                if kind == b"message":
                    self._deliver(reply[1], reply[2])
                elif kind == b"subscribe":
                    self._confirmed(reply[1])

    def _confirmed(self, name: bytes) -> None:
        waiting = self._waiting.get(name)
        if not waiting:
            return
        channel = waiting.popleft()
        if not waiting:
            del self._waiting[name]
        if self._channels.get(name) is not channel:
            return
        channel.confirmed.set()
        if channel.resync:
            channel.resync = False
            for watch in channel.watchers:
                watch._push(_RESYNC)

    def _deliver(self, name: bytes, data: bytes) -> None:
        channel = self._channels.get(name)
        if channel is None or not channel.watchers:
            return
        self.messages += 1
        try:
            batch = games_pb2.GameEventBatch.FromString(data)
        except Exception:
            log.warning("undecodable event batch", extra={"channel": name.decode(errors="replace")})
            return
        live = LiveBatch(batch, time.time())
        for watch in channel.watchers:
            watch._push(live)
