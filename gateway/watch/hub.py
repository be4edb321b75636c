"""Live game events: the answers of this gateway's own actions and the process's pub/sub
(kit/redis/pubsub.py) feed every local watcher.

A game's channel (kit.redis.keys.game_keys(id).channel) carries one ``tafel.games.v1.GameEventBatch``
per applied action. The hub subscribes a channel when its first local watcher arrives and
unsubscribes a little after the last one leaves; each message is parsed once and handed to every
watcher of that game. With the subscription the hub registers its listener id in the game's
listeners set (lua/watch/listen), and it routes its own actions with that id (Actions): the rules
commit then publishes such an action only when another gateway listens too, and the hub hands the
action's events over from the answer (`hand_over`): one pub/sub message, its parse and a PUBLISH
fewer a move when both players' watchers are here (issue 19, eleventh pass). Event ids make the two
sources safe to mix: a duplicate is dropped, a gap is read from the stream. An action whose outcome
is unknown (the answer never came) tells the game's watchers to re-read the stream (`resync`).

A watcher starts only once Redis has confirmed the channel and holds the registration (watcher.py
says why that leaves no gap: an action committed before either is in the stream it reads). When
the pub/sub connection breaks and comes back, the hub registers again (a failover may have lost
the set) and then tells every watcher of the game to re-read the stream after its last id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from redis.exceptions import RedisError
from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2

from gateway.watch.event_ids import check_event_id
from gateway.watch.watcher import END, RESYNC, LiveBatch, Watch
from kit.errors import Refused
from kit.redis.game_reads import GameReads
from kit.redis.keys import game_keys
from kit.redis.pubsub import PubSub, Subscription
from kit.redis.scripts import script

log = logging.getLogger("tafel.gateway.watch")
LINGER_S = 2.0
SUBSCRIBE_TIMEOUT_S = 5.0
# A game's listeners set expires with its state; this TTL only covers a state without one yet.
LISTENER_TTL_S = 7 * 24 * 3600


class _Game:
    """A watched game: its local watchers, its channel's subscription and its registration."""

    __slots__ = ("game_id", "linger", "listen", "registration", "subscription", "watchers")

    def __init__(self, game_id: str, pubsub: PubSub, listen: Callable[[str], asyncio.Task[Any]]) -> None:
        self.game_id = game_id
        self.watchers: set[Watch] = set()
        self.linger: asyncio.TimerHandle | None = None
        self.listen = listen
        # The listeners-set write, done or in flight: started with the subscription, in parallel.
        self.registration: asyncio.Task[Any] = listen(game_id)
        self.subscription: Subscription = pubsub.subscribe(
            game_keys(game_id).channel, self.on_message, on_live=self.on_live
        )

    def registered(self) -> asyncio.Task[Any]:
        """The registration to wait for: started again when the last one failed."""
        task = self.registration
        if task.done() and (task.cancelled() or task.exception() is not None):
            task = self.registration = self.listen(self.game_id)
        return task

    def on_message(self, channel: bytes, data: bytes) -> None:
        if not self.watchers:
            return
        try:
            batch = games_pb2.GameEventBatch.FromString(data)
        except Exception:
            log.warning("undecodable event batch", extra={"channel": channel.decode(errors="replace")})
            return
        live = LiveBatch(batch, time.time())
        for watch in self.watchers:
            watch.push(live)

    def on_live(self, again: bool) -> None:
        if again:  # re-confirmed after a reconnect: what was published meanwhile is in the stream
            # Registered again first (a failover may have lost the set), then caught up, so that
            # nothing another gateway commits in between is neither published nor read.
            self.registration = self.listen(self.game_id)
            self.registration.add_done_callback(self._resync)

    def _resync(self, _: object = None) -> None:
        for watch in self.watchers:
            watch.push(RESYNC)


class EventHub:
    """The fan-out of live game events to this process's watchers."""

    def __init__(self, pubsub: PubSub, reads: GameReads) -> None:
        self.pubsub = pubsub
        self.reads = reads  # the stream reads a watcher catches up with
        self.layer = reads.layer  # (its one write: the listeners set)
        # This process's member of the listeners sets, and the id its actions are routed with.
        self.listener_id = uuid.uuid4().hex
        self._games: dict[str, _Game] = {}
        self._background: set[asyncio.Task[Any]] = set()  # the registrations' removals in flight
        self._closed = False

    @property
    def watchers(self) -> int:
        return sum(len(game.watchers) for game in self._games.values())

    @property
    def channels(self) -> int:
        return len(self._games)

    @property
    def client_id(self) -> int | None:
        """The pub/sub connection's Redis client id."""
        return self.pubsub.client_id

    def start(self) -> None:
        self.pubsub.start()

    async def close(self) -> None:
        """Stop: every watcher's stream ends (clients reconnect elsewhere with their last id)."""
        self._closed = True
        for game in self._games.values():
            if game.linger is not None:
                game.linger.cancel()
            game.subscription.cancel()
            for watch in game.watchers:
                watch.push(END)
        # Off the listeners sets (best effort: one left behind costs its game a publish a move).
        names = [game_keys(game_id).listeners for game_id in self._games]
        self._games.clear()
        with contextlib.suppress(RedisError, TimeoutError):
            async with asyncio.timeout(1.0):
                await asyncio.gather(*(self.layer.call("SREM", name, self.listener_id) for name in names))

    @contextlib.asynccontextmanager
    async def watch(self, game_id: str, after_event_id: str = "") -> AsyncIterator[Watch]:
        """Subscribe (confirmed by Redis) and yield a Watch; unsubscribe when done."""
        if self._closed:
            raise Refused(grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", "this gateway is stopping; reconnect")
        check_event_id(after_event_id)
        watch = Watch(self.reads, game_id, after_event_id)
        game = self._acquire(game_id, watch)
        try:
            try:
                await game.subscription.ready(SUBSCRIBE_TIMEOUT_S)  # (a game's second watcher finds it live)
                registration = game.registered()
                if not registration.done():
                    async with asyncio.timeout(SUBSCRIBE_TIMEOUT_S):
                        await asyncio.shield(registration)  # (shared: one watcher's cancel is not the others')
                registration.result()
            except (TimeoutError, RedisError):
                raise Refused(
                    grpc.StatusCode.UNAVAILABLE, "EVENTS_UNAVAILABLE", "live events are unavailable; retry"
                ) from None
            yield watch
        finally:
            self._release(game, watch)

    def hand_over(self, game_id: str, answer: rules_pb2.ApplyMoveResponse) -> None:
        """An action this gateway routed was committed: its events to the game's local watchers,
        as a pub/sub batch would bring them (a replayed answer's are dropped as duplicates)."""
        game = self._games.get(game_id)
        if game is None or not game.watchers or not answer.events:
            return
        live = LiveBatch(answer, time.time())
        for watch in game.watchers:
            watch.push(live)

    def resync(self, game_id: str) -> None:
        """An action this gateway routed may have been committed without its answer: the game's
        local watchers re-read the stream after their last id."""
        game = self._games.get(game_id)
        if game is not None:
            game._resync()

    def _listen(self, game_id: str) -> asyncio.Task[Any]:
        keys = game_keys(game_id)
        call = self.layer.run(script("watch/listen"), [keys.listeners, keys.state], [self.listener_id, LISTENER_TTL_S])
        return asyncio.get_running_loop().create_task(call)

    async def _unlisten(self, game_id: str) -> None:
        if game_id in self._games:
            return  # watched again meanwhile: still a listener
        try:
            await self.layer.call("SREM", game_keys(game_id).listeners, self.listener_id)
        except RedisError:  # left there, it costs a publish per move nobody reads, to the game's end
            log.info("listener not removed", extra={"game_id": game_id})
        game = self._games.get(game_id)
        if game is not None:
            # Watched again while the removal was on its way (it follows the new registration on
            # the same connection, so this is only in case): registered again, then caught up.
            game.on_live(True)

    def _acquire(self, game_id: str, watch: Watch) -> _Game:
        game = self._games.get(game_id)
        if game is None:
            game = self._games[game_id] = _Game(game_id, self.pubsub, self._listen)
        if game.linger is not None:
            game.linger.cancel()
            game.linger = None
        game.watchers.add(watch)
        return game

    def _release(self, game: _Game, watch: Watch) -> None:
        game.watchers.discard(watch)
        if not game.watchers and self._games.get(game.game_id) is game and game.linger is None and not self._closed:
            game.linger = asyncio.get_running_loop().call_later(LINGER_S, self._unsubscribe, game)

    def _unsubscribe(self, game: _Game) -> None:
        game.linger = None
        if game.watchers or self._games.get(game.game_id) is not game:
            return
        del self._games[game.game_id]
        game.subscription.cancel()
        # After any registration still in flight, on the same pipelined connection: in order.
        task = asyncio.get_running_loop().create_task(self._unlisten(game.game_id))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
