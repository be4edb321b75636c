"""Matchmaking's values: what a bucket is, and what the queue's scripts answer."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from functools import cached_property

from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2


@dataclass(frozen=True)
class BucketSpec:
    """What every ticket of a bucket agrees on. `options` must be canonical (defaults filled)."""

    game: str
    options: games_pb2.GameOptions
    per_move_ms: int
    min_seats: int
    max_seats: int

    # Cached: asked several times a search (a sha1 over the serialized options each time).
    @cached_property
    def options_bytes(self) -> bytes:
        return self.options.SerializeToString(deterministic=True)

    @cached_property
    def bucket_id(self) -> str:
        digest = hashlib.sha1(
            b"\0".join(
                (
                    self.game.encode(),
                    self.options_bytes,
                    str(self.per_move_ms).encode(),
                    str(self.min_seats).encode(),
                    str(self.max_seats).encode(),
                )
            )
        )
        return digest.hexdigest()[:20]


@dataclass(frozen=True)
class FormedMatch:
    game_id: str
    tickets: tuple[str, ...]  # in seat order
    players: tuple[play_pb2.Player, ...]  # in seat order


@dataclass(frozen=True)
class TicketStatus:
    """A ticket as a renewal saw it: queued, paired (game id, seat, started) or gone."""

    kind: str  # "queued" | "matched" | "gone"; "failed" / "unavailable": this process cannot follow it
    game_id: str = ""
    seat: int = 0
    started: bool = False
    refused: bool = False  # the rules service refused to create the game (it never will)


@dataclass(frozen=True)
class Taken:
    """What queueing a search did: queued `ticket_id` (a new ticket, or with `resumed` the one an
    earlier send of the same search queued), or not (`ticket_id` is the player's other ticket);
    `matches`: what pairing the bucket in the same call formed (a new ticket only)."""

    ticket_id: str
    queued: bool
    resumed: bool
    enqueued_ms: int
    matches: tuple[FormedMatch, ...] = ()


@dataclass(frozen=True)
class MatchDetails:
    game_id: str
    tickets: tuple[str, ...]
    players: tuple[play_pb2.Player, ...]
    started: bool


@dataclass
class Leaving:
    """How a search's stream may end: set `withdraw` before cancelling it when the player asked
    to stop (StopFinding). Without it a correspondence search outlives its stream (parked: see
    Matchmaker.find); a real-time search leaves the queue either way."""

    withdraw: bool = False


def new_ticket_id() -> str:
    return secrets.token_urlsafe(12)  # 16 characters of [A-Za-z0-9_-]
