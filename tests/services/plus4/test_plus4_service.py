"""The Plus 4 rules service over real gRPC against a real Redis."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.plus4.v1 import plus4_pb2 as pb
from tafel.rules.v1 import rules_pb2
from tafel_rules.plus4 import RULES, Move, Plus4Event, Plus4Options, Plus4State, TurnSkipped

from services.host.store import GameStore
from services.plus4.codec import CODEC
from tests.services.rules_harness import Service, apply_request, new_id, refusal, rules_service

GAMES = json.loads((Path(__file__).resolve().parents[2] / "data" / "plus4" / "plus4.json").read_text())["games"]
MODES = {"points": pb.MODE_POINTS, "first_line": pb.MODE_FIRST_LINE, "rounds": pb.MODE_ROUNDS}


@pytest.fixture
async def service(redis_url: str) -> AsyncIterator[Service]:
    async with rules_service(RULES, CODEC, redis_url) as svc:
        yield svc


def p4(column: int, bonus: bool = False) -> games_pb2.GameMove:
    return games_pb2.GameMove(plus4=pb.Move(column=column, bonus=bonus))


async def create(service: Service, **options: Any) -> str:
    game_id = new_id("g")
    response = await service.stub.CreateGame(
        rules_pb2.CreateGameRequest(
            game_id=game_id,
            seats=2,
            request_id=new_id("c"),
            options=games_pb2.GameOptions(plus4=pb.Options(**options)),
        )
    )
    assert response.status.to_act == [0] and response.status.version == 0
    assert response.options.WhichOneof("game") == "plus4"
    return game_id


async def play(service: Service, game_id: str, moves: list[tuple[int, Move]]) -> rules_pb2.ApplyMoveResponse:
    response = rules_pb2.ApplyMoveResponse()
    for version, (seat, move) in enumerate(moves):
        response = await service.stub.ApplyMove(apply_request(game_id, seat, version, move=p4(move.column, move.bonus)))
        assert response.version == version + 1
    return response


def find_game(found: Callable[[Plus4State, list[Plus4Event]], bool], seed: int = 1) -> list[tuple[int, Move]]:
    """A random legal move sequence (pure rules, seeded) whose last move satisfies `found`."""
    rng = random.Random(seed)
    for _ in range(500):
        state = RULES.new_game(Plus4Options(), 2, 0)
        moves: list[tuple[int, Move]] = []
        while state.result is None:
            seat = state.to_move
            assert seat is not None
            move = rng.choice(list(RULES.legal_moves(state, seat)))
            state, events = RULES.apply_move(state, seat, move)
            moves.append((seat, move))
            if found(state, list(events)):
                return moves
    raise AssertionError("no such game found")


async def test_describe_game_lists_options(service: Service) -> None:
    response = await service.stub.DescribeGame(rules_pb2.DescribeGameRequest())
    assert (response.game, response.title, response.min_seats, response.max_seats) == ("plus4", "Plus 4", 2, 2)
    options = {o.name: o for o in response.options}
    # The enum names the field takes (the contract's option listings rule; were "points", "first_line", "rounds").
    assert list(options["mode"].choice.choices) == ["MODE_POINTS", "MODE_FIRST_LINE", "MODE_ROUNDS"]
    assert options["mode"].choice.default_value == "MODE_POINTS"
    target, limit = options["target"].integer, options["move_limit"].integer
    assert (target.minimum, target.maximum, target.default_value) == (1, 99, 11)
    assert (limit.minimum, limit.maximum, limit.default_value) == (1, 10000, 400)
    assert response.default_options.plus4 == pb.Options(mode=pb.MODE_POINTS, target=11, move_limit=400)


async def test_health_is_serving(service: Service) -> None:
    health = health_pb2_grpc.HealthStub(service.channel)
    reply = await health.Check(health_pb2.HealthCheckRequest(service="tafel.rules.v1.RulesService"))
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


@pytest.mark.parametrize("game", GAMES, ids=[f"game{g['index']}-{g['options']['mode']}" for g in GAMES])
async def test_reference_games_through_the_service(service: Service, redis_url: str, game: dict[str, Any]) -> None:
    opts = game["options"]
    game_id = await create(service, mode=MODES[opts["mode"]], target=opts["target"], move_limit=opts["move_limit"])
    for version, step in enumerate(game["steps"]):
        column, bonus = step["move"]
        response = await service.stub.ApplyMove(apply_request(game_id, step["player"], version, move=p4(column, bonus)))
        after = step["after"]
        kinds = [e.plus4.WhichOneof("kind") for e in response.events if e.WhichOneof("kind") == "plus4"]
        assert kinds[0] == "disc_pushed"
        assert kinds.count("line_scored") == len(after["scored_lines"])
        assert kinds.count("disc_fell_out") == (after["fell_out"] is not None)
        assert kinds.count("turn_skipped") == (after["skipped"] is not None)
        assert kinds.count("round_won") == bool(after["round_winners"])
        assert list(response.status.to_act) == ([] if after["to_move"] is None else [after["to_move"]])
    last = game["steps"][-1]["after"]
    assert response.status.over and response.events[-1].WhichOneof("kind") == "ended"
    outcome = response.status.outcome
    assert outcome.reason == last["result"]["reason"]
    assert list(outcome.winners) == ([0, 1] if last["result"]["winner"] is None else [last["result"]["winner"]])
    # any replica (no cache: the state comes from Redis) sees the same final position
    async with rules_service(RULES, CODEC, redis_url) as replica:
        reply = await replica.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id, seat=0))
    view = reply.view.plus4
    frame = [
        [[sq.disc.colour, sq.disc.bonus] if sq.HasField("disc") else None for sq in row.squares] for row in view.frame
    ]
    assert frame == last["board"]
    assert [[s.ordinary, s.bonus] for s in view.supplies] == last["supplies"]
    assert list(view.scores) == last["scores"] and list(view.round_wins) == last["round_wins"]
    assert not view.HasField("to_move") and not view.legal_moves
    assert (view.moves_made, view.round) == (last["moves_made"], last["round_no"])
    assert reply.status.version == len(game["steps"]) and reply.game == "plus4"


async def test_events_are_stored_in_order_and_the_view_follows(service: Service) -> None:
    game_id = await create(service, mode=pb.MODE_FIRST_LINE)
    # red fills row 0 while blue plays column 3 below it: red's 4th push completes row 0... after
    # blue's disc went down: columns 0,1,2 then red pushes column 3 over blue's disc.
    moves = [(0, Move(0)), (1, Move(3)), (0, Move(1)), (1, Move(3)), (0, Move(2)), (1, Move(3)), (0, Move(3))]
    response = await play(service, game_id, moves)
    assert response.status.over and list(response.status.outcome.winners) == [0]
    assert response.status.outcome.reason == "LINE_COMPLETED"
    kinds = [e.WhichOneof("kind") for e in response.events]
    assert kinds == ["plus4", "plus4", "ended"]
    line = response.events[1].plus4.line_scored
    assert [(c.row, c.column) for c in line.cells] == [(0, 0), (0, 1), (0, 2), (0, 3)]
    store = GameStore(service.layer, live_ttl_s=60, finished_ttl_s=60)
    events = await store.read_events(game_id)
    assert [e for e, _ in events] == ["0-1", *(f"{v}-1" for v in range(1, 7)), "7-1", "7-2", "7-3"]
    view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id, seat=1))
    assert view.last_event_id == "7-3" and view.status.over
    assert len(view.view.plus4.scored_lines) == 1


async def test_a_skipped_turn_over_the_service(service: Service) -> None:
    moves = find_game(lambda _, events: any(isinstance(e, TurnSkipped) for e in events))
    game_id = await create(service)
    response = await play(service, game_id, moves)
    skipped = [e.plus4.turn_skipped for e in response.events if e.plus4.WhichOneof("kind") == "turn_skipped"]
    last_seat = moves[-1][0]
    assert [s.seat for s in skipped] == [1 - last_seat]
    assert list(response.status.to_act) == [last_seat]
    view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id, seat=1 - last_seat))
    supply = view.view.plus4.supplies[1 - last_seat]
    assert (supply.ordinary, supply.bonus) == (0, False) and not view.view.plus4.legal_moves
    code, reason, _ = await refusal(
        service.stub.ApplyMove(apply_request(game_id, 1 - last_seat, len(moves), move=p4(0)))
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")


async def test_illegal_moves_are_failed_precondition_with_their_reason(service: Service) -> None:
    # red has pushed all nine ordinary discs and none came back
    moves = find_game(lambda s, _: s.result is None and s.to_move == 0 and s.ordinary[0] == 0 and s.bonus_in_hand[0])
    game_id = await create(service)
    await play(service, game_id, moves)
    version = len(moves)
    cases = [
        (1, p4(0), "NOT_YOUR_TURN"),
        (0, p4(4), "COLUMN_OUT_OF_RANGE"),
        (0, p4(1000), "COLUMN_OUT_OF_RANGE"),
        (0, p4(0), "NO_ORDINARY_DISC"),
    ]
    for seat, move, reason in cases:
        code, got, message = await refusal(service.stub.ApplyMove(apply_request(game_id, seat, version, move=move)))
        assert (code, got) == (grpc.StatusCode.FAILED_PRECONDITION, reason)
        assert message and "Traceback" not in message
    await service.stub.ApplyMove(apply_request(game_id, 0, version, resignation=rules_pb2.Resignation()))
    code, got, _ = await refusal(service.stub.ApplyMove(apply_request(game_id, 1, version + 1, move=p4(1))))
    assert (code, got) == (grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER")
    view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id))
    assert view.status.version == version + 1 and list(view.status.outcome.winners) == [1]
    assert view.status.outcome.reason == "RESIGNED"
    # the bonus disc is in the frame, not in the supply
    game_id = await create(service)
    await play(service, game_id, [(0, Move(0, True)), (1, Move(1))])
    code, got, _ = await refusal(service.stub.ApplyMove(apply_request(game_id, 0, 2, move=p4(3, True))))
    assert (code, got) == (grpc.StatusCode.FAILED_PRECONDITION, "NO_BONUS_DISC")


@pytest.mark.parametrize(
    ("options", "seats", "reason"),
    [
        (games_pb2.GameOptions(plus4=pb.Options(target=100)), 2, "BAD_OPTIONS"),
        (games_pb2.GameOptions(plus4=pb.Options(move_limit=10001)), 2, "BAD_OPTIONS"),
        (games_pb2.GameOptions(plus4=pb.Options(mode=7)), 2, "BAD_OPTIONS"),  # type: ignore[arg-type]
        (games_pb2.GameOptions(), 3, "BAD_OPTIONS"),
        (games_pb2.GameOptions(connect4=connect4_pb2.Options()), 2, "WRONG_GAME"),
    ],
)
async def test_malformed_creates_are_invalid_argument(
    service: Service, options: games_pb2.GameOptions, seats: int, reason: str
) -> None:
    request = rules_pb2.CreateGameRequest(game_id=new_id("g"), seats=seats, options=options)
    code, got, message = await refusal(service.stub.CreateGame(request))
    assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
    assert message and "Traceback" not in message


async def test_defaults_fill_unset_options(service: Service) -> None:
    response = await service.stub.CreateGame(
        rules_pb2.CreateGameRequest(
            game_id=new_id("g"), seats=2, options=games_pb2.GameOptions(plus4=pb.Options(mode=pb.MODE_ROUNDS))
        )
    )
    assert response.options.plus4 == pb.Options(mode=pb.MODE_ROUNDS, target=11, move_limit=400)


async def test_malformed_moves_are_invalid_argument(service: Service) -> None:
    game_id = await create(service)
    cases = [
        (apply_request(game_id, 0, 0, move=games_pb2.GameMove()), "MOVE_MISSING"),
        (
            apply_request(game_id, 0, 0, move=games_pb2.GameMove(connect4=connect4_pb2.Move(column=1))),
            "WRONG_GAME",
        ),
        (apply_request(game_id, 2, 0, move=p4(1)), "BAD_SEAT"),
    ]
    for request, reason in cases:
        code, got, _ = await refusal(service.stub.ApplyMove(request))
        assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
    view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id))
    assert view.status.version == 0


async def test_two_concurrent_moves_exactly_one_applies(service: Service, redis_url: str) -> None:
    async with rules_service(RULES, CODEC, redis_url) as replica:
        for _ in range(5):
            game_id = await create(service)
            results = await asyncio.gather(
                service.stub.ApplyMove(apply_request(game_id, 0, 0, move=p4(1))),
                replica.stub.ApplyMove(apply_request(game_id, 0, 0, move=p4(2, True))),
                return_exceptions=True,
            )
            applied = [r for r in results if isinstance(r, rules_pb2.ApplyMoveResponse)]
            failed = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
            assert len(applied) == 1 and len(failed) == 1
            assert failed[0].code() == grpc.StatusCode.ABORTED


async def test_same_request_id_applies_once(service: Service) -> None:
    game_id = await create(service)
    request = apply_request(game_id, 0, 0, move=p4(3, True))
    first = await service.stub.ApplyMove(request)
    assert await service.stub.ApplyMove(request) == first
    view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id))
    assert view.status.version == 1 and view.view.plus4.moves_made == 1
    assert (view.view.plus4.supplies[0].ordinary, view.view.plus4.supplies[0].bonus) == (9, False)


async def test_stale_version_is_aborted(service: Service) -> None:
    game_id = await create(service)
    await service.stub.ApplyMove(apply_request(game_id, 0, 0, move=p4(0)))
    code, reason, _ = await refusal(service.stub.ApplyMove(apply_request(game_id, 1, 0, move=p4(0))))
    assert (code, reason) == (grpc.StatusCode.ABORTED, "VERSION_MISMATCH")


async def test_timeout_forfeits_the_seat_on_the_clock(service: Service) -> None:
    game_id = await create(service)
    code, reason, _ = await refusal(service.stub.ApplyMove(apply_request(game_id, 1, 0, timeout=rules_pb2.Timeout())))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
    response = await service.stub.ApplyMove(apply_request(game_id, 0, 0, timeout=rules_pb2.Timeout()))
    assert response.events[0].timed_out.seat == 0
    assert list(response.status.outcome.winners) == [1] and response.status.outcome.reason == "TIMEOUT"
    assert list(response.status.outcome.scores) == [0, 0]


async def test_stream_multiplexes_games(service: Service) -> None:
    games = [await create(service) for _ in range(6)]
    queue: asyncio.Queue[rules_pb2.ApplyMovesRequest | None] = asyncio.Queue()

    async def requests() -> AsyncIterator[rules_pb2.ApplyMovesRequest]:
        while (item := await queue.get()) is not None:
            yield item

    call = service.stub.ApplyMoves(requests())
    for correlation, game_id in enumerate(games):
        queue.put_nowait(
            rules_pb2.ApplyMovesRequest(
                correlation_id=correlation, request=apply_request(game_id, 0, 0, move=p4(correlation % 4))
            )
        )
    answers = {}
    async for answer in call:
        answers[answer.correlation_id] = answer
        if len(answers) == len(games):
            break
    queue.put_nowait(None)
    for correlation in range(len(games)):
        applied = answers[correlation].applied
        assert applied.version == 1 and applied.events[0].plus4.disc_pushed.column == correlation % 4
