"""The dice: a splitmix64 generator whose whole state is one 64-bit integer kept in the game state.

Same seed, same rolls, on every machine and Python version (no `random` module state involved).
"""

from __future__ import annotations

from tafel_rules.coloursquare.model import Roll

MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def seed_state(seed: int) -> int:
    """The generator state for a table seed (any integer, reduced to 64 bits)."""
    return seed & MASK64


def next64(state: int) -> tuple[int, int]:
    """One splitmix64 step: (new state, 64-bit output)."""
    state = (state + _GOLDEN) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def roll_die(state: int) -> tuple[int, int]:
    """(new state, a value 1..6), unbiased by rejection (the rejected range is ~1e-19 of outputs)."""
    limit = (1 << 64) - (1 << 64) % 6
    while True:
        state, value = next64(state)
        if value < limit:
            return state, value % 6 + 1


def roll_five(state: int) -> tuple[int, Roll]:
    """(new state, R Y G B W)."""
    state, r = roll_die(state)
    state, y = roll_die(state)
    state, g = roll_die(state)
    state, b = roll_die(state)
    state, w = roll_die(state)
    return state, (r, y, g, b, w)
