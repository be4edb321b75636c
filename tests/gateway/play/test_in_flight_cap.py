"""The Play stream's cap on actions in flight (gateway/play/session.py MAX_IN_FLIGHT_PER_STREAM):
past it the stream stops reading until an action ends, loses nothing and answers every action.
Real gateway and rules service processes; the rules service is held with SIGSTOP so the actions
stay in flight while the test looks."""

from __future__ import annotations

import os
import signal
import time

import grpc
from tafel.play.v1 import play_pb2

from gateway.play.session import MAX_IN_FLIGHT_PER_STREAM
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Client, PlayStream, Seating, c4_move, new_id

GAMES = 4
OVER = 44  # actions sent past the cap


async def test_a_stream_past_its_cap_waits_loses_nothing_and_answers_all(
    gw_system: GatewaySystem, seats: Seating, clients: list[Client]
) -> None:
    a, b = clients[0], clients[1]
    game_ids = [await seats.start([a.player, b.player]) for _ in range(GAMES)]
    stream = PlayStream(a)
    await stream.request(ping=play_pb2.Ping(nonce=1))  # the stream is up before the service stops
    total = MAX_IN_FLIGHT_PER_STREAM + OVER
    rules = gw_system.rules.process
    os.kill(rules.pid, signal.SIGSTOP)
    try:
        sent = [
            await stream.send(
                submit_move=play_pb2.SubmitMoveRequest(
                    game_id=game_ids[index % GAMES], expected_version=0, request_id=new_id(), move=c4_move(3)
                )
            )
            for index in range(total)
        ]
        ping = await stream.send(ping=play_pb2.Ping(nonce=2))
        # Every action is in flight (the rules service answers nothing): the stream reads no
        # further than the cap, so the ping behind the last actions is not even read.
        try:
            await stream.wait_for(lambda: ping in stream.answers, timeout_s=1.0)
        except AssertionError:
            pass
        else:
            raise AssertionError("the ping was answered while the stream held more than its cap in flight")
        assert not any(correlation in stream.answers for correlation in sent)
    finally:
        os.kill(rules.pid, signal.SIGCONT)

    await stream.wait_for(lambda: all(c in stream.answers for c in (*sent, ping)), timeout_s=20.0)
    answers = [stream.answers[correlation] for correlation in sent]
    # One answer each, nothing lost: the first action on each game applies, the rest are stale.
    assert len([r for r in stream.responses if r.correlation_id in set(sent)]) == total
    accepted = [r for r in answers if r.WhichOneof("kind") == "move_accepted"]
    assert len(accepted) == GAMES and all(r.move_accepted.version == 1 for r in accepted)
    # Each carries the next turn's deadline as the rules service armed it (per move 60 s).
    now_ms = time.time() * 1000
    assert all(now_ms < r.move_accepted.turn_deadline.ToMilliseconds() <= now_ms + 60_000 for r in accepted)
    refused = [r for r in answers if r.WhichOneof("kind") == "refusal"]
    assert len(refused) == total - GAMES
    assert all(r.refusal.code == grpc.StatusCode.ABORTED.value[0] for r in refused)
    # The ping was read only after OVER actions had ended (each queues its answer before it ends).
    order = [r.correlation_id for r in stream.responses]
    assert len(set(sent) & set(order[: order.index(ping)])) >= OVER
    await stream.call.done_writing()
