"""End-to-end helpers: a platform of real processes on its own Redis database, bots that play random
legal moves through the public API only, and an organiser/watcher client."""

from __future__ import annotations

import asyncio
import contextlib
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from tafel.games.v1 import games_pb2
from tafel.play.v1 import notices_pb2_grpc, play_pb2, play_pb2_grpc, tournaments_pb2, tournaments_pb2_grpc

from tests.gateway.harness import Proc, spawn, spawn_gateway
from tools.redis_server import free_port

EXTRA_ENV = {
    "TAFEL_TOURNAMENT_SWEEP_S": "0.3",
    "TAFEL_RATING_SWEEP_S": "0.5",
    "TAFEL_MIN_PER_MOVE_S": "0.3",
}


@dataclass
class Platform:
    """Rules services (fixed ports, so they can be restarted in place) and gateways."""

    redis_url: str
    games: tuple[str, ...]
    rules: dict[str, Proc] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    gateways: list[Proc] = field(default_factory=list)

    def routes(self) -> dict[str, str]:
        return {game: f"127.0.0.1:{self.ports[game]}" for game in self.games}

    def start_rules(self) -> None:
        for game in self.games:
            port = self.ports.setdefault(game, free_port())
            self.rules[game] = spawn(
                f"{game}-rules", f"services.{game}", {"REDIS_URL": self.redis_url, "TAFEL_PORT": str(port)}
            )

    def start_gateways(self, count: int = 2) -> None:
        for index in range(count):
            self.gateways.append(
                spawn_gateway(self.redis_url, self.routes(), name=f"tour-gateway-{index}", **EXTRA_ENV)
            )

    def addresses(self) -> list[str]:
        return [g.address for g in self.gateways]

    def kill_all(self) -> None:
        for proc in (*self.gateways, *self.rules.values()):
            proc.kill()
        self.gateways.clear()
        self.rules.clear()

    def stop(self) -> None:
        for proc in (*self.gateways, *self.rules.values()):
            proc.stop()


def rid() -> str:
    return uuid.uuid4().hex[:16]


class Client:
    """A guest on one gateway; reconnects to another address when its gateway goes away."""

    def __init__(self, addresses: Callable[[], list[str]], index: int) -> None:
        self.addresses = addresses
        self.index = index
        self.session: play_pb2.Session | None = None
        self.channel: grpc.aio.Channel | None = None
        self.address = ""

    def _connect(self) -> None:
        options = self.addresses()
        # While every gateway is down, keep dialling the old address (calls fail UNAVAILABLE, retried).
        address = options[self.index % len(options)] if options else self.address
        if address != self.address or self.channel is None:
            self.address = address
            self.channel = grpc.aio.insecure_channel(address)
            self.accounts = play_pb2_grpc.AccountServiceStub(self.channel)
            self.games = play_pb2_grpc.GameServiceStub(self.channel)
            self.tournaments = tournaments_pb2_grpc.TournamentServiceStub(self.channel)
            self.ratings = tournaments_pb2_grpc.RatingServiceStub(self.channel)
            self.notices = notices_pb2_grpc.NotificationServiceStub(self.channel)

    async def sign_in(self) -> Client:
        self._connect()
        self.session = (await self.accounts.SignInAsGuest(play_pb2.SignInAsGuestRequest(), timeout=10)).session
        return self

    @property
    def player(self) -> play_pb2.Player:
        assert self.session is not None
        return self.session.player

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        assert self.session is not None
        return (("authorization", f"Bearer {self.session.token}"),)

    async def call(self, stub: str, method: str, request: Any, attempts: int = 60) -> Any:
        """A unary call that rides out a gateway restart (UNAVAILABLE: reconnect and retry)."""
        for attempt in range(attempts):
            self._connect()
            try:
                return await getattr(getattr(self, stub), method)(request, metadata=self.md, timeout=10)
            except grpc.aio.AioRpcError as error:
                if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    raise
                if attempt == attempts - 1:
                    raise
                if self.channel is not None:
                    with contextlib.suppress(Exception):
                        await self.channel.close()
                self.channel = None
                await asyncio.sleep(0.25)
        raise AssertionError("unreachable")

    async def close(self) -> None:
        if self.channel is not None:
            await self.channel.close()


def legal_move(view: games_pb2.GameView, rng: random.Random, bot: Any = None) -> games_pb2.GameMove | None:
    kind = view.WhichOneof("game")
    if kind == "connect4":
        columns = list(view.connect4.legal_columns)
        if not columns:
            return None
        move = games_pb2.GameMove()
        move.connect4.column = rng.choice(columns)
        return move
    if kind == "plus4":
        moves = list(view.plus4.legal_moves)
        if not moves:
            return None
        move = games_pb2.GameMove()
        move.plus4.CopyFrom(rng.choice(moves))
        return move
    if kind == "coloursquare":
        assert bot is not None
        try:
            move = games_pb2.GameMove()
            move.coloursquare.CopyFrom(bot.choose(view.coloursquare))
            return move
        except ValueError:
            return None
    raise AssertionError(f"no bot for {kind}")


class Bot:
    """Plays random legal moves in every game it sits in (polling its games), unless idle."""

    def __init__(self, client: Client, seed: int, *, idle: bool = False, think_s: float = 0.0) -> None:
        self.client = client
        self.rng = random.Random(seed)
        self.idle = idle
        self.think_s = think_s
        self.moves = 0
        self.cs_bot: Any = None

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self._tick()
            except grpc.aio.AioRpcError as error:
                if error.code() not in (
                    grpc.StatusCode.ABORTED,
                    grpc.StatusCode.FAILED_PRECONDITION,
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    grpc.StatusCode.NOT_FOUND,
                ):
                    raise
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.05)

    async def _tick(self) -> None:
        if self.idle:
            return
        mine = await self.client.call("games", "ListMyGames", play_pb2.ListMyGamesRequest(page_size=20))
        me = self.client.player.player_id
        for summary in mine.games:
            if summary.status.over:
                continue
            seats = [p.seat for p in summary.players if p.player.player_id == me]
            if not seats or seats[0] not in summary.status.to_act:
                continue
            got = await self.client.call("games", "GetGame", play_pb2.GetGameRequest(game_id=summary.game_id))
            if got.summary.status.over or seats[0] not in got.summary.status.to_act:
                continue
            if got.view.WhichOneof("game") == "coloursquare" and self.cs_bot is None:
                from tafel.bots import make_bot

                self.cs_bot = make_bot("coloursquare", 1, seed=self.rng.randrange(1 << 30))
            move = legal_move(got.view, self.rng, self.cs_bot)
            if move is None:
                continue
            if self.think_s:
                await asyncio.sleep(self.think_s)
            await self.client.call(
                "games",
                "SubmitMove",
                play_pb2.SubmitMoveRequest(
                    game_id=summary.game_id,
                    expected_version=got.summary.status.version,
                    request_id=rid(),
                    move=move,
                ),
            )
            self.moves += 1


async def watch_until_over(client: Client, tid: str, events: list[tournaments_pb2.TournamentEvent]) -> None:
    """Collect a tournament's events (resuming across gateway restarts) until it ends."""
    after = ""
    while True:
        client._connect()
        try:
            call = client.tournaments.WatchTournament(
                tournaments_pb2.WatchTournamentRequest(tournament_id=tid, after_event_id=after), metadata=client.md
            )
            async for response in call:
                events.append(response.event)
                after = response.event.event_id
                if response.event.WhichOneof("kind") in ("finished", "cancelled"):
                    return
            return
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            client.channel = None
            await asyncio.sleep(0.25)
