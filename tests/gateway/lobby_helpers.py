"""Helpers for the matchmaking and rooms tests: a recording game starter, players, specs."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2

from gateway.games import Followup
from gateway.matchmaking.matchmaker import Matchmaker
from gateway.matchmaking.model import BucketSpec
from gateway.settings import MatchmakingSettings
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub


@dataclass
class StartCall:
    game: str
    options: games_pb2.GameOptions
    players: tuple[play_pb2.Player, ...]
    per_move_s: float
    rated: bool
    origin: str
    game_id: str | None


@dataclass
class RecordingStarter:
    """Stands in for GameDirectory: records every start; idempotent per game id like the real one."""

    calls: list[StartCall] = field(default_factory=list)
    games: dict[str, StartCall] = field(default_factory=dict)
    fail_times: int = 0
    delay_s: float = 0.0

    async def start_game(
        self,
        *,
        game: str,
        options: games_pb2.GameOptions,
        players: Sequence[play_pb2.Player],
        per_move_s: float,
        rated: bool,
        origin: str,
        game_id: str | None = None,
        followed_by: Followup | None = None,  # left undone: the caller runs it itself
    ) -> str:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        call = StartCall(game, options, tuple(players), per_move_s, rated, origin, game_id)
        self.calls.append(call)
        if self.fail_times > 0:
            self.fail_times -= 1
            raise ConnectionError("rules service down")
        gid = game_id or f"g-{uuid.uuid4().hex[:12]}"
        prior = self.games.get(gid)
        if prior is not None:
            assert [p.player_id for p in prior.players] == [p.player_id for p in players]
        else:
            self.games[gid] = call
        return gid


@dataclass
class FixedRatings:
    ratings: dict[str, float] = field(default_factory=dict)

    async def rating(self, player_id: str, game: str) -> float:
        return self.ratings.get(player_id, 1500.0)


def player(name: str | None = None, *, guest: bool = False) -> play_pb2.Player:
    name = name or f"p{uuid.uuid4().hex[:8]}"
    return play_pb2.Player(player_id=f"id-{name}", username=name, guest=guest)


def connect4_options(rows: int = 6, columns: int = 7) -> games_pb2.GameOptions:
    return games_pb2.GameOptions(connect4=connect4_pb2.Options(rows=rows, columns=columns))


def spec(min_seats: int = 2, max_seats: int = 2, *, game: str = "connect4", per_move_ms: int = 60_000) -> BucketSpec:
    """A bucket of its own (random per-move time), so tests never share a queue."""
    unique = per_move_ms + (uuid.uuid4().int % 1_000_000)
    return BucketSpec(
        game=game,
        options=connect4_options(),
        per_move_ms=unique,
        min_seats=min_seats,
        max_seats=max_seats,
    )


FAST = MatchmakingSettings(
    base_window=100,
    widen_per_s=10.0,
    max_window=1000,
    lease_s=5.0,
    ticket_ttl_s=60.0,
    tick_s=0.05,
    update_s=0.2,
    fill_wait_s=15.0,
    start_grace_s=1.0,
    result_ttl_s=60.0,
)


@asynccontextmanager
async def process_redis(redis_url: str) -> AsyncIterator[tuple[RedisLayer, PubSub]]:
    """What one gateway process has: its Redis layer and its one pub/sub connection."""
    layer = RedisLayer.connect(redis_url, max_connections=16)
    pubsub = PubSub(redis_url)
    try:
        yield layer, pubsub
    finally:
        await pubsub.close()
        await layer.close()


@asynccontextmanager
async def gateway_side(
    redis_url: str, starter: RecordingStarter, settings: MatchmakingSettings = FAST
) -> AsyncIterator[Matchmaker]:
    async with process_redis(redis_url) as (layer, pubsub):
        matchmaker = Matchmaker(layer, pubsub, starter, FixedRatings(), settings)
        await matchmaker.listen()
        try:
            yield matchmaker
        finally:
            await matchmaker.close()


async def run_to_match(
    matchmaker: Matchmaker, bucket: BucketSpec, who: play_pb2.Player
) -> tuple[list[play_pb2.MatchQueued], play_pb2.MatchFound]:
    queued: list[play_pb2.MatchQueued] = []
    found: list[play_pb2.MatchFound] = []
    async for message in matchmaker.find(bucket, who):
        if message.HasField("queued"):
            assert not found
            queued.append(message.queued)
        else:
            found.append(message.matched)
    assert len(found) == 1
    return queued, found[0]
