"""The platform's one id check: game, tournament, request and other ids a caller sends.

1-64 characters of ``A-Z a-z 0-9 _ -``: safe inside Redis keys and hash tags, in URLs and in logs,
and short enough that a caller cannot make keys grow without bound. Both tiers check with it.
"""

from __future__ import annotations

import re

from kit.errors import invalid

ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


# A Redis stream id is two unsigned 64-bit numbers; a larger one is an error reply from Redis, so
# it is refused here, as the caller's mistake, before it reaches the store.
STREAM_ID_PART_MAX = 2**64 - 1
STREAM_ID_PATTERN = re.compile(r"^[0-9]{1,20}-[0-9]{1,20}$")


def stream_id(value: str) -> tuple[int, int] | None:
    """`value` as a stream id `<ms>-<seq>` (both 0..2^64-1), or None when it is not one."""
    if not STREAM_ID_PATTERN.match(value):
        return None
    ms, _, seq = value.partition("-")
    parts = int(ms), int(seq)
    return parts if max(parts) <= STREAM_ID_PART_MAX else None


def is_last_stream_id(parts: tuple[int, int]) -> bool:
    """The greatest id there is: nothing can come after it (Redis refuses a range that starts past it)."""
    return parts == (STREAM_ID_PART_MAX, STREAM_ID_PART_MAX)


def check_id(kind: str, value: str, *, required: bool = True) -> None:
    """INVALID_ARGUMENT (reason ``BAD_<KIND>``, field `kind`) unless `value` is a valid id; an
    empty value passes when not `required`."""
    if not value and not required:
        return
    if not ID_PATTERN.match(value):
        raise invalid(f"BAD_{kind.upper()}", f"{kind} must be 1-64 characters of A-Z a-z 0-9 _ -", field=kind)
