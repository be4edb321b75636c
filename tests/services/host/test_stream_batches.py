"""Actions in a batch of the ApplyMoves stream, each taken through the move path of a unary call
(MovePath.act, each entry in its own task, their commits pipelined together). The guarantees are
the unary call's: a retried request id in the same batch is answered with the first answer's bytes
and applied once, commuting placements of one round in one batch are all applied (the losers of
the commit race judged again), and Redis without the commit script (restarted, flushed) still
takes every action once."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2
from tafel_rules.coloursquare.model import Options as CsOptions
from tafel_rules.coloursquare.rules import RULES as CS_RULES
from tafel_rules.connect4 import RULES

from services.coloursquare.codec import CODEC as CS_CODEC
from services.connect4.codec import CODEC
from services.host import stream as stream_module
from tests.gateway.harness import c4_move
from tests.services.host.test_stream_calls import create_request, exchange
from tests.services.rules_harness import Service, apply_request, new_id, rules_service

SMALL_CAP = 8  # the stream's slots in the test of a batch larger than them


@pytest.fixture
async def service(redis_url: str) -> AsyncIterator[Service]:
    async with rules_service(RULES, CODEC, redis_url) as svc:
        yield svc


def entry(correlation_id: int, request: rules_pb2.ApplyMoveRequest) -> rules_pb2.ApplyMovesRequest:
    return rules_pb2.ApplyMovesRequest(correlation_id=correlation_id, request=request)


async def load_commit_script(service: Service, move: games_pb2.GameMove) -> None:
    """One action the unary way, so Redis knows the commit script (a batch's first commits on a
    fresh Redis find it missing and take apply()'s path)."""
    game_id = new_id("warm")
    await service.stub.CreateGame(rules_pb2.CreateGameRequest(game_id=game_id, seats=2, request_id=new_id("c")))
    await service.stub.ApplyMove(apply_request(game_id, 0, 0, move=move))


async def test_a_retry_in_the_same_batch_is_answered_once_with_the_same_bytes(service: Service) -> None:
    await load_commit_script(service, c4_move(0))
    games = [new_id("g") for _ in range(4)]
    for game_id in games:
        await service.stub.CreateGame(create_request(game_id))  # cached at version 0
    moves = [apply_request(game_id, 0, 0, move=c4_move(2)) for game_id in games]
    retried = rules_pb2.ApplyMoveRequest()
    retried.CopyFrom(moves[0])
    entries = [entry(index + 1, move) for index, move in enumerate(moves)] + [entry(9, retried)]
    answers, _ = await exchange(service, entries)
    assert sorted(answers) == [1, 2, 3, 4, 9]
    assert all(answer.WhichOneof("result") == "applied" for answer in answers.values())
    assert answers[9].applied.SerializeToString() == answers[1].applied.SerializeToString()
    assert [answers[i].applied.version for i in (1, 2, 3, 4)] == [1, 1, 1, 1]
    for game_id in games:  # each applied once: the next move is judged at version 1
        view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id))
        assert view.status.version == 1 and list(view.status.to_act) == [1]


async def test_a_batch_after_redis_lost_its_scripts_applies_every_action_once(service: Service) -> None:
    await load_commit_script(service, c4_move(0))
    games = [new_id("g") for _ in range(5)]
    for game_id in games:
        await service.stub.CreateGame(create_request(game_id))
    await service.redis.script_flush()  # as after a Redis restart: EVALSHA answers NOSCRIPT
    answers, _ = await exchange(
        service, [entry(index + 1, apply_request(g, 0, 0, move=c4_move(index))) for index, g in enumerate(games)]
    )
    assert [answers[i + 1].applied.version for i in range(len(games))] == [1] * len(games)
    for index, game_id in enumerate(games):
        view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id))
        assert view.status.version == 1
        assert list(view.view.connect4.board[index].seats) == [0]  # the disc, once


async def test_a_rounds_placements_in_one_batch_are_all_applied(redis_url: str) -> None:
    async with rules_service(CS_RULES, CS_CODEC, redis_url) as service:
        options = games_pb2.GameOptions(coloursquare=CS_CODEC.options_to_proto(CsOptions()))
        warm = new_id("warm")
        await service.stub.CreateGame(
            rules_pb2.CreateGameRequest(game_id=warm, seats=1, seed=6, request_id=new_id("c"), options=options)
        )
        solo = CS_RULES.new_game(CsOptions(), 1, 6)
        move = games_pb2.GameMove(coloursquare=CS_CODEC.move_to_proto(CS_RULES.legal_moves(solo, 0)[0]))
        await service.stub.ApplyMove(apply_request(warm, 0, 0, move=move))  # Redis knows the commit script
        game_id = new_id("g")
        await service.stub.CreateGame(
            rules_pb2.CreateGameRequest(game_id=game_id, seats=3, seed=6, request_id=new_id("c"), options=options)
        )
        local = CS_RULES.new_game(CsOptions(), 3, 6)
        placements = [
            games_pb2.GameMove(coloursquare=CS_CODEC.move_to_proto(CS_RULES.legal_moves(local, seat)[0]))
            for seat in range(3)
        ]
        # All three made against version 0: two lose the commit race and are applied on the new state.
        answers, _ = await exchange(
            service, [entry(seat + 1, apply_request(game_id, seat, 0, move=placements[seat])) for seat in range(3)]
        )
        assert all(answer.WhichOneof("result") == "applied" for answer in answers.values()), answers
        assert sorted(answer.applied.version for answer in answers.values()) == [1, 2, 3]
        last = max(answers.values(), key=lambda answer: answer.applied.version).applied
        kinds = [event.coloursquare.WhichOneof("kind") for event in last.events]
        assert "round_resolved" in kinds and list(last.status.to_act) == [0, 1, 2]


async def test_a_batch_of_more_cached_actions_than_the_streams_slots_is_answered(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A batch's cached actions hold their slots until the batch's replies are read; with more of
    # them than the stream has slots the reader must not wait for a slot only they can free (a
    # 10,000-player round's first moves on a stream of 2,500 games stalled that stream for good).
    monkeypatch.setattr(stream_module, "MAX_IN_FLIGHT_PER_STREAM", SMALL_CAP)
    await load_commit_script(service, c4_move(0))
    games = [new_id("g") for _ in range(SMALL_CAP * 2 + 3)]
    for game_id in games:
        await service.stub.CreateGame(create_request(game_id))  # cached at version 0: begun in the batch
    entries = [entry(index + 1, apply_request(g, 0, 0, move=c4_move(3))) for index, g in enumerate(games)]
    entries.append(rules_pb2.ApplyMovesRequest(correlation_id=999, view=rules_pb2.GetViewRequest(game_id=games[0])))
    answers, _ = await exchange(service, entries)
    assert [answers[i + 1].applied.version for i in range(len(games))] == [1] * len(games)
    assert answers[999].viewed.status.version == 1
