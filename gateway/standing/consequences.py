"""What a suspension or ban does beyond refusing the account's calls (the guard does that on every
gateway): its live games end as a loss by forfeit and it leaves every tournament it is in (withdrawn
from running ones, its remaining games forfeited the way the format says). Run by the moderator's
call, after the sanction is stored; every step is idempotent, so running it again finishes what a
gateway that died half-way left (and a game it did not reach ends by its clock: the account cannot
move any more)."""

from __future__ import annotations

import logging
from typing import Any

from tafel.play.v1 import play_pb2

from gateway.actions import Actions
from gateway.tournaments.runner import TournamentRunner
from kit.errors import Refused
from kit.redis.keys import player_games_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import text

log = logging.getLogger("tafel.gateway.standing")


class Consequences:
    def __init__(self, redis: RedisLayer, actions: Actions, tournaments: TournamentRunner) -> None:
        self.redis = redis
        self.actions = actions
        self.tournaments = tournaments

    async def live_games(self, player_id: str) -> list[str]:
        raw: Any = await self.redis.call("ZRANGE", player_games_key(player_id, "live"), 0, -1)
        return [text(game_id) for game_id in raw]

    async def remove_from_play(self, player: play_pb2.Player, request_prefix: str) -> tuple[int, int]:
        """Forfeit the player's live games and take them out of tournaments: (games, tournaments)."""
        games = await self.live_games(player.player_id)
        for game_id in games:
            await self.actions.forfeit(game_id, player.player_id, request_prefix)
        left = 0
        for tid in await self.tournaments.tournaments_of(player.player_id):
            try:
                await self.tournaments.leave(tid, player)
                left += 1
            except Refused as refused:  # it ended meanwhile: nothing to leave
                log.info("leaving a tournament refused", extra={"tournament": tid, "reason": refused.reason})
        return len(games), left
