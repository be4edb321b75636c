"""Event ids ("<version>-<index>"): their order, and the refusals a bad starting id gets."""

from __future__ import annotations

import grpc

from kit.errors import Refused
from kit.ids import stream_id


def event_key(event_id: str) -> tuple[int, int]:
    version, _, index = event_id.partition("-")
    try:
        return int(version), int(index or 0)
    except ValueError:
        return -1, -1


def check_event_id(value: str) -> None:
    """A malformed after_event_id is INVALID_ARGUMENT (an id past the end is OUT_OF_RANGE, found
    when the stream is read)."""
    if value and stream_id(value) is None:
        raise Refused(
            grpc.StatusCode.INVALID_ARGUMENT,
            "BAD_EVENT_ID",
            "after_event_id must be an event id like 12-1 (two numbers, each below 2^64)",
            metadata={"field": "after_event_id"},
        )


def past_the_end(event_id: str, last: str) -> Refused:
    return Refused(
        grpc.StatusCode.OUT_OF_RANGE,
        "EVENT_ID_OUT_OF_RANGE",
        f"after_event_id {event_id} is past the end of the game's events (the last is {last})",
    )
