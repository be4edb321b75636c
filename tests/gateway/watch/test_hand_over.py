"""Watch.listen (gateway/watch/watcher.py): in-order live events are handed over from push()
itself; a gap, a consumer without room and the end still go through events(), in order, none
twice. Real Redis holds the game's event stream the gaps are read from."""

from __future__ import annotations

import asyncio
import uuid

from redis.asyncio import Redis
from tafel.games.v1 import games_pb2

from gateway.watch.watcher import LIVE, LiveBatch, Watch
from kit.redis.game_reads import GameReads, StreamEntry
from kit.redis.keys import game_keys
from kit.redis.layer import RedisLayer


def event(version: int, ended: bool = False) -> games_pb2.GameEvent:
    made = games_pb2.GameEvent(event_id=f"{version}-1", version=version)
    if ended:
        made.ended.SetInParent()
    else:
        made.created.SetInParent()
    return made


def entry(version: int) -> dict[str, bytes]:
    """A stream entry as commit.lua writes it: the event and the game's status after it ('t')."""
    return {"e": event(version).SerializeToString(), "t": games_pb2.GameStatus(version=version).SerializeToString()}


async def test_live_events_are_handed_over_in_order_and_gaps_still_come_from_the_stream(
    redis: Redis, layer: RedisLayer
) -> None:
    game_id = f"hand-{uuid.uuid4().hex[:8]}"
    keys = game_keys(game_id)
    await redis.xadd(keys.events, entry(0), id="0-1")  # the history
    await redis.hset(keys.state, mapping={"l": "0-1", "f": "0"})
    watch = Watch(GameReads(layer), game_id, "")
    handed: list[str] = []
    room = [True]
    watch.listen(lambda count: room[0], lambda live, index: handed.append(live.batch.events[index].event_id))
    seen: list[tuple[str, int]] = []
    consumed = asyncio.Event()

    async def consume() -> None:
        async for got, source in watch.events():
            seen.append((got.event_id, source))
            consumed.set()

    consumer = asyncio.ensure_future(consume())
    try:
        await asyncio.wait_for(consumed.wait(), 5)
        assert [e for e, _ in seen] == ["0-1"]
        # (Woken by that set(), this test runs only once the consumer waits for live events again:
        # it does not await anything between the two.)

        def live(*versions: int, ended: bool = False) -> LiveBatch:
            batch = games_pb2.GameEventBatch(events=[event(v, ended) for v in versions])
            return LiveBatch(batch, 0.0)

        watch.push(live(1))
        assert handed == ["1-1"]  # handed over inside push(): no wake-up of the consumer
        watch.push(live(1))
        assert handed == ["1-1"]  # a duplicate is dropped there too
        # Every live batch's events are in the stream before they are published; 2's batch is lost.
        for version in (1, 2, 3):
            await redis.xadd(keys.events, entry(version), id=f"{version}-1")
        consumed.clear()
        watch.push(live(3))  # version 2 is missing: the consumer reads it from the stream
        assert handed == ["1-1"]
        await asyncio.wait_for(consumed.wait(), 5)
        while len(seen) < 3:
            consumed.clear()
            await asyncio.wait_for(consumed.wait(), 5)
        assert seen[1:] == [("2-1", LIVE), ("3-1", LIVE)]
        room[0] = False  # the consumer has no room: the batch waits in the queue for events()
        consumed.clear()
        watch.push(live(4))
        await asyncio.wait_for(consumed.wait(), 5)
        assert seen[-1] == ("4-1", LIVE) and handed == ["1-1"]
        room[0] = True
        watch.push(live(5, ended=True))  # handed over, and events() ends after it
        assert handed == ["1-1", "5-1"]
        await asyncio.wait_for(consumer, 5)
        assert [e for e, _ in seen] == ["0-1", "2-1", "3-1", "4-1"]  # each event once, in order
    finally:
        consumer.cancel()
        await redis.delete(keys.events, keys.state)


class CountedReads(GameReads):
    """The real stream reads, counted: a watch started at its view makes none."""

    def __init__(self, layer: RedisLayer) -> None:
        super().__init__(layer)
        self.calls = 0

    async def read_stream(self, game_id: str, after: str = "-", count: int | None = None) -> list[StreamEntry]:
        self.calls += 1
        return await super().read_stream(game_id, after, count)

    async def end_of_stream(self, game_id: str) -> tuple[str, bool] | None:
        self.calls += 1
        return await super().end_of_stream(game_id)


async def test_a_watch_started_at_its_view_reads_nothing_from_the_stream(redis: Redis, layer: RedisLayer) -> None:
    game_id = f"view-{uuid.uuid4().hex[:8]}"
    keys = game_keys(game_id)
    for version in (0, 1):
        await redis.xadd(keys.events, entry(version), id=f"{version}-1")
    await redis.hset(keys.state, mapping={"l": "1-1", "f": "0"})
    try:
        reads = CountedReads(layer)
        watch = Watch(reads, game_id, "")
        watch.start_at_view("1-1", over=False)
        await watch.prepare()
        # What came live before the view was read (in it already) is dropped; what follows it is not.
        watch.push(LiveBatch(games_pb2.GameEventBatch(events=[event(1)]), 0.0))
        watch.push(LiveBatch(games_pb2.GameEventBatch(events=[event(2, ended=True)]), 0.0))
        seen = [(got.event_id, source) async for got, source in watch.events()]
        assert seen == [("2-1", LIVE)] and reads.calls == 0
        # A view of a game that is over: the watch ends at once, still without a read.
        over = Watch(reads, game_id, "")
        over.start_at_view("2-1", over=True)
        await over.prepare()
        assert [got async for got in over.events()] == [] and reads.calls == 0
        # Without a view, the watch reads its history (and the check of the end) as before.
        after = Watch(reads, game_id, "1-1")
        await after.prepare()
        assert reads.calls == 2
    finally:
        await redis.delete(keys.events, keys.state)


def test_a_batch_is_read_once_for_all_its_watchers() -> None:
    batch = games_pb2.GameEventBatch(events=[event(4), event(5, ended=True)])
    batch.status.version = 5
    live = LiveBatch(batch, 0.0)
    assert live.keys is None  # nothing read until a watcher asks
    keys = live.learn()
    assert keys == [(4, 1), (5, 1)] and live.keys is keys
    assert live.end == 1 and live.status is not None and live.status.version == 5
    plain = LiveBatch(games_pb2.GameEventBatch(events=[event(2)]), 0.0)
    plain.learn()
    assert plain.end == -1 and plain.status is None
