"""The Connect Four rules service over real gRPC against a real Redis."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.plus4.v1 import plus4_pb2
from tafel.rules.v1 import rules_pb2
from tafel_rules.connect4 import RULES

from kit.redis.keys import clock_key, clocks_key, game_keys, game_shard, meta_key
from services.connect4.codec import CODEC
from services.host.store import GameStore
from tests.services.rules_harness import Service, apply_request, new_id, refusal, rules_service
from tools.redis_server import start_redis


@pytest.fixture
async def service(redis_url: str) -> AsyncIterator[Service]:
    async with rules_service(RULES, CODEC, redis_url) as svc:
        yield svc


def c4(column: int) -> games_pb2.GameMove:
    return games_pb2.GameMove(connect4=connect4_pb2.Move(column=column))


async def create(service: Service, **options: int) -> str:
    game_id = new_id("g")
    response = await service.stub.CreateGame(
        rules_pb2.CreateGameRequest(
            game_id=game_id,
            seats=2,
            request_id=new_id("c"),
            options=games_pb2.GameOptions(connect4=connect4_pb2.Options(**options)),
        )
    )
    assert response.status.to_act == [0] and response.status.version == 0
    return game_id


async def test_describe_game_lists_options_with_ranges(service: Service) -> None:
    response = await service.stub.DescribeGame(rules_pb2.DescribeGameRequest())
    assert (response.game, response.min_seats, response.max_seats) == ("connect4", 2, 2)
    ranges = {o.name: (o.integer.minimum, o.integer.maximum, o.integer.default_value) for o in response.options}
    assert ranges == {"rows": (4, 10, 6), "columns": (4, 10, 7)}
    assert response.default_options.connect4.rows == 6


async def test_health_is_serving_and_reflection_lists_the_service(service: Service) -> None:
    health = health_pb2_grpc.HealthStub(service.channel)
    for name in ("", "tafel.rules.v1.RulesService"):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=name))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    reflection = reflection_pb2_grpc.ServerReflectionStub(service.channel)
    replies = reflection.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
    names = [s.name async for r in replies for s in r.list_services_response.service]
    assert "tafel.rules.v1.RulesService" in names and "grpc.health.v1.Health" in names


async def test_a_whole_game_writes_state_events_and_view(service: Service) -> None:
    game_id = await create(service)
    version = 0
    for column in (0, 1, 0, 1, 0, 1, 0):  # seat 0 wins vertically in column 0
        response = await service.stub.ApplyMove(apply_request(game_id, version % 2, version, move=c4(column)))
        version += 1
        assert response.version == version
        assert response.events[0].event_id == f"{version}-1"
        assert response.events[0].connect4.disc_dropped.column == column
    assert response.status.over and list(response.status.outcome.winners) == [0]
    assert response.status.outcome.reason == "FOUR_IN_A_ROW"
    assert response.events[-1].WhichOneof("kind") == "ended"
    store = GameStore(service.layer, live_ttl_s=60, finished_ttl_s=60)
    events = await store.read_events(game_id)
    assert [e for e, _ in events] == ["0-1", "1-1", "2-1", "3-1", "4-1", "5-1", "6-1", "7-1", "7-2"]
    assert await store.read_events(game_id, after="6-1") == events[-2:]
    view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id, seat=1))
    assert list(view.view.connect4.board[0].seats) == [0, 0, 0, 0]
    assert view.last_event_id == "7-2" and view.status.over and view.game == "connect4"
    assert 0 < await service.redis.ttl(game_keys(game_id).state) <= 3600  # live keys expire after the end


async def test_two_concurrent_moves_exactly_one_applies(service: Service, redis_url: str) -> None:
    async with rules_service(RULES, CODEC, redis_url) as replica:
        for _ in range(10):
            game_id = await create(service)
            calls = [
                service.stub.ApplyMove(apply_request(game_id, 0, 0, move=c4(3))),
                replica.stub.ApplyMove(apply_request(game_id, 0, 0, move=c4(4))),
            ]
            results = await asyncio.gather(*calls, return_exceptions=True)
            applied = [r for r in results if isinstance(r, rules_pb2.ApplyMoveResponse)]
            failed = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
            assert len(applied) == 1 and len(failed) == 1
            assert failed[0].code() == grpc.StatusCode.ABORTED
            view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id))
            assert view.status.version == 1


async def test_same_request_id_applies_once_and_answers_the_same(service: Service, redis_url: str) -> None:
    game_id = await create(service)
    request = apply_request(game_id, 0, 0, move=c4(3))
    first = await service.stub.ApplyMove(request)
    second = await service.stub.ApplyMove(request)
    assert first == second
    async with rules_service(RULES, CODEC, redis_url) as replica:  # another replica, no cache
        assert await replica.stub.ApplyMove(request) == first
    view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id))
    assert view.status.version == 1 and view.view.connect4.moves == "4"


async def test_create_is_idempotent_per_request_and_refuses_a_taken_id(service: Service) -> None:
    request = rules_pb2.CreateGameRequest(game_id=new_id("g"), seats=2, request_id=new_id("c"))
    assert await service.stub.CreateGame(request) == await service.stub.CreateGame(request)
    other = rules_pb2.CreateGameRequest(game_id=request.game_id, seats=2, request_id=new_id("c"))
    code, reason, _ = await refusal(service.stub.CreateGame(other))
    assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "GAME_EXISTS")


@pytest.mark.parametrize(
    ("request_", "reason"),
    [
        (rules_pb2.CreateGameRequest(game_id="bad id!", seats=2), "BAD_GAME_ID"),
        (rules_pb2.CreateGameRequest(game_id="x" * 65, seats=2), "BAD_GAME_ID"),
        (rules_pb2.CreateGameRequest(game_id="ok", seats=3), "BAD_OPTIONS"),
        (
            rules_pb2.CreateGameRequest(
                game_id="ok", seats=2, options=games_pb2.GameOptions(connect4=connect4_pb2.Options(rows=11))
            ),
            "BAD_OPTIONS",
        ),
        (
            rules_pb2.CreateGameRequest(
                game_id="ok", seats=2, options=games_pb2.GameOptions(plus4=plus4_pb2.Options())
            ),
            "WRONG_GAME",
        ),
    ],
)
async def test_malformed_creates_are_invalid_argument(
    service: Service, request_: rules_pb2.CreateGameRequest, reason: str
) -> None:
    code, got, message = await refusal(service.stub.CreateGame(request_))
    assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
    assert message and "Traceback" not in message


async def test_malformed_moves_are_invalid_argument_and_change_nothing(service: Service) -> None:
    game_id = await create(service)
    cases = [
        (rules_pb2.ApplyMoveRequest(game_id=game_id, seat=0, request_id="r1"), "ACTION_MISSING"),
        (rules_pb2.ApplyMoveRequest(game_id=game_id, seat=0, move=c4(1)), "BAD_REQUEST_ID"),
        (rules_pb2.ApplyMoveRequest(game_id="", seat=0, request_id="r", move=c4(1)), "BAD_GAME_ID"),
        (rules_pb2.ApplyMoveRequest(game_id=game_id, seat=7, request_id="r", move=c4(1)), "BAD_SEAT"),
        (
            rules_pb2.ApplyMoveRequest(game_id=game_id, seat=0, request_id="r", move=games_pb2.GameMove()),
            "MOVE_MISSING",
        ),
        (
            rules_pb2.ApplyMoveRequest(
                game_id=game_id, seat=0, request_id="r", move=games_pb2.GameMove(plus4=plus4_pb2.Move())
            ),
            "WRONG_GAME",
        ),
    ]
    for request, reason in cases:
        code, got, _ = await refusal(service.stub.ApplyMove(request))
        assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, reason), request
    view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id))
    assert view.status.version == 0


async def test_illegal_moves_are_failed_precondition_with_reason(service: Service) -> None:
    game_id = await create(service, rows=4, columns=4)
    for version in range(4):
        await service.stub.ApplyMove(apply_request(game_id, version % 2, version, move=c4(0)))
    for seat, move, reason in (
        (0, c4(0), "COLUMN_FULL"),
        (0, c4(4), "COLUMN_OUT_OF_RANGE"),
        (0, c4(99999), "COLUMN_OUT_OF_RANGE"),  # any column the board lacks (was BAD_COLUMN past 1000)
        (1, c4(1), "NOT_YOUR_TURN"),
    ):
        code, got, message = await refusal(service.stub.ApplyMove(apply_request(game_id, seat, 4, move=move)))
        assert (code, got) == (grpc.StatusCode.FAILED_PRECONDITION, reason)
        assert message
    await service.stub.ApplyMove(apply_request(game_id, 0, 4, resignation=rules_pb2.Resignation()))
    code, got, _ = await refusal(service.stub.ApplyMove(apply_request(game_id, 1, 5, move=c4(1))))
    assert (code, got) == (grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER")
    view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id))
    assert view.status.version == 5 and list(view.status.outcome.winners) == [1]
    assert view.status.outcome.reason == "RESIGNED"


async def test_stale_version_is_aborted_with_the_current_version(service: Service) -> None:
    game_id = await create(service)
    await service.stub.ApplyMove(apply_request(game_id, 0, 0, move=c4(0)))
    code, reason, _ = await refusal(service.stub.ApplyMove(apply_request(game_id, 1, 0, move=c4(0))))
    assert (code, reason) == (grpc.StatusCode.ABORTED, "VERSION_MISMATCH")


async def test_unknown_game_is_not_found(service: Service) -> None:
    code, reason, _ = await refusal(service.stub.ApplyMove(apply_request("nope", 0, 0, move=c4(0))))
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND")
    code, reason, _ = await refusal(service.stub.GetView(rules_pb2.GetViewRequest(game_id="nope")))
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND")


async def test_timeout_forfeits_the_seat_on_the_clock(service: Service) -> None:
    game_id = await create(service)
    response = await service.stub.ApplyMove(apply_request(game_id, 0, 0, timeout=rules_pb2.Timeout()))
    assert response.events[0].timed_out.seat == 0
    assert list(response.status.outcome.winners) == [1] and response.status.outcome.reason == "TIMEOUT"


async def test_stream_multiplexes_many_games_with_correlation_ids(service: Service) -> None:
    games = [await create(service) for _ in range(8)]
    queue: asyncio.Queue[rules_pb2.ApplyMovesRequest | None] = asyncio.Queue()

    async def requests():  # type: ignore[no-untyped-def]
        while (item := await queue.get()) is not None:
            yield item

    call = service.stub.ApplyMoves(requests())
    for correlation, game_id in enumerate(games):
        queue.put_nowait(
            rules_pb2.ApplyMovesRequest(correlation_id=correlation, request=apply_request(game_id, 0, 0, move=c4(2)))
        )
    answers = {}
    async for answer in call:
        answers[answer.correlation_id] = answer
        if len(answers) == len(games):
            break
    # and one refusal on the same stream: a stale version on the first game
    queue.put_nowait(rules_pb2.ApplyMovesRequest(correlation_id=100, request=apply_request(games[0], 1, 5, move=c4(2))))
    async for answer in call:
        answers[answer.correlation_id] = answer
        break
    queue.put_nowait(None)
    for correlation in range(len(games)):
        assert answers[correlation].applied.version == 1
    refused = answers[100].refusal
    assert refused.code == grpc.StatusCode.ABORTED.value[0] and refused.reason == "VERSION_MISMATCH"
    assert refused.current_version == 1


async def test_redis_down_is_unavailable_and_service_recovers() -> None:
    redis_process = start_redis()
    port = redis_process.port
    try:
        async with rules_service(RULES, CODEC, redis_process.url) as service:
            game_id = await create(service)
            redis_process.stop()
            code, reason, _ = await refusal(service.stub.ApplyMove(apply_request(game_id, 0, 0, move=c4(0))))
            assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")
            code, _, _ = await refusal(service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id)))
            assert code == grpc.StatusCode.UNAVAILABLE
            health = health_pb2_grpc.HealthStub(service.channel)
            assert (
                await health.Check(health_pb2.HealthCheckRequest())
            ).status == health_pb2.HealthCheckResponse.SERVING
            redis_process = start_redis(port)  # empty again: the game is gone, the service is not
            game_id = await create(service)
            response = await service.stub.ApplyMove(apply_request(game_id, 0, 0, move=c4(0)))
            assert response.version == 1
    finally:
        redis_process.stop()


async def test_stream_batches_many_actions_in_one_message_and_answers_in_batches(service: Service) -> None:
    games = [await create(service) for _ in range(6)]
    batch = [
        rules_pb2.ApplyMovesRequest(correlation_id=i, request=apply_request(game_id, 0, 0, move=c4(3)))
        for i, game_id in enumerate(games)
    ]
    batch.append(rules_pb2.ApplyMovesRequest(correlation_id=99, request=apply_request(games[0], 1, 7, move=c4(3))))

    async def requests():  # type: ignore[no-untyped-def]
        yield rules_pb2.ApplyMovesRequest(batch=batch)
        await asyncio.sleep(3600)  # keep the stream open while the answers arrive

    call = service.stub.ApplyMoves(requests())
    answers = {}
    async for message in call:
        for answer in message.batch or (message,):
            assert not answer.batch
            answers[answer.correlation_id] = answer
        if len(answers) == len(batch):
            break
    call.cancel()
    assert all(answers[i].applied.version == 1 for i in range(len(games)))
    assert answers[99].refusal.reason == "VERSION_MISMATCH"


async def test_a_turn_clock_is_armed_in_the_same_write_as_the_move(service: Service) -> None:
    game_id = await create(service)
    redis = service.redis
    meta = meta_key(game_id)
    await redis.set(meta, "x")
    clock = rules_pb2.TurnClock(per_move_ms=30_000, ttl_s=600, keep_alive=[meta])
    before = int(time.time() * 1000)
    request = apply_request(game_id, 0, 0, move=c4(3), turn_clock=clock)
    response = await service.stub.ApplyMove(request)
    deadline = response.turn_deadline.ToMilliseconds()
    assert response.clock_armed and before + 30_000 <= deadline <= int(time.time() * 1000) + 30_000
    stored = await redis.hgetall(clock_key(game_id))
    assert stored[b"v"] == b"1" and int(stored[b"d"]) == deadline and stored[b"a"] == b"1"
    assert await redis.zscore(clocks_key(game_shard(game_id)), f"{game_id}|1|1") == deadline
    assert 0 < await redis.ttl(meta) <= 600  # kept alive with the clock

    # A retry gets the first answer, marked as not armed by it (the caller arms idempotently).
    replay = await service.stub.ApplyMove(request)
    assert replay.version == 1 and not replay.clock_armed

    # The next move replaces the deadline; the game's end clears it.
    version = 1
    for column in (0, 4, 0, 5, 0, 6):  # seat 0 connects four in the bottom row: 3, 4, 5, 6
        response = await service.stub.ApplyMove(
            apply_request(game_id, version % 2, version, move=c4(column), turn_clock=clock)
        )
        version += 1
        assert await redis.zscore(clocks_key(game_shard(game_id)), f"{game_id}|{version - 1}|{(version - 1) % 2}") is None
    assert response.status.over and response.clock_armed and not response.HasField("turn_deadline")
    assert (await redis.hgetall(clock_key(game_id)))[b"d"] == b"0"
    # No turn deadline is left: only the end's seatless finalise deadline, ~30 s away, which the
    # gateway removes once the record is written (a sweeper finishes the game if it never is).
    left = [m for m in await redis.zrange(clocks_key(game_shard(game_id)), 0, -1) if m.startswith(game_id.encode())]
    assert left == [f"{game_id}|{version}|".encode()]
    finalise = await redis.zscore(clocks_key(game_shard(game_id)), left[0])
    assert finalise is not None and 25_000 < finalise - time.time() * 1000 <= 30_000


@pytest.mark.parametrize(
    "clock",
    [
        rules_pb2.TurnClock(per_move_ms=0, ttl_s=600),
        rules_pb2.TurnClock(per_move_ms=1000, ttl_s=10),
        rules_pb2.TurnClock(per_move_ms=1000, ttl_s=600, keep_alive=["tafel:someone-else"]),
    ],
)
async def test_a_bad_turn_clock_is_refused_and_changes_nothing(service: Service, clock: rules_pb2.TurnClock) -> None:
    game_id = await create(service)
    code, reason, _ = await refusal(service.stub.ApplyMove(apply_request(game_id, 0, 0, move=c4(3), turn_clock=clock)))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_TURN_CLOCK")
    view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id))
    assert view.status.version == 0
    assert not await service.redis.exists(clock_key(game_id))


async def test_the_commit_keeps_alive_only_the_games_metadata_key(service: Service) -> None:
    """turn_clock.keep_alive may name the game's metadata key and nothing else, not even another key
    of the same game: the commit script refreshes keys the store names, never the caller's."""
    game_id = await create(service)
    other = game_keys(game_id).events  # the game's hash tag, but the rules service's own key
    clock = rules_pb2.TurnClock(per_move_ms=1000, ttl_s=600, keep_alive=[meta_key(game_id), other])
    code, reason, message = await refusal(
        service.stub.ApplyMove(apply_request(game_id, 0, 0, move=c4(3), turn_clock=clock))
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_TURN_CLOCK") and meta_key(game_id) in message
    assert not await service.redis.exists(clock_key(game_id))
    # Without the metadata key in keep_alive, the clock is armed and the metadata left alone.
    await service.redis.set(meta_key(game_id), "x")
    plain = rules_pb2.TurnClock(per_move_ms=1000, ttl_s=600)
    response = await service.stub.ApplyMove(apply_request(game_id, 0, 0, move=c4(3), turn_clock=plain))
    assert response.clock_armed and await service.redis.ttl(meta_key(game_id)) == -1
    await service.redis.delete(meta_key(game_id))
