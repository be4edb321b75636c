"""The platform's one id check: game, tournament, request and other ids a caller sends.

1-64 characters of ``A-Z a-z 0-9 _ -``: safe inside Redis keys and hash tags, in URLs and in logs,
and short enough that a caller cannot make keys grow without bound. Both tiers check with it.
"""

from __future__ import annotations

import re

from kit.errors import invalid

ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def check_id(kind: str, value: str, *, required: bool = True) -> None:
    """INVALID_ARGUMENT (reason ``BAD_<KIND>``, field `kind`) unless `value` is a valid id; an
    empty value passes when not `required`."""
    if not value and not required:
        return
    if not ID_PATTERN.match(value):
        raise invalid(f"BAD_{kind.upper()}", f"{kind} must be 1-64 characters of A-Z a-z 0-9 _ -", field=kind)
