"""Running bots through the public API: one bot via matchmaking (`tafel bot`), or a pool that
answers people's requests for a bot opponent (`tafel bot-pool`, started by `make run`)."""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

import grpc
from google.protobuf.message import Message

from tafel.autoplay import Strategy, play_game
from tafel.client import TafelClient
from tafel.errors import TafelError, from_rpc_error
from tafel.games.v1 import games_pb2
from tafel.play.v1 import bots_pb2, bots_pb2_grpc

log = logging.getLogger("tafel.bots")


def strategy_for(game: str, level: int, *, seed: int | None = None) -> Strategy:
    """The move chooser of a bot of `level` for `game`, fed our seat's view. One bot instance
    per game played: its search tables are not shared between games."""
    from tafel.bots import make_bot

    bot = make_bot(game, level, seed=seed)
    return lambda view: bot.choose(getattr(view, game))


def random_strategy(game: str, rng: random.Random | None = None) -> Strategy:
    """Random legal moves from the view alone (the load generator's players)."""
    chooser = rng or random.Random()

    def choose(view: games_pb2.GameView) -> Message:
        if view.WhichOneof("game") == "connect4":
            from tafel.connect4.v1 import connect4_pb2

            return connect4_pb2.Move(column=chooser.choice(list(view.connect4.legal_columns)))
        return strategy_for(game, 1)(view)

    return choose


async def request_bot(client: TafelClient, room_code: str, level: int) -> str:
    stub = bots_pb2_grpc.BotServiceStub(client.channel)
    try:
        response = await stub.RequestBot(
            bots_pb2.RequestBotRequest(room_code=room_code, level=level), metadata=client.metadata()
        )
    except grpc.aio.AioRpcError as error:
        raise from_rpc_error(error) from None
    return str(response.request_id)


async def run_bot(client: TafelClient, game: str, level: int, games: int) -> int:
    played = 0
    while games == 0 or played < games:
        match = await client.find_match(game)
        outcome = await play_game(client, match.game_id, match.seat, strategy_for(game, level), think_in_thread=True)
        played += 1
        verdict = "draw" if outcome.draw else ("won" if match.seat in outcome.winners else "lost")
        print(f"game {match.game_id}: {verdict} ({outcome.reason})", flush=True)
    return 0


async def serve_request(client: TafelClient, request: bots_pb2.BotRequest) -> None:
    """Join the requester's room, wait for the game, play it with the requested level."""
    room = await client.join_room(request.room_code)
    if not room.game_id:
        room = await client.wait_room_started(room.code)
    state = await client.get_game(room.game_id)
    if not state.HasField("seat"):
        raise TafelError("NOT_SEATED", f"the bot has no seat in {room.game_id}")
    # Level 3 thinks for up to a second: in a thread, so the pool's other games keep moving.
    await play_game(client, room.game_id, state.seat, strategy_for(request.game, request.level), think_in_thread=True)


async def run_pool(client: TafelClient, games: list[str], *, ready: asyncio.Event | None = None) -> int:
    """Serve bot requests until cancelled; each request is played in its own task."""
    stub = bots_pb2_grpc.BotServiceStub(client.channel)
    tasks: set[asyncio.Task[Any]] = set()
    failures = 0
    while True:
        call = stub.ServeBotRequests(bots_pb2.ServeBotRequestsRequest(games=games), metadata=client.metadata())
        try:
            if ready is not None:
                ready.set()
            if failures == 0:
                print(f"READY bot-pool {','.join(games)}", flush=True)
            async for item in call:
                failures = 0
                task = asyncio.get_running_loop().create_task(_serve_logged(client, item.request))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE or failures > 30:
                raise from_rpc_error(error) from None
            failures += 1
            await asyncio.sleep(min(0.1 * 2**failures, 5.0))


async def _serve_logged(client: TafelClient, request: bots_pb2.BotRequest) -> None:
    try:
        await serve_request(client, request)
    except Exception:  # one failed game never stops the pool
        log.exception("bot request failed", extra={"room": request.room_code})
