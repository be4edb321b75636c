"""Two gateways' event hubs and the listeners set (gateway/watch/hub.py, lua/watch/listen,
lua/rules/commit): an action a gateway routes reaches its own watchers from the answer and is
published only when another gateway listens; an action whose answer was lost is caught up from the
stream; the registration is in place before a watcher reads, and is removed, and restored after a
reconnect."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import grpc
import pytest
from redis.asyncio import Redis
from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2

from gateway.actions import Actions
from gateway.records import Records
from gateway.watch import hub as hub_module
from gateway.watch.hub import EventHub
from kit.errors import Refused
from kit.redis.game_reads import GameReads
from kit.redis.keys import game_keys
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub
from services.kit.store import Committed, GameStore, NewEvent
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Client, Seating, c4_move
from tests.keyspace import on_cluster


class Game:
    """A game written as a rules service writes it, each action routed by a given listener id;
    `answer` is the ApplyMoveResponse the router would get back."""

    def __init__(self, store: GameStore) -> None:
        self.store = store
        self.game_id = f"lis-{uuid.uuid4().hex[:10]}"
        self.version = 0

    async def create(self) -> None:
        created = games_pb2.GameEvent(event_id="0-1", version=0)
        created.created.game = "connect4"
        batch = games_pb2.GameEventBatch(game_id=self.game_id, events=[created])
        result = await self.store.create(
            game_id=self.game_id, request_id="create", game="connect4", seats=2, options=b"", state=b"s",
            created=NewEvent("0-1", created.SerializeToString()), response=b"", publish=batch.SerializeToString(),
        )  # fmt: skip
        assert isinstance(result, Committed)

    async def move(self, listener: str) -> rules_pb2.ApplyMoveResponse:
        version = self.version + 1
        event = games_pb2.GameEvent(event_id=f"{version}-1", version=version)
        event.connect4.disc_dropped.column = version % 7
        status = games_pb2.GameStatus(version=version, to_act=[version % 2])
        answer = rules_pb2.ApplyMoveResponse(version=version, events=[event], status=status, clock_armed=True)
        batch = games_pb2.GameEventBatch(game_id=self.game_id, events=[event], status=status)
        result = await self.store.commit(
            game_id=self.game_id, expected_version=self.version, request_id=f"m{version}", state=b"s",
            events=[NewEvent(event.event_id, event.SerializeToString())], response=answer.SerializeToString(),
            over=False, publish=batch.SerializeToString(), action=b"", status=status.SerializeToString(),
            listener=listener,
        )  # fmt: skip
        assert isinstance(result, Committed)
        self.version = version
        return answer


@contextlib.asynccontextmanager
async def hub_of(redis: Redis, redis_url: str) -> AsyncIterator[EventHub]:
    """One gateway's hub: its own pub/sub connection and pipelined Redis connection."""
    pubsub, layer = PubSub(redis_url), RedisLayer.around(redis)
    hub = EventHub(pubsub, GameReads(layer))
    hub.start()
    try:
        yield hub
    finally:
        await hub.close()
        await pubsub.close()
        await layer.close()


class Reader:
    """A watch's events read with timeouts, without cancelling the generator between reads (a
    cancelled `__anext__` would end it)."""

    def __init__(self, iterator) -> None:  # type: ignore[no-untyped-def]
        self.iterator = iterator
        self.pending: asyncio.Future[object] | None = None

    def _next(self) -> asyncio.Future[object]:
        if self.pending is None:
            self.pending = asyncio.ensure_future(self.iterator.__anext__())
        return self.pending

    async def ids(self, count: int, timeout_s: float = 5.0) -> list[str]:
        out = []
        for _ in range(count):
            event, _ = await asyncio.wait_for(asyncio.shield(self._next()), timeout_s)  # type: ignore[misc]
            self.pending = None
            out.append(event.event_id)
        return out

    async def nothing_within(self, seconds: float = 0.3) -> bool:
        done, _ = await asyncio.wait((self._next(),), timeout=seconds)
        return not done


async def members(redis: Redis, game_id: str) -> set[str]:
    return {member.decode() for member in await redis.smembers(game_keys(game_id).listeners)}


async def test_a_local_action_comes_from_the_answer_and_a_remote_one_by_pub_sub(redis: Redis, redis_url: str) -> None:
    store = GameStore(RedisLayer.around(redis), live_ttl_s=60, finished_ttl_s=60)
    game = Game(store)
    await game.create()
    try:
        async with hub_of(redis, redis_url) as a, hub_of(redis, redis_url) as b:
            async with a.watch(game.game_id) as watch_a:
                # Registered before the watch was handed out: an action committed from here on is
                # either published for this hub or routed by it.
                assert await members(redis, game.game_id) == {a.listener_id}
                on_a = Reader(watch_a.events())
                assert await on_a.ids(1) == ["0-1"]

                # Routed by A, A the only listener: not published; A's watcher has it from the answer.
                answer = await game.move(a.listener_id)
                assert await on_a.nothing_within()
                a.hand_over(game.game_id, answer)
                assert await on_a.ids(1) == ["1-1"]
                a.hand_over(game.game_id, answer)  # a replayed answer: dropped as a duplicate

                async with b.watch(game.game_id) as watch_b:
                    assert await members(redis, game.game_id) == {a.listener_id, b.listener_id}
                    on_b = Reader(watch_b.events())
                    # Routed by A with B listening: published for B; A takes the answer's and drops
                    # the pub/sub copy (or the other way round): each watcher sees it once.
                    answer = await game.move(a.listener_id)
                    a.hand_over(game.game_id, answer)
                    # Routed by B: A has it by pub/sub.
                    b.hand_over(game.game_id, await game.move(b.listener_id))
                    assert await on_a.ids(2) == ["2-1", "3-1"]
                    assert await on_a.nothing_within()
                    assert await on_b.ids(4) == ["0-1", "1-1", "2-1", "3-1"]  # history, then live
                    assert await on_b.nothing_within()
    finally:
        await store.layer.close()


async def test_an_action_whose_answer_was_lost_is_read_from_the_stream(redis: Redis, redis_url: str) -> None:
    store = GameStore(RedisLayer.around(redis), live_ttl_s=60, finished_ttl_s=60)
    game = Game(store)
    await game.create()
    try:
        async with hub_of(redis, redis_url) as a, a.watch(game.game_id) as watch:
            events = Reader(watch.events())
            assert await events.ids(1) == ["0-1"]
            await game.move(a.listener_id)  # committed, its answer never came back
            assert await events.nothing_within()
            a.resync(game.game_id)  # (Actions does this after a failure that may have committed)
            assert await events.ids(1) == ["1-1"]
    finally:
        await store.layer.close()


async def test_the_listener_leaves_the_set_after_its_last_watcher(
    redis: Redis, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub_module, "LINGER_S", 0.05)
    store = GameStore(RedisLayer.around(redis), live_ttl_s=60, finished_ttl_s=60)
    game = Game(store)
    await game.create()
    try:
        async with hub_of(redis, redis_url) as a:
            async with a.watch(game.game_id):
                assert await members(redis, game.game_id) == {a.listener_id}
                assert 0 < await redis.ttl(game_keys(game.game_id).listeners) <= 60  # the state's
            for _ in range(100):
                if not await members(redis, game.game_id):
                    break
                await asyncio.sleep(0.02)
            assert await members(redis, game.game_id) == set()
            async with a.watch(game.game_id):  # watched again: registered again
                assert await members(redis, game.game_id) == {a.listener_id}
            other = Game(store)
            await other.create()
            async with a.watch(other.game_id):
                pass
        # Closed: off every set it was in, lingering ones too.
        assert await members(redis, other.game_id) == set()
    finally:
        await store.layer.close()


@pytest.mark.skipif(
    on_cluster(),
    reason="kills the hub's one pub/sub connection by id on one server (a cluster's links: kit/redis/pubsub.py)",
)
async def test_after_a_reconnect_the_hub_registers_again_then_catches_up(redis: Redis, redis_url: str) -> None:
    store = GameStore(RedisLayer.around(redis), live_ttl_s=60, finished_ttl_s=60)
    game = Game(store)
    await game.create()
    try:
        async with hub_of(redis, redis_url) as a, hub_of(redis, redis_url) as b, a.watch(game.game_id) as watch:
            events = Reader(watch.events())
            assert await events.ids(1) == ["0-1"]
            # The set is lost (a failover that dropped the write) and the connection breaks.
            await redis.delete(game_keys(game.game_id).listeners)
            assert a.client_id is not None
            await redis.execute_command("CLIENT", "KILL", "ID", a.client_id)
            await game.move(b.listener_id)  # routed by another gateway, published to nobody
            for _ in range(200):
                if await members(redis, game.game_id) == {a.listener_id}:
                    break
                await asyncio.sleep(0.02)
            assert await members(redis, game.game_id) == {a.listener_id}
            assert await events.ids(1) == ["1-1"]  # read from the stream once registered
            await game.move(b.listener_id)  # and published again
            assert await events.ids(1) == ["2-1"]
    finally:
        await store.layer.close()


async def test_actions_hand_their_answers_over_and_resync_when_an_answer_is_lost(
    seats: Seating, clients: list[Client], gw_system: GatewaySystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through Actions and a real rules service: the move's events reach the hub's watcher from its
    answer (nothing is published: this hub is the game's only listener); a move committed whose
    answer is lost (UNAVAILABLE after the commit) is read from the stream; a refusal that commits
    nothing re-reads nothing."""
    a, b, _ = clients
    pubsub = PubSub(gw_system.redis_url)
    hub = EventHub(pubsub, seats.reads)
    hub.start()
    actions = Actions(
        seats.directory, seats.router, seats.directory.clocks, Records(seats.directory.layer, seats.reads), hub
    )
    resyncs: list[str] = []
    real_resync = hub.resync
    monkeypatch.setattr(hub, "resync", lambda game_id: (resyncs.append(game_id), real_resync(game_id)))
    try:
        game_id = await seats.start([a.player, b.player])
        meta = await seats.directory.meta(game_id)
        async with hub.watch(game_id) as watch:
            events = Reader(watch.events())
            assert await events.ids(1) == ["0-1"]
            await actions.apply(meta, 0, expected_version=0, request_id="s0-a", move=c4_move(3))
            assert await events.ids(1) == ["1-1"]
            assert resyncs == []

            real_apply = seats.router.apply

            async def answer_lost(
                game: str, request: rules_pb2.ApplyMoveRequest, timeout_s: float | None = None
            ) -> None:
                await real_apply(game, request, timeout_s=timeout_s)
                raise Refused(grpc.StatusCode.UNAVAILABLE, "RULES_UNAVAILABLE", "the rules service went away")

            monkeypatch.setattr(seats.router, "apply", answer_lost)
            with pytest.raises(Refused):
                await actions.apply(meta, 1, expected_version=1, request_id="s1-b", move=c4_move(4))
            assert await events.ids(1) == ["2-1"]  # from the stream
            assert resyncs == [game_id]
            monkeypatch.setattr(seats.router, "apply", real_apply)

            with pytest.raises(Refused) as refused:  # an old version: ABORTED, nothing committed
                await actions.apply(meta, 0, expected_version=0, request_id="s0-c", move=c4_move(5))
            assert refused.value.code == grpc.StatusCode.ABORTED
            assert resyncs == [game_id]
            assert await events.nothing_within()
        assert await members(seats.redis, game_id) == {hub.listener_id}  # (lingering)
        # TAFEL_PUBLISH_ALL_EVENTS=1: routed without the listener id, so every action is published.
        everything = Actions(
            seats.directory, seats.router, seats.directory.clocks, actions.records, hub, publish_all=True
        )
        assert (everything.listener_id, actions.listener_id) == ("", hub.listener_id)
    finally:
        await hub.close()
        await pubsub.close()
