"""The SDK's retries (clients/python/tafel/retry.py) against a real grpc.aio server: gRPC's own
retry policy, from the channel's service config, repeats idempotent unary calls that fail
UNAVAILABLE and leaves the non-idempotent ones (Register) to the caller."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from tafel.client import TafelClient
from tafel.errors import Unavailable
from tafel.play.v1 import play_pb2, play_pb2_grpc
from tafel.retry import UNARY_ATTEMPTS, Attempts, Backoff, retried_methods


class FlakyAccounts(play_pb2_grpc.AccountServiceServicer):
    """Fails the first `failures` calls of each method with UNAVAILABLE, then answers."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls: dict[str, int] = {}

    async def _flaky(self, name: str, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1
        if self.calls[name] <= self.failures:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "restarting")

    async def GetMe(
        self, request: play_pb2.GetMeRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.GetMeResponse:
        await self._flaky("GetMe", context)
        return play_pb2.GetMeResponse(player=play_pb2.Player(player_id="p1", username="ada"))

    async def Register(
        self, request: play_pb2.RegisterRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.RegisterResponse:
        await self._flaky("Register", context)
        return play_pb2.RegisterResponse()


@pytest.fixture
async def flaky() -> AsyncIterator[tuple[FlakyAccounts, str]]:
    accounts = FlakyAccounts(failures=UNARY_ATTEMPTS - 1)
    server = grpc.aio.server()
    play_pb2_grpc.add_AccountServiceServicer_to_server(accounts, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield accounts, f"127.0.0.1:{port}"
    finally:
        await server.stop(0)


async def test_idempotent_unary_calls_are_retried_by_the_channel(flaky: tuple[FlakyAccounts, str]) -> None:
    accounts, address = flaky
    async with await TafelClient.connect(address) as client:
        assert (await client.me()).username == "ada"
    assert accounts.calls["GetMe"] == UNARY_ATTEMPTS  # three failures, then the answer


async def test_calls_that_are_not_idempotent_are_not_retried(flaky: tuple[FlakyAccounts, str]) -> None:
    accounts, address = flaky
    async with await TafelClient.connect(address) as client:
        with pytest.raises(Unavailable) as refused:
            await client.register("ada", "correct horse battery")
    assert accounts.calls["Register"] == 1
    # A status without the platform's reason is gRPC's (or a bare server's): its text is kept for
    # programmers in `detail`, and `message`, which screens show, is a plain sentence.
    assert refused.value.message == "the game server cannot be reached" and refused.value.detail == "restarting"
    assert refused.value.reason == "UNAVAILABLE" and "restarting" in str(refused.value)


def test_the_policy_names_every_unary_method_but_the_unsafe_ones() -> None:
    names = {(n["service"].rsplit(".", 1)[-1], n["method"]) for n in retried_methods()}
    assert ("GameService", "SubmitMove") in names and ("AccountService", "GetMe") in names
    assert not {m for _, m in names} & {"Register", "CreateRoom", "RequestBot", "Play", "WatchGame"}
    # Safety calls are safe to repeat (a report carries a request id), the staff's reads too; a
    # password change, a deletion and the staff's actions (no request ids) are not.
    assert {("SafetyService", "Report"), ("SafetyService", "BlockPlayer"), ("ModerationService", "ListReports")} <= names
    assert not {m for _, m in names} & {"ChangePassword", "DeleteAccount", "SanctionPlayer", "WarnPlayer", "SetRole"}


async def test_stream_attempts_back_off_and_give_up() -> None:
    attempts = Attempts(3, Backoff(first_s=0.001, cap_s=0.004, jitter=0.0))
    assert [attempts.backoff.delay(n) for n in (1, 2, 3, 4)] == [0.001, 0.002, 0.004, 0.004]
    for _ in range(3):
        assert not attempts.exhausted
        await attempts.failed()
    assert attempts.exhausted
    attempts.reset()
    assert not attempts.exhausted and attempts.failures == 0
