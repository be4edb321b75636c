"""What matchmaking (and rooms) call on the rest of the gateway."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2

if TYPE_CHECKING:
    from gateway.games import Followup


class GameStarter(Protocol):
    """The part of gateway.games.GameDirectory that matchmaking and rooms use."""

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
        followed_by: Followup | None = None,
    ) -> str: ...


class RatingSource(Protocol):
    async def rating(self, player_id: str, game: str) -> float: ...
