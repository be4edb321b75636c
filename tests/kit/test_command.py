"""RESP packing (kit/redis/pipe.py command()): hiredis's C packer is used where it makes the same
bytes as the Python encoder it replaced, for any str, bytes, int and float; what it refuses keeps
the Python path's bytes."""

from __future__ import annotations

import enum
import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kit.redis.pipe import _command, command

_parts = st.one_of(
    st.text(),  # any code point, non-ASCII included
    st.binary(),
    st.integers(),  # negative and far past 64 bits
    st.floats(allow_nan=True, allow_infinity=True),  # 0.1, 1e20, -0.0, inf, subnormals
)


@given(st.lists(_parts, max_size=30).map(tuple))
def test_the_packed_bytes_are_the_python_encoders(parts: tuple[Any, ...]) -> None:
    assert command(*parts) == _command(parts)  # hiredis where it packs, else the Python encoder


def test_the_values_a_commit_sends() -> None:
    parts = ("EVALSHA", "ab" * 20, 3, "{g}:s", "é", b"\x00\xff", -5, 2**70, 0.1, 1e20, math.inf, 1.5e-7, "")
    assert command(*parts) == _command(parts)
    assert command("SET", b"k", 5) == b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n5\r\n"
    assert command() == b"*0\r\n"


class _Seat(enum.IntEnum):
    SECOND = 1


class _Odd(int):
    def __str__(self) -> str:
        return "odd"


def test_what_hiredis_refuses_keeps_its_python_bytes() -> None:
    # hiredis raises TypeError for bool and int subclasses: these go through the Python path.
    assert command("SET", "k", True) == b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\nTrue\r\n"
    assert command(_Seat.SECOND) == b"*1\r\n$1\r\n1\r\n"
    assert command(_Odd(3)) == b"*1\r\n$3\r\nodd\r\n"
