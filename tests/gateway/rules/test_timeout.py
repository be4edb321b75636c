"""An action the rules service does not answer in time: RULES_TIMEOUT (UNAVAILABLE, retryable) at
its deadline, forgotten by its stream, and the late answer dropped. A real rules service held
with SIGSTOP; the router in-process."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import grpc
import pytest
from tafel.rules.v1 import rules_pb2

from gateway.rules import RulesRouter
from gateway.rules.stream import SWEEP_S
from kit.errors import Refused
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import c4_move, new_id

TIMEOUT_S = 0.5


def request(game_id: str) -> rules_pb2.ApplyMoveRequest:
    return rules_pb2.ApplyMoveRequest(game_id=game_id, seat=0, expected_version=0, request_id=new_id(), move=c4_move(3))


async def test_an_unanswered_action_times_out_at_its_deadline_and_its_late_answer_is_dropped(
    gw_system: GatewaySystem,
) -> None:
    router = RulesRouter({"connect4": (gw_system.rules.address,)}, streams_per_replica=1, timeout_s=TIMEOUT_S)
    router.start()
    rules = gw_system.rules.process
    try:
        # The stream is up and answering (an unknown game is refused) before the service stops.
        with pytest.raises(Refused) as unknown:
            await router.apply("connect4", request(new_id("g")))
        assert unknown.value.code == grpc.StatusCode.NOT_FOUND
        (stream,) = router._sets["connect4"].replicas[0].streams
        os.kill(rules.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(Refused) as timed_out:
                await asyncio.wait_for(router.apply("connect4", request(new_id("g"))), 5.0)  # never a hang
            waited = time.monotonic() - started
            with pytest.raises(Refused) as shorter:  # a caller's own, shorter timeout counts too
                await asyncio.wait_for(router.apply("connect4", request(new_id("g")), timeout_s=0.2), 5.0)
            assert stream.in_flight == 0  # forgotten: the late answer has nobody to go to
        finally:
            os.kill(rules.pid, signal.SIGCONT)
        assert timed_out.value.code == grpc.StatusCode.UNAVAILABLE and timed_out.value.reason == "RULES_TIMEOUT"
        assert shorter.value.reason == "RULES_TIMEOUT"
        # At the deadline, late by at most one sweep (and a noisy machine's margin).
        assert TIMEOUT_S <= waited < TIMEOUT_S + SWEEP_S + 1.0
        # The late answers arrive and are dropped; the stream goes on answering.
        with pytest.raises(Refused) as after:
            await router.apply("connect4", request(new_id("g")))
        assert after.value.code == grpc.StatusCode.NOT_FOUND and stream.in_flight == 0
    finally:
        await router.close()
