"""Ratings and tournaments as one part of a gateway process (gateway/server.py builds it).

It hooks both into the game-end path (Records.hooks), offers RatingService and TournamentService,
and runs their sweepers. Its own settings, read once from the environment:

- ``TAFEL_TOURNAMENT_SWEEP_S`` (5): how often running tournaments are checked and due ones started;
- ``TAFEL_RATING_SWEEP_S`` (30) and ``TAFEL_RATING_SWEEP_LAG_S`` (300): how often the ratings
  backstop reads recent records, and how far behind its cursor it looks again;
- ``TAFEL_RATING_APPLIED_TTL_S`` (90 days): how long a game's "rating applied" marker is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import grpc
from redis.asyncio import Redis
from tafel.play.v1 import tournaments_pb2, tournaments_pb2_grpc

from gateway.actions import Actions
from gateway.auth import Authenticator
from gateway.games import GameDirectory
from gateway.lobby import LobbySettings
from gateway.ratings.book import RatingBook, RatingSweeper
from gateway.ratings.service import RatingServicer
from gateway.records import Records
from gateway.rules_router import RulesRouter
from gateway.tournaments.feed import TournamentFeed
from gateway.tournaments.runner import TournamentRunner
from gateway.tournaments.service import TournamentServicer
from gateway.tournaments.store import TournamentStore
from kit.redis.client import redis_client
from kit.settings import Env


@dataclass(frozen=True)
class ExtrasSettings:
    tournament_sweep_s: float = 5.0
    rating_sweep_s: float = 30.0
    rating_sweep_lag_s: float = 300.0
    rating_applied_ttl_s: int = 90 * 86_400

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ExtrasSettings:
        env = Env(environ)
        return cls(
            tournament_sweep_s=env.number("TAFEL_TOURNAMENT_SWEEP_S", 5.0, 0.05, 3600.0),
            rating_sweep_s=env.number("TAFEL_RATING_SWEEP_S", 30.0, 0.05, 3600.0),
            rating_sweep_lag_s=env.number("TAFEL_RATING_SWEEP_LAG_S", 300.0, 1.0, 7 * 86_400.0),
            rating_applied_ttl_s=env.integer("TAFEL_RATING_APPLIED_TTL_S", 90 * 86_400, 3600, 10 * 365 * 86_400),
        )


def service_names() -> list[str]:
    services = tournaments_pb2.DESCRIPTOR.services_by_name
    return [str(services["RatingService"].full_name), str(services["TournamentService"].full_name)]


class RatingsAndTournaments:
    def __init__(
        self,
        *,
        redis: Redis,
        redis_url: str,
        auth: Authenticator,
        directory: GameDirectory,
        actions: Actions,
        records: Records,
        router: RulesRouter,
        lobby_settings: LobbySettings,
        settings: ExtrasSettings | None = None,
    ) -> None:
        self.settings = settings or ExtrasSettings.from_env()
        self.book = RatingBook(redis, applied_ttl_s=self.settings.rating_applied_ttl_s)
        self.rating_sweeper = RatingSweeper(
            self.book, interval_s=self.settings.rating_sweep_s, lag_s=self.settings.rating_sweep_lag_s
        )
        self.store = TournamentStore(redis)
        self.runner = TournamentRunner(
            redis, self.store, directory, actions, self.book, sweep_interval_s=self.settings.tournament_sweep_s
        )
        self.feed = TournamentFeed(redis, redis_client(redis_url, max_connections=2))
        self.ratings_servicer = RatingServicer(auth, self.book)
        self.tournaments_servicer = TournamentServicer(auth, self.store, self.runner, self.feed, router, lobby_settings)
        # The game-end path: ratings first (awaited), then the tournament (in the background).
        records.hooks.append(self.book.on_record)
        records.hooks.append(self.runner.on_record)
        self.service_names = service_names()

    def register(self, server: grpc.aio.Server) -> None:
        tournaments_pb2_grpc.add_RatingServiceServicer_to_server(self.ratings_servicer, server)
        tournaments_pb2_grpc.add_TournamentServiceServicer_to_server(self.tournaments_servicer, server)

    def start(self) -> None:
        self.rating_sweeper.start()
        self.runner.start()
        self.feed.start()

    async def stop(self) -> None:
        await self.runner.stop()
        await self.rating_sweeper.stop()
        await self.feed.close()
