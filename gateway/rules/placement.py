"""Which replica a game's actions go to: rendezvous hashing over a game type's current replicas,
so that a game stays on one replica (its decoded-state cache) while the set holds still."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol, TypeVar

_MASK = (1 << 64) - 1


def _mix(value: int) -> int:
    """splitmix64's finaliser: spreads close inputs over all 64 bits."""
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK
    return value ^ (value >> 31)


def key_of(text: str) -> int:
    # Not hash(): every gateway process must put a game on the same replica.
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


class Seeded(Protocol):
    seed: int


_R = TypeVar("_R", bound=Seeded)


def rendezvous(game_id: str, replicas: Sequence[_R]) -> list[_R]:
    """The replicas in the order a game tries them: highest score of (game, replica) first.

    Rendezvous hashing: adding a replica moves only the games it now wins (about 1/N of them) and
    removing one moves only its own games, each to its own next choice, so the other replicas'
    cached states stay hot through a scale-up or a pod's restart."""
    key = key_of(game_id)
    return sorted(replicas, key=lambda replica: _mix(key ^ replica.seed), reverse=True)
