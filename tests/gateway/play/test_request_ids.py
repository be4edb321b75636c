"""The request ids an action sends to its rules service (gateway/actions.py): scoped by seat."""

from __future__ import annotations

from gateway.actions import rules_request_id, timeout_request_id


def test_request_ids_are_scoped_by_seat() -> None:
    assert rules_request_id(0, "a") != rules_request_id(1, "a")
    long = rules_request_id(0, "x" * 64)
    assert len(long) <= 64 and long != rules_request_id(1, "x" * 64)
    assert not timeout_request_id(3, 0).startswith(("s", "h"))
