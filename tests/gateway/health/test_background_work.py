"""Each kind of a gateway's background work made to fail for real (docs/health.md): the clock
sweeper, the rating sweeper and the tournament runner from a copy of the packages that lacks
their script, then the file put back; the watch hub's pub/sub connection killed by Redis and
Redis itself stopped; bot requests without their script and with a queue that is not a list.
Each client that waits gets its answer or a status before its deadline, each fault is logged
once, and a loop that must keep running resumes once its fault is repaired.

On a Redis of this module's own: the session's gateways (tests/gateway/conftest.py) would sweep
the clocks, ratings and tournaments that the broken gateway must be left alone with."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from redis.asyncio import Redis
from tafel.games.v1 import games_pb2
from tafel.play.v1 import bots_pb2, bots_pb2_grpc, play_pb2, play_pb2_grpc, tournaments_pb2, tournaments_pb2_grpc

from kit.redis.keys import bot_queue_key
from tests.gateway.harness import Client, Proc, seating, spawn_gateway, spawn_rules
from tests.gateway.health.test_background_failures import FAST, FROM_COPY, lines, packages_without
from tools.platform import ROOT
from tools.redis_server import RedisProcess, free_port, start_redis

LUA = Path("kit") / "redis" / "lua"


@dataclass
class Own:
    redis_url: str
    rules: Proc
    port: int
    redis: RedisProcess  # replaced by the test that stops it

    @property
    def routes(self) -> dict[str, str]:
        return {"connect4": self.rules.address}


@pytest.fixture(scope="module")
def own() -> Iterator[Own]:
    port = free_port()
    redis = start_redis(port)
    rules = spawn_rules(redis.url)
    made = Own(redis.url, rules, port, redis)
    try:
        yield made
    finally:
        rules.stop()
        made.redis.stop()


def broken(own: Own, copy: Path, name: str, **env: str) -> Proc:
    """A gateway run from `copy` (packages_without)."""
    return spawn_gateway(
        own.redis_url, own.routes, name=name, python_args=FROM_COPY, PYTHONPATH=str(copy), **{**FAST, **env}
    )


def repair(copy: Path, name: str) -> None:
    """Put the script back: the next pass reads it (a script is cached only once read)."""
    shutil.copy(ROOT / LUA / f"{name}.lua", copy / LUA / f"{name}.lua")


async def until(check: Callable[[], Awaitable[bool]], within_s: float, what: str) -> float:
    """Seconds until `check` holds; fails after `within_s`."""
    started = time.monotonic()
    while not await check():
        assert time.monotonic() - started < within_s, f"{what}: not within {within_s} s"
        await asyncio.sleep(0.05)
    return time.monotonic() - started


@pytest.fixture
async def two(own: Own) -> AsyncIterator[tuple[Callable[[str], Awaitable[list[Client]]], list[Client]]]:
    made: list[Client] = []

    async def on(address: str) -> list[Client]:
        pair = [await Client(address).guest(), await Client(address).guest()]
        made.extend(pair)
        return pair

    try:
        yield on, made
    finally:
        for client in made:
            await client.close()


async def test_the_clock_sweeper_without_its_script_is_logged_once_and_times_out_once_repaired(
    own: Own, tmp_path: Path, two: tuple[Callable[[str], Awaitable[list[Client]]], list[Client]]
) -> None:
    copy = packages_without(tmp_path, ["clocks/claim"])
    gateway = broken(own, copy, "gateway-without-clock-claim")
    try:
        a, b = await two[0](gateway.address)
        async with seating(own.redis_url, own.routes) as seats:
            game_id = await seats.start([a.player, b.player], per_move_s=0.5)

        async def over() -> bool:
            return bool((await a.get(game_id)).summary.status.over)

        await asyncio.sleep(1.5)  # the deadline passed 1 s ago; every sweep failed meanwhile
        assert not await over()
        assert len(lines(gateway, "clock sweeper: a pass failed")) == 1  # once, not every 0.25 s
        assert not lines(gateway, "redis unavailable")  # a missing script is a bug, not an outage

        repair(copy, "clocks/claim")
        await until(over, 5.0, "the timeout once the sweeper could claim again")
        await until(
            lambda: _true(bool(lines(gateway, "clock sweeper: passes succeed again"))), 3.0, "the recovery logged"
        )
        assert len(lines(gateway, "clock sweeper: passes succeed again")) == 1
    finally:
        gateway.stop()


async def test_the_rating_sweeper_without_its_script_applies_the_game_once_repaired(
    own: Own, tmp_path: Path, two: tuple[Callable[[str], Awaitable[list[Client]]], list[Client]]
) -> None:
    copy = packages_without(tmp_path, ["ratings/apply"])
    gateway = broken(own, copy, "gateway-without-ratings-apply", TAFEL_RATING_SWEEP_S="0.2")
    try:
        a, b = await two[0](gateway.address)
        async with seating(own.redis_url, own.routes) as seats:
            game_id = await seats.directory.start_game(
                game="connect4",
                options=games_pb2.GameOptions(),
                players=[a.player, b.player],
                per_move_s=60.0,
                rated=True,
                origin="test",
            )
        version = (await a.get(game_id)).summary.status.version
        for turn in range(7):  # a wins in column 0
            mover, column = (a, 0) if turn % 2 == 0 else (b, 1)
            started = time.monotonic()
            answer = await mover.move(game_id, version, column)
            assert time.monotonic() - started < 2  # the game's end does not wait on its rating
            version = answer.status.version
        assert answer.status.over

        ratings = tournaments_pb2_grpc.RatingServiceStub(a.channel)

        async def rated() -> bool:
            got = await ratings.GetRatings(tournaments_pb2.GetRatingsRequest(), metadata=a.md, timeout=5)
            return any(r.games >= 1 for r in got.ratings)

        await asyncio.sleep(1.0)  # sweeps every 0.2 s, each failing
        assert not await rated()
        assert len(lines(gateway, "a game-end hook failed")) == 1
        assert len(lines(gateway, "rating sweeper: a pass failed")) == 1
        assert not lines(gateway, "redis unavailable")

        repair(copy, "ratings/apply")
        await until(rated, 8.0, "the rating, applied by the sweeper once its script is back")
        await until(
            lambda: _true(bool(lines(gateway, "rating sweeper: passes succeed again"))), 3.0, "the recovery logged"
        )
        assert len(lines(gateway, "rating sweeper: passes succeed again")) == 1
    finally:
        gateway.stop()


async def test_the_tournament_runner_without_its_save_starts_and_pairs_once_repaired(
    own: Own, tmp_path: Path, two: tuple[Callable[[str], Awaitable[list[Client]]], list[Client]]
) -> None:
    copy = packages_without(tmp_path, ["tournaments/save"])
    gateway = broken(own, copy, "gateway-without-tournament-save", TAFEL_TOURNAMENT_SWEEP_S="0.2")
    try:
        a, b = await two[0](gateway.address)
        stubs = [tournaments_pb2_grpc.TournamentServiceStub(c.channel) for c in (a, b)]
        create = tournaments_pb2.CreateTournamentRequest(
            request_id=f"bg{time.time_ns()}",
            name="broken cup",
            game="connect4",
            format=tournaments_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN,
        )
        create.time_control.per_move.FromSeconds(30)
        tid = (await stubs[0].CreateTournament(create, metadata=a.md, timeout=5)).tournament.tournament_id
        for stub, client in zip(stubs, (a, b), strict=True):
            await stub.JoinTournament(
                tournaments_pb2.JoinTournamentRequest(tournament_id=tid), metadata=client.md, timeout=5
            )

        started = time.monotonic()
        answer = await stubs[0].StartTournament(
            tournaments_pb2.StartTournamentRequest(tournament_id=tid), metadata=a.md, timeout=10
        )
        assert time.monotonic() - started < 3  # started; its pairing is the sweep's to retry
        assert answer.tournament.state == tournaments_pb2.TOURNAMENT_STATE_RUNNING

        async def paired() -> bool:
            try:
                got = await stubs[0].GetRound(
                    tournaments_pb2.GetRoundRequest(tournament_id=tid), metadata=a.md, timeout=5
                )
            except grpc.aio.AioRpcError as error:
                assert error.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION)
                return False  # no round yet
            return bool(got.round.games)

        await asyncio.sleep(1.0)  # sweeps every 0.2 s, each failing to save round 1
        assert not await paired()
        assert len(lines(gateway, "tournament sweeper: a pass failed")) == 1  # once, not per pass
        assert not lines(gateway, "redis unavailable")

        repair(copy, "tournaments/save")
        await until(paired, 8.0, "round 1, paired by the sweep once its script is back")
        await until(
            lambda: _true(bool(lines(gateway, "tournament sweeper: passes succeed again"))), 3.0, "the recovery logged"
        )
        assert len(lines(gateway, "tournament sweeper: passes succeed again")) == 1
    finally:
        gateway.stop()


async def test_bot_requests_fail_with_a_status_and_a_broken_queue_ends_the_pools_stream(
    own: Own, tmp_path: Path, two: tuple[Callable[[str], Awaitable[list[Client]]], list[Client]]
) -> None:
    copy = packages_without(tmp_path, ["bots/request"])
    gateway = broken(own, copy, "gateway-without-bot-request")
    redis = Redis.from_url(own.redis_url)
    try:
        host, pool = await two[0](gateway.address)
        lobby = play_pb2_grpc.LobbyServiceStub(host.channel)
        room = (await lobby.CreateRoom(play_pb2.CreateRoomRequest(game="connect4"), metadata=host.md, timeout=5)).room
        bots = bots_pb2_grpc.BotServiceStub(host.channel)
        started = time.monotonic()
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await bots.RequestBot(
                bots_pb2.RequestBotRequest(room_code=room.code, level=1), metadata=host.md, timeout=10
            )
        assert failed.value.code() == grpc.StatusCode.INTERNAL
        assert time.monotonic() - started < 3
        assert ".lua" not in (failed.value.details() or "") and "Error" not in (failed.value.details() or "")

        # A queue that is not a list: every BLPOP fails alike. The pool's stream ends INTERNAL
        # (it spun unseen, retrying, while the pool waited for requests that could never come).
        await redis.set(bot_queue_key("connect4"), "not a list")
        serving = bots_pb2_grpc.BotServiceStub(pool.channel).ServeBotRequests(
            bots_pb2.ServeBotRequestsRequest(games=["connect4"]), metadata=pool.md, timeout=15
        )
        started = time.monotonic()
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            async for _ in serving:
                pass
        assert ended.value.code() == grpc.StatusCode.INTERNAL
        assert time.monotonic() - started < 3
        assert "WRONGTYPE" not in (ended.value.details() or "")
        await asyncio.sleep(0.3)
        assert len([x for x in lines(gateway, "call failed")]) == 2  # each failure once
    finally:
        await redis.delete(bot_queue_key("connect4"))
        await redis.aclose()
        gateway.stop()


async def test_the_watch_hub_survives_its_connection_killed_and_a_watch_without_redis_ends(
    own: Own, two: tuple[Callable[[str], Awaitable[list[Client]]], list[Client]]
) -> None:
    gateway = spawn_gateway(own.redis_url, own.routes, name="gateway-watch-hub", **FAST)
    redis = Redis.from_url(own.redis_url)
    try:
        a, b = await two[0](gateway.address)
        async with seating(own.redis_url, own.routes) as seats:
            game_id = await seats.start([a.player, b.player], per_move_s=60.0)
        watch = a.games.WatchGame(play_pb2.WatchGameRequest(game_id=game_id), metadata=a.md, timeout=30)
        moves: list[int] = []

        async def follow() -> None:
            async for update in watch:
                if update.event.WhichOneof("kind") == "connect4":
                    moves.append(update.event.version)

        following = asyncio.create_task(follow())
        version = (await a.get(game_id)).summary.status.version
        version = (await a.move(game_id, version, 0)).status.version
        await until(lambda: _true(len(moves) == 1), 5.0, "the first move, live")

        # Redis drops the hub's pub/sub connection: it comes back by itself, and the watch goes on.
        assert await redis.client_kill_filter(_type="pubsub") >= 1
        version = (await b.move(game_id, version, 1)).status.version
        await until(lambda: _true(len(moves) == 2), 5.0, "the move after the pub/sub connection was killed")
        assert len(pubsub_lines(gateway, "redis unavailable")) == 1  # the lost connection, once
        await until(lambda: _true(bool(pubsub_lines(gateway, "reachable again"))), 3.0, "the reconnection logged")
        assert len(pubsub_lines(gateway, "reachable again")) == 1

        # Redis gone: a new watch ends UNAVAILABLE within its deadline, it does not wait for Redis.
        await redis.aclose()
        await asyncio.to_thread(_stop_redis, own.port)
        started = time.monotonic()
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            async for _ in b.games.WatchGame(play_pb2.WatchGameRequest(game_id=game_id), metadata=b.md, timeout=15):
                pass
        assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
        assert time.monotonic() - started < 8
        following.cancel()
        await asyncio.sleep(0.5)
        # Once more as this outage began, not once per reconnection attempt.
        assert len(pubsub_lines(gateway, "redis unavailable")) == 2
    finally:
        own.redis = start_redis(own.port)  # for a test that comes after
        gateway.stop()


def pubsub_lines(proc: Proc, text: str) -> list[str]:
    return [line for line in lines(proc, text) if "pub/sub" in line]


def _true(value: bool) -> Awaitable[bool]:
    done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    done.set_result(value)
    return done


def _stop_redis(port: int) -> None:
    import redis as sync_redis

    with sync_redis.Redis(port=port) as client:
        try:
            client.shutdown(nosave=True)
        except sync_redis.exceptions.ConnectionError:
            pass  # (it closes the connection as it goes)
