"""Live game events: the process's pub/sub (kit/redis/pubsub.py) feeds every local watcher.

A game's channel (kit.redis.keys.game_keys(id).channel) carries one ``tafel.games.v1.GameEventBatch``
per applied action. The hub subscribes a channel when its first local watcher arrives and
unsubscribes a little after the last one leaves; each message is parsed once and handed to every
watcher of that game. A watcher starts only once Redis has confirmed the channel (watcher.py says
why that leaves no gap). When the pub/sub connection breaks and comes back, the channel's
re-confirmation tells every watcher of the game to re-read the stream after its last id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import grpc
from tafel.games.v1 import games_pb2

from gateway.watch.event_ids import check_event_id
from gateway.watch.watcher import END, RESYNC, LiveBatch, Watch
from kit import timesource
from kit.errors import Refused
from kit.redis.game_reads import GameReads
from kit.redis.keys import game_keys
from kit.redis.pubsub import PubSub, Subscription

log = logging.getLogger("tafel.gateway.watch")
LINGER_S = 2.0
SUBSCRIBE_TIMEOUT_S = 5.0


class _Game:
    """A watched game: its local watchers and its channel's subscription."""

    __slots__ = ("game_id", "linger", "subscription", "watchers")

    def __init__(self, game_id: str, pubsub: PubSub) -> None:
        self.game_id = game_id
        self.watchers: set[Watch] = set()
        self.linger: asyncio.TimerHandle | None = None
        self.subscription: Subscription = pubsub.subscribe(
            game_keys(game_id).channel, self.on_message, on_live=self.on_live
        )

    def on_message(self, channel: bytes, data: bytes) -> None:
        if not self.watchers:
            return
        try:
            batch = games_pb2.GameEventBatch.FromString(data)
        except Exception:
            log.warning("undecodable event batch", extra={"channel": channel.decode(errors="replace")})
            return
        live = LiveBatch(batch, timesource.now_s())
        for watch in self.watchers:
            watch.push(live)

    def on_live(self, again: bool) -> None:
        if again:  # re-confirmed after a reconnect: what was published meanwhile is in the stream
            for watch in self.watchers:
                watch.push(RESYNC)


class EventHub:
    """The fan-out of live game events to this process's watchers."""

    def __init__(self, pubsub: PubSub, reads: GameReads) -> None:
        self.pubsub = pubsub
        self.reads = reads  # the stream reads a watcher catches up with
        self._games: dict[str, _Game] = {}
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
            except TimeoutError:
                raise Refused(
                    grpc.StatusCode.UNAVAILABLE, "EVENTS_UNAVAILABLE", "live events are unavailable; retry"
                ) from None
            yield watch
        finally:
            self._release(game, watch)

    def _acquire(self, game_id: str, watch: Watch) -> _Game:
        game = self._games.get(game_id)
        if game is None:
            game = self._games[game_id] = _Game(game_id, self.pubsub)
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
