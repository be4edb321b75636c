"""GetReplayViews: every position of a game as a spectator sees it, for replays.

The game is rebuilt from its recorded actions with its own rules (services/host/replay.py, the
replay a take-back uses), so a client draws each step of a replay with the code that draws a live
board instead of re-deriving boards from events; dice games replay exactly because the store keeps
the seed the game was made with. The rebuilt game must arrive at the stored state, or nothing is
answered: views of positions that never were would be worse than none.
"""

from __future__ import annotations

import logging
from typing import Any

import grpc
from redis.exceptions import RedisError
from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2
from tafel_rules.game import InvalidOptions, Rules

from kit.errors import Refused, as_refused
from kit.ids import check_id
from services.host.codec import GameCodec, GameEnvelope, MalformedMessage
from services.host.replay import ReplayFailed, positions
from services.host.store import GameStore, Missing, Replayed

log = logging.getLogger(__name__)


class ReplayViews:
    """The GetReplayViews work of one game type's rules service (the servicer's RPC calls it)."""

    def __init__(
        self, rules: Rules[Any, Any, Any, Any, Any], codec: GameCodec[Any, Any, Any, Any, Any], store: GameStore
    ) -> None:
        self.rules = rules
        self.codec = codec
        self.envelope = GameEnvelope(codec)
        self.store = store

    async def views(self, request: rules_pb2.GetReplayViewsRequest) -> rules_pb2.GetReplayViewsResponse:
        """Refused: BAD_ID, GAME_NOT_FOUND, REPLAY_UNAVAILABLE, STORE_UNAVAILABLE."""
        check_id("game_id", request.game_id)
        try:
            loaded = await self.store.load(request.game_id)
            if isinstance(loaded, Missing | Replayed) or loaded.game != self.rules.name:
                raise Refused(grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND", f"there is no game {request.game_id}")
            seed, rows = await self.store.history(request.game_id)
        except RedisError as error:
            raise as_refused(error, "game storage is unavailable; retry") from None
        try:
            state = self.codec.state_from_bytes(loaded.state)
            options = self.envelope.options_from_union(
                games_pb2.GameOptions.FromString(loaded.options), self.rules.default_options()
            )
            initial = self.rules.new_game(options, loaded.seats, seed)
            actions = [games_pb2.RecordedAction.FromString(row) for row in rows]
            states = positions(self.rules, self.envelope, initial, actions, upto=loaded.version)
        except (ReplayFailed, MalformedMessage, InvalidOptions) as failed:
            log.warning("replay views failed", extra={"game_id": request.game_id, "error": str(failed)})
            states = []
        if len(states) != loaded.version + 1 or states[-1] != state:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                "REPLAY_UNAVAILABLE",
                f"the record of game {request.game_id} does not rebuild its positions",
            )
        return rules_pb2.GetReplayViewsResponse(
            views=[self.envelope.view_to_union(self.rules.view(s, None)) for s in states]
        )
