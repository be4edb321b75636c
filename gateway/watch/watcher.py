"""One watcher's view of one game's events: the history after an id, then live, in order.

No gap, no duplicate: the hub has the game's channel confirmed before a watcher reads the game's
event stream (XRANGE) after the id it was given; then it takes live batches. A watch from the end
of a finished game ends at once (nothing is left to come); an id past the end of the stream is
OUT_OF_RANGE. Every delivered event carries the game's status after its move: live ones from
their batch, replayed ones from the status kept beside each stream entry. Event ids order
everything: a live event at or before the last delivered id is dropped; a batch that skips a
version makes the watcher read the gap from the stream first, and so does a RESYNC (the channel
was re-confirmed after a reconnect, or the consumer fell so far behind that its backlog was
dropped: bounded memory).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from tafel.games.v1 import games_pb2

from gateway.watch.event_ids import event_key, past_the_end
from kit.errors import Refused
from kit.ids import is_last_stream_id
from kit.redis.game_reads import GameReads

log = logging.getLogger("tafel.gateway.watch")
QUEUE_LIMIT = 2048
HISTORY, LAST_OF_HISTORY, LIVE = 0, 1, 2
RESYNC = object()  # re-read the stream after the last delivered id
END = object()  # the hub is closing: the watch ends


class LiveBatch:
    """One pub/sub batch as every local watcher of its game receives it: parsed once, stamped
    with its arrival, and a cache where the streams keep each event's encoded delivery, so a
    delivery is built and serialized once per gateway however many watchers it goes to."""

    __slots__ = ("batch", "encoded", "end", "keys", "received", "status")

    def __init__(self, batch: games_pb2.GameEventBatch, received: float) -> None:
        self.batch = batch
        self.received = received  # seconds since the epoch
        self.encoded: dict[Any, bytes] = {}
        # What every watcher asks of the batch, worked out by the first to ask (learn()): each of
        # a game's watchers once parsed every event id and asked every event's kind, a move.
        self.keys: list[tuple[int, int]] | None = None  # each event's event_key, in order
        self.end = -1  # the index of its `ended` event, -1 when it has none
        self.status: games_pb2.GameStatus | None = None  # the game's status after the batch's move

    def learn(self) -> list[tuple[int, int]]:
        """Fill in keys, end and status (once); the keys."""
        batch = self.batch
        keys = []
        for index, event in enumerate(batch.events):
            keys.append(event_key(event.event_id))
            if event.WhichOneof("kind") == "ended":
                self.end = index
        self.status = batch.status if batch.HasField("status") else None
        self.keys = keys
        return keys


class Watch:
    """One consumer's view of one game's events: history after an id, then live, in order."""

    def __init__(self, reads: GameReads, game_id: str, after_event_id: str) -> None:
        self.reads = reads
        self.game_id = game_id
        self.after = after_event_id
        self.last: tuple[int, int] = event_key(after_event_id) if after_event_id else (-1, -1)
        self.status: games_pb2.GameStatus | None = None  # after the live batch being delivered
        # The live batch and index of the event just yielded, when it came straight from a
        # pub/sub batch (None for events read from the stream).
        self.current: tuple[LiveBatch, int] | None = None
        self._queue: deque[Any] = deque()
        # The future events() waits on for a push (one reader: no Event, whose wait makes a future
        # through get_running_loop each time).
        self._waiter: asyncio.Future[None] | None = None
        self._prepared: list[tuple[games_pb2.GameEvent, games_pb2.GameStatus | None]] | None = None
        self._finished = False  # the game is over and nothing is left after the starting id
        # listen(): in-order live events handed over from push() itself while events() is idle.
        self._idle = False  # events() waits for a live item, nothing queued
        self._take: Callable[[int], bool] | None = None
        self._hand: Callable[[LiveBatch, int], None] | None = None

    def listen(self, take: Callable[[int], bool], hand: Callable[[LiveBatch, int], None]) -> None:
        """Have push() hand a live batch's events over itself, `hand(batch, index)` for each new
        one, while events() is idle waiting for live events and nothing is queued, the batch
        follows on from the last event and `take(n)` says its consumer takes n events now; any
        other item goes through events() as before. This saves a task wake-up and the generator's
        resumption per event (docs/benchmarks.md, "The gateway's move path"). events() still ends after an `ended` event
        handed over this way."""
        self._take = take
        self._hand = hand

    def _handed_over(self, live: LiveBatch) -> bool:
        """push()'s fast path; False leaves the batch to events() (a gap, or no room)."""
        keys = live.keys if live.keys is not None else live.learn()
        if not keys:
            return True  # (events() skips it too)
        take, hand = self._take, self._hand
        assert take is not None and hand is not None
        if (keys[0][0] > self.last[0] + 1 and self.last >= (0, 0)) or not take(len(keys)):
            return False
        self.status = live.status
        end = live.end
        for index, key in enumerate(keys):
            if key > self.last:
                self.last = key
                hand(live, index)
                if index == end:
                    self._wake(END)  # nothing follows the end: events() returns
                    return True
        return True

    def push(self, item: LiveBatch | object) -> None:
        """A live batch for this watcher (or a RESYNC / END marker); past QUEUE_LIMIT waiting items
        the backlog is dropped for one re-read of the stream."""
        if self._idle and not self._queue and self._hand is not None and type(item) is LiveBatch:
            try:
                if self._handed_over(item):
                    return
            except Exception:  # a consumer's bug: re-read from the last event handed over
                log.exception("live hand-over failed", extra={"game_id": self.game_id})
                item = RESYNC
        self._wake(item)

    def _wake(self, item: LiveBatch | object) -> None:
        if len(self._queue) >= QUEUE_LIMIT:
            self._queue.clear()
            self._queue.append(RESYNC)
        else:
            self._queue.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def start_after(self, event_id: str) -> None:
        """Start after `event_id` instead (before events() runs): e.g. after a view just read."""
        self.after = event_id
        self.last = event_key(event_id) if event_id else (-1, -1)

    def start_at_view(self, event_id: str, over: bool) -> None:
        """Start after `event_id`, the last event of a view read once this watch's channel was
        confirmed (the hub yields the watch only then), with nothing read from the stream: every
        event after the view comes live, and any before it is in the view. The watch ends at once
        when the view's game is over. (Two Redis reads fewer per watch: its XRANGE and the end
        check prepare() makes.) A view without events (none: every game has its creation) is left
        to prepare()."""
        self.start_after(event_id)
        if event_id:
            self._prepared = []
            self._finished = over

    async def _history(self) -> list[tuple[games_pb2.GameEvent, games_pb2.GameStatus | None]]:
        if is_last_stream_id(self.last):
            return []  # nothing comes after the greatest id (Redis would refuse the range)
        after = "-" if self.last < (0, 0) else f"{self.last[0]}-{self.last[1]}"
        rows = await self.reads.read_stream(self.game_id, after)
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
        refusals a bad starting point gets (NOT_FOUND, OUT_OF_RANGE) come before anything else.
        Once is enough (start_at_view may have settled it)."""
        if self._prepared is not None:
            return
        history = await self._history()
        if not history:
            if self.last < (0, 0):
                raise self._missing()
            self._finished = await self._at_the_end()
        self._prepared = history

    async def _at_the_end(self) -> bool:
        """Nothing was left after the starting id: True when the game is over (the watch ends);
        OUT_OF_RANGE when the id is past the stream's end."""
        end = await self.reads.end_of_stream(self.game_id)
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
        nothing is left), or at END (the hub closes). NOT_FOUND when the game has no events at all
        (never created, or expired); OUT_OF_RANGE when the starting id is past the end."""
        if self._prepared is None:
            await self.prepare()
        history, self._prepared = self._prepared or [], []
        if self._finished:
            return
        loop = asyncio.get_running_loop()
        for position, (event, status) in enumerate(history):
            self.status = status
            yield event, LAST_OF_HISTORY if position == len(history) - 1 else HISTORY
            if event.WhichOneof("kind") == "ended":
                return
        while True:
            while not self._queue:
                self._waiter = loop.create_future()
                self._idle = True
                try:
                    await self._waiter
                finally:
                    self._idle = False
            item = self._queue.popleft()
            if item is END:
                return
            self.current = None
            if item is RESYNC:
                batch_events = await self._history()
            else:
                live: LiveBatch = item
                keys = live.keys if live.keys is not None else live.learn()
                if not keys:
                    continue
                # The game's status after this batch's move (whom it waits on), for deliveries.
                self.status = live.status
                end = live.end
                if keys[0][0] > self.last[0] + 1 and self.last >= (0, 0):
                    batch_events = await self._history()  # a version went missing: read the gap
                else:
                    for index, event in enumerate(live.batch.events):
                        key = keys[index]
                        if key > self.last:
                            self.last = key
                            self.current = (live, index)
                            yield event, LIVE
                            if index == end:
                                return
                    self.current = None
                    continue
            for event, status in batch_events:
                self.status = status
                yield event, LIVE
                if event.WhichOneof("kind") == "ended":
                    return
