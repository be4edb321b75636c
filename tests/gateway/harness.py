"""Real processes for the gateway tests: rules services and gateways started the way `make run`
starts them (tools/platform.py), clients that talk only through the public API, and a
GameDirectory in the test process to seat players directly."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from redis.asyncio import Redis
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2, play_pb2_grpc

from gateway.clocks import Clocks
from gateway.games import GameDirectory
from gateway.rules import RulesRouter
from kit.errors import reason_of
from kit.redis.client import redis_client
from kit.redis.game_reads import GameReads
from kit.redis.layer import RedisLayer
from tests.keyspace import with_db as other_db  # noqa: F401  (the gateway tests import it from here)
from tools.platform import ROOT, watch_line
from tools.redis_server import free_port

SECRET = "tests-gateway-secret-0123456789"
GATEWAY_ENV = {
    "TAFEL_TOKEN_SECRET": SECRET,
    "TAFEL_CLOCK_MAX_WAIT_S": "0.25",
    "TAFEL_MIN_PER_MOVE_S": "0.5",
    "TAFEL_LOG_LEVEL": "WARNING",
    "TAFEL_GRACE_S": "1",
}


@dataclass
class Proc:
    name: str
    process: subprocess.Popen[str]
    address: str
    output: list[str] = field(default_factory=list)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self, timeout_s: float = 10.0) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.kill()


def spawn(
    name: str, module: str, env: dict[str, str], timeout_s: float = 30.0, python_args: Sequence[str] = ()
) -> Proc:
    """`python -m <module>` with the env `make run` gives it; returns once it prints LISTENING."""
    full = dict(os.environ)
    full.update(PYTHONUNBUFFERED="1", TAFEL_HOST="127.0.0.1")
    full.update(env)  # may name another loopback address (TAFEL_HOST=127.0.0.2)
    full.setdefault("TAFEL_PORT", str(free_port()))
    process = subprocess.Popen(
        [sys.executable, *python_args, "-m", module], cwd=ROOT, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    proc = Proc(name, process, "")
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"{name} exited with {process.wait()}: {proc.output[-20:]}")
        proc.output.append(line.rstrip())
        watch_line(name, line)
        if line.startswith("LISTENING "):
            proc.address = line.split()[-1]
            break
    else:
        process.kill()
        raise RuntimeError(f"{name} did not start within {timeout_s}s")

    def drain() -> None:
        assert process.stdout is not None
        for rest in process.stdout:
            watch_line(name, rest)
            if len(proc.output) < 2000:
                proc.output.append(rest.rstrip())

    threading.Thread(target=drain, daemon=True).start()
    return proc


def spawn_rules(redis_url: str, game: str = "connect4") -> Proc:
    return spawn(f"{game}-rules", f"services.{game}", {"REDIS_URL": redis_url, "TAFEL_PORT": str(free_port())})


def spawn_gateway(
    redis_url: str, rules: dict[str, str], name: str = "gateway", python_args: Sequence[str] = (), **env: str
) -> Proc:
    routes = {f"TAFEL_RULES_{game.upper()}": address for game, address in rules.items()}
    from kit.catalogue import GAMES

    for game in GAMES:
        routes.setdefault(f"TAFEL_RULES_{game.upper()}", "off")
    return spawn(name, "gateway", {"REDIS_URL": redis_url, **GATEWAY_ENV, **routes, **env}, python_args=python_args)


def new_id(prefix: str = "r") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def c4_move(column: int) -> games_pb2.GameMove:
    return games_pb2.GameMove(connect4=connect4_pb2.Move(column=column))


class Client:
    """One connection to one gateway, signed in as one player."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.channel = grpc.aio.insecure_channel(address)
        self.accounts = play_pb2_grpc.AccountServiceStub(self.channel)
        self.games = play_pb2_grpc.GameServiceStub(self.channel)
        self.session: play_pb2.Session | None = None

    @property
    def player(self) -> play_pb2.Player:
        assert self.session is not None
        return self.session.player

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        assert self.session is not None
        return (("authorization", f"Bearer {self.session.token}"),)

    async def guest(self) -> Client:
        self.session = (await self.accounts.SignInAsGuest(play_pb2.SignInAsGuestRequest(), timeout=10)).session
        return self

    async def move(
        self, game_id: str, version: int, column: int, request_id: str | None = None, **extra: Any
    ) -> play_pb2.SubmitMoveResponse:
        request = play_pb2.SubmitMoveRequest(
            game_id=game_id, expected_version=version, request_id=request_id or new_id(), move=c4_move(column), **extra
        )
        response: play_pb2.SubmitMoveResponse = await self.games.SubmitMove(request, metadata=self.md, timeout=10)
        return response

    async def get(self, game_id: str) -> play_pb2.GetGameResponse:
        response: play_pb2.GetGameResponse = await self.games.GetGame(
            play_pb2.GetGameRequest(game_id=game_id), metadata=self.md, timeout=10
        )
        return response

    async def close(self) -> None:
        await self.channel.close()


async def failure(call: Any, timeout_s: float = 30.0) -> tuple[grpc.StatusCode, str | None]:
    try:
        # Bounded: an answer that never comes fails the test here, by name, instead of hanging it
        # until the suite's timeout (a stream read has no deadline of its own).
        await asyncio.wait_for(call, timeout_s)
    except grpc.aio.AioRpcError as error:
        return error.code(), reason_of(error)
    except TimeoutError:
        raise AssertionError(f"no answer (neither success nor refusal) within {timeout_s} s") from None
    raise AssertionError("the call succeeded but was expected to fail")


class PlayStream:
    """A Play stream with its responses sorted into answers (by correlation id) and events."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.call = client.games.Play(metadata=client.md)
        self.answers: dict[int, play_pb2.PlayResponse] = {}
        self.events: list[play_pb2.GameEventDelivery] = []
        self.messages: list[play_pb2.PlayResponse] = []  # as they came, batches unopened
        self.responses: list[play_pb2.PlayResponse] = []  # every response, batches opened
        self._next = 0
        self._changed = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self.error: grpc.aio.AioRpcError | None = None
        self.ended = False
        self._writing = asyncio.Lock()  # a grpc.aio stream takes one write at a time

    async def _read(self) -> None:
        try:
            async for message in self.call:
                self.messages.append(message)
                batch = message.batch.responses if message.WhichOneof("kind") == "batch" else (message,)
                for response in batch:
                    self.responses.append(response)
                    if response.WhichOneof("kind") == "event":
                        self.events.append(response.event)
                    else:
                        self.answers[response.correlation_id] = response
                self._changed.set()
        except grpc.aio.AioRpcError as error:
            self.error = error
        finally:
            self.ended = True
            self._changed.set()

    async def send(self, **action: Any) -> int:
        self._next += 1
        correlation = self._next
        async with self._writing:
            # Bounded like every wait here: a write the gateway never takes fails, not hangs.
            await asyncio.wait_for(self.call.write(play_pb2.PlayRequest(correlation_id=correlation, **action)), 10)
        return correlation

    async def wait_for(self, predicate: Any, timeout_s: float = 10.0) -> None:
        deadline = asyncio.get_running_loop().time() + timeout_s
        while not predicate():
            if self.ended:
                raise AssertionError(f"the play stream ended: {self.error}")
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError("timed out waiting on the play stream")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                pass

    async def request(self, timeout_s: float = 10.0, **action: Any) -> play_pb2.PlayResponse:
        correlation = await self.send(**action)
        await self.wait_for(lambda: correlation in self.answers, timeout_s)
        return self.answers[correlation]

    async def close(self) -> None:
        self.call.cancel()
        self._reader.cancel()


@dataclass
class Seating:
    """A GameDirectory in the test process (its own router and clock writer) to start games."""

    redis: Redis
    router: RulesRouter
    directory: GameDirectory
    reads: GameReads

    async def start(
        self, players: Sequence[play_pb2.Player], per_move_s: float = 60.0, game: str = "connect4", **extra: Any
    ) -> str:
        return await self.directory.start_game(
            game=game,
            options=games_pb2.GameOptions(),
            players=players,
            per_move_s=per_move_s,
            rated=False,
            origin="test",
            **extra,
        )

    async def event_ids(self, game_id: str) -> list[str]:
        return [event_id for event_id, _ in await self.reads.read_events(game_id)]


@asynccontextmanager
async def seating(redis_url: str, rules: dict[str, str]) -> AsyncIterator[Seating]:
    redis = redis_client(redis_url)  # redis+cluster:// too (docs/cluster.md)
    layer = RedisLayer.around(redis)
    router = RulesRouter({game: (address,) for game, address in rules.items()})
    clocks = Clocks(layer, ttl_s=3600)
    directory = GameDirectory(layer, router, clocks, game_ttl_s=3600)
    try:
        yield Seating(redis, router, directory, GameReads(layer))
    finally:
        await router.close()
        await layer.close()
        await redis.aclose()
