"""A game's positions rebuilt from its recorded actions (RecordedAction, the action list the store
keeps in the event stream): what a take-back goes back to.

Pure rules make a replay exact: new_game with the game's options, seats and seed, then every
recorded action in commit order (the order the stream holds them in, which is the order they were
judged in, commuting placements included) through the same rules calls the service made. A
take-back in the history goes back to the position kept for its version, so the replay follows a
game through any number of take-backs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tafel.games.v1 import games_pb2
from tafel_rules.game import ABORTED, DRAW_AGREED, IllegalMove, Rules

from services.host.codec import GameEnvelope, MalformedMessage


class ReplayFailed(Exception):
    """The recorded actions do not rebuild the game (a gap in the versions, an action its rules
    refuse, a take-back to a version never reached)."""


def positions(
    rules: Rules[Any, Any, Any, Any, Any],
    envelope: GameEnvelope[Any, Any, Any, Any, Any],
    initial: Any,
    actions: Sequence[games_pb2.RecordedAction],
    *,
    upto: int | None = None,
) -> list[Any]:
    """The game's state at every version from 0 (`initial`) to the last action's, or to `upto`
    (the actions after it are not read). Raises ReplayFailed."""
    states = [initial]
    state = initial
    for action in actions:
        version = len(states)
        if upto is not None and version > upto:
            break
        if action.version != version:
            raise ReplayFailed(f"the recorded action of version {action.version} follows version {version - 1}")
        seat = action.seat
        kind = action.WhichOneof("action")
        try:
            if kind == "move":
                state, _ = rules.apply_move(state, seat, envelope.move_from_union(action.move))
            elif kind == "resigned":
                state, _ = rules.resign(state, seat)
            elif kind == "timed_out":
                state, _ = rules.timeout(state, seat)
            elif kind == "draw_agreed":
                state = rules.end(state, DRAW_AGREED)
            elif kind == "aborted":
                state = rules.end(state, ABORTED)
            elif kind == "taken_back_to":
                if action.taken_back_to >= version:
                    raise ReplayFailed(f"version {version} takes back to {action.taken_back_to}, not reached yet")
                state = states[action.taken_back_to]
            else:
                raise ReplayFailed(f"the recorded action of version {version} is of no kind this replay knows")
        except (IllegalMove, MalformedMessage) as refused:
            raise ReplayFailed(f"the recorded action of version {version} is refused: {refused}") from None
        states.append(state)
    return states
