"""The gateway's call limits hold on the web edge too: the edge runs the same handlers with the
same limiter in front, so switching transport is no way around a rate limit (here: room look-ups
per session, which keep invite codes from being enumerated)."""

from __future__ import annotations

import grpc
from tafel.play.v1 import play_pb2

from kit.errors import reason_of
from tests.web.conftest import Connect


async def test_room_lookups_are_limited_over_the_edge(edge: Connect) -> None:
    guest = await edge()
    codes: list[grpc.StatusCode] = []
    refused: grpc.aio.AioRpcError | None = None
    for n in range(60):  # the default burst per session is 20 look-ups
        try:
            await guest.lobby.GetRoom(play_pb2.GetRoomRequest(code=f"NOSUCHROOM{n:02d}"), metadata=guest.metadata())
        except grpc.aio.AioRpcError as error:
            codes.append(error.code())
            if error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                refused = error
                break
    assert refused is not None, f"60 look-ups over the edge and never limited: {codes}"
    assert reason_of(refused) == "RATE_LIMITED"
    assert set(codes[:-1]) <= {grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT}
    assert len(codes) > 5  # the first look-ups are answered, not limited


