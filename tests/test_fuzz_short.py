"""The short `make fuzz`: a few hostile requests at every RPC of every server of a real platform,
then every field of every request at its boundaries (an event id past 64 bits answered
UNAVAILABLE); no UNKNOWN, INTERNAL, UNAVAILABLE, hang, dead process or leaked exception text."""

from __future__ import annotations

from tools.fuzz import main


def test_every_rpc_answers_hostile_requests_with_a_proper_status(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--rounds", "4", "--seed", "7", "--stream-deadline", "1"]) == 0, capsys.readouterr().out
