"""RatingService: leaderboards, a player's ratings, solo personal bests (of the games that keep them).

Reads need no sign-in; a signed-in caller also gets their own entry (`me`). GetRatings without a
player id needs the caller's token.
"""

from __future__ import annotations

import logging
from typing import Any

import grpc
from tafel.play.v1 import play_pb2, tournaments_pb2, tournaments_pb2_grpc

from gateway.auth import Authenticator, Identity
from gateway.ratings.bests import Best
from gateway.ratings.book import Entry, RatingBook
from gateway.ratings.stored import Stored
from kit.errors import refusing
from kit.ids import check_id

log = logging.getLogger("tafel.gateway.ratings")
UNAVAILABLE = "ratings are unavailable; retry"


def optional_identity(auth: Authenticator, context: grpc.aio.ServicerContext[Any, Any]) -> Identity | None:
    """The caller when the call carries a token (a bad token is still refused)."""
    metadata = context.invocation_metadata() or ()
    if not any(k == "authorization" for k, _ in metadata):
        return None
    return auth.identity(metadata)


def rating_message(pool: str, stored: Stored, rank: int, provisional_rd: float) -> tournaments_pb2.Rating:
    message = tournaments_pb2.Rating(
        leaderboard=pool,
        rating=stored.rating.rating,
        deviation=stored.rating.rd,
        volatility=stored.rating.volatility,
        provisional=stored.rating.provisional(provisional_rd),
        games=stored.games,
        rank=rank,
    )
    if stored.last_ms:
        message.last_played.FromMilliseconds(stored.last_ms)
    return message


def best_message(best: Best) -> tournaments_pb2.PersonalBest:
    message = tournaments_pb2.PersonalBest(
        rank=best.rank,
        player=play_pb2.Player(player_id=best.player_id, username=best.username),
        sheet=best.sheet,
        score=best.score,
        game_id=best.game_id,
    )
    message.achieved_at.FromMilliseconds(best.achieved_ms)
    return message


class RatingServicer(tournaments_pb2_grpc.RatingServiceServicer):
    def __init__(self, auth: Authenticator, book: RatingBook) -> None:
        self.auth = auth
        self.book = book

    def _entry(self, pool: str, entry: Entry, established_only: bool) -> tournaments_pb2.LeaderboardEntry:
        provisional = entry.stored.rating.provisional(self.book.provisional_rd)
        rank = entry.rank if (established_only or not provisional) else 0
        return tournaments_pb2.LeaderboardEntry(
            rank=entry.rank,
            player=play_pb2.Player(player_id=entry.player_id, username=entry.username),
            rating=rating_message(pool, entry.stored, rank, self.book.provisional_rd),
        )

    @refusing(UNAVAILABLE)
    async def ListLeaderboards(
        self, request: tournaments_pb2.ListLeaderboardsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.ListLeaderboardsResponse:
        return tournaments_pb2.ListLeaderboardsResponse(
            leaderboards=[
                tournaments_pb2.Leaderboard(
                    leaderboard=pool.name,
                    game=pool.game,
                    title=pool.title,
                    min_seats=pool.min_seats,
                    max_seats=pool.max_seats,
                )
                for pool in await self.book.pools.listed()
            ]
        )

    @refusing(UNAVAILABLE)
    async def GetLeaderboard(
        self, request: tournaments_pb2.GetLeaderboardRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.GetLeaderboardResponse:
        identity = optional_identity(self.auth, context)
        entries, token, mine, total = await self.book.leaderboard(
            request.leaderboard,
            include_provisional=request.include_provisional,
            page_size=request.page_size,
            page_token=request.page_token,
            me=identity.player_id if identity else "",
        )
        established = not request.include_provisional
        response = tournaments_pb2.GetLeaderboardResponse(
            entries=[self._entry(request.leaderboard, e, established) for e in entries],
            next_page_token=token,
            total=total,
        )
        if mine is not None:
            response.me.CopyFrom(self._entry(request.leaderboard, mine, established))
        return response

    @refusing(UNAVAILABLE)
    async def GetRatings(
        self, request: tournaments_pb2.GetRatingsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.GetRatingsResponse:
        player_id = request.player_id
        if player_id:
            check_id("player_id", player_id)
        else:
            player_id = self.auth.identity(context.invocation_metadata()).player_id
        ratings = await self.book.ratings_of(player_id)
        bests = await self.book.bests_of(player_id)
        return tournaments_pb2.GetRatingsResponse(
            ratings=[rating_message(pool, s, rank, self.book.provisional_rd) for pool, s, rank in ratings],
            personal_bests=[best_message(b) for b in bests],
        )

    @refusing(UNAVAILABLE)
    async def GetPersonalBests(
        self, request: tournaments_pb2.GetPersonalBestsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tournaments_pb2.GetPersonalBestsResponse:
        identity = optional_identity(self.auth, context)
        bests, token, mine, total = await self.book.personal_bests(
            request.sheet,
            page_size=request.page_size,
            page_token=request.page_token,
            me=identity.player_id if identity else "",
        )
        response = tournaments_pb2.GetPersonalBestsResponse(
            personal_bests=[best_message(b) for b in bests], next_page_token=token, total=total
        )
        if mine is not None:
            response.me.CopyFrom(best_message(mine))
        return response
