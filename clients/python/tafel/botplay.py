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
from tafel.by_game import REGISTRY
from tafel.client import TafelClient
from tafel.errors import TafelError, from_rpc_error
from tafel.games.v1 import games_pb2
from tafel.play.v1 import bots_pb2, play_pb2
from tafel.retry import STREAM_RETRYABLE, Attempts, Backoff

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

    module = REGISTRY.get(game)
    if module is None or module.random_move is None:
        return strategy_for(game, 1)
    random_move = module.random_move

    def choose(view: games_pb2.GameView) -> Message:
        return random_move(getattr(view, game), chooser)

    return choose


def say_connection(up: bool) -> None:
    """What a bot's terminal says when its stream is lost and back (words, never gRPC's text)."""
    if up:
        print("Connected to the game server again.", flush=True)
    else:
        print("Lost the connection to the game server. Reconnecting… (Ctrl-C stops the bot)", flush=True)


async def run_bot(client: TafelClient, game: str, level: int, games: int, *, per_move_s: float | None = None) -> int:
    played = 0
    # A bot is left running: it outlasts a platform restart of minutes (Ctrl-C stops it).
    client.patient = True
    # One play stream for every game: each search starts its game's watch (the view comes with
    # the match), so a game costs no call, read or watch request of its own.
    async with client.play_stream(on_connection=say_connection) as stream:
        while games == 0 or played < games:
            match, watching = await stream.find_and_watch(game, per_move_s=per_move_s)
            outcome = await play_game(
                client,
                match.game_id,
                match.seat,
                strategy_for(game, level),
                think_in_thread=True,
                stream=stream,
                watching=watching,
            )
            played += 1
            verdict = "draw" if outcome.draw else ("won" if match.seat in outcome.winners else "lost")
            print(f"game {match.game_id}: {verdict} ({outcome.reason})", flush=True)
    return 0


async def serve_request(client: TafelClient, request: bots_pb2.BotRequest) -> None:
    """Join the requester's room as a guest of its own, wait for the game, play it with the
    requested level, then sign that guest out. Its own session per request: two or more bots asked
    for one table (Colour Square seats up to six) take a seat each, where the pool's one account
    would take one; signed out after its game, no session outlives the seat it was made for."""
    bot = TafelClient(client.channel)  # the pool's connection, another player's session
    bot.patient = True  # its game outlasts a platform restart, as the pool does
    await bot.sign_in_as_guest()
    try:
        await _play_request(bot, request)
    finally:
        try:
            await asyncio.shield(bot.sign_out())
        except (TafelError, grpc.aio.AioRpcError):  # the token expires by itself
            log.warning("could not sign a bot's guest out", extra={"room": request.room_code})


async def _play_request(bot: TafelClient, request: bots_pb2.BotRequest) -> None:
    # The join names the request it serves, so the gateway settles it (no sweeper sends a second
    # bot once this one is seated).
    def join(message: Any, *, metadata: Any, timeout: float) -> Any:
        served = (*metadata, ("tafel-bot-request", request.request_id))
        return bot.lobby.JoinRoom(message, metadata=served, timeout=timeout)

    room = (await bot._call(join, play_pb2.JoinRoomRequest(code=request.room_code))).room
    if not room.game_id:
        room = await bot.wait_room_started(room.code)
    state = await bot.get_game(room.game_id)
    if not state.HasField("seat"):
        raise TafelError("NOT_SEATED", f"the bot has no seat in {room.game_id}")
    # Level 3 thinks for up to a second: in a thread, so the pool's other games keep moving.
    await play_game(bot, room.game_id, state.seat, strategy_for(request.game, request.level), think_in_thread=True)


async def run_pool(client: TafelClient, games: list[str], *, ready: asyncio.Event | None = None) -> int:
    """Serve bot requests until cancelled; each request is played in its own task. `games` empty:
    every game the gateway offers."""
    tasks: set[asyncio.Task[Any]] = set()
    # The pool outlasts a platform restart however long it takes: it keeps trying, 5 s apart at
    # most, until it is stopped.
    attempts = Attempts(None, Backoff(first_s=0.2, cap_s=5.0))
    while True:
        call = client.bots.ServeBotRequests(bots_pb2.ServeBotRequestsRequest(games=games), metadata=client.metadata())
        try:
            if ready is not None:
                ready.set()
            if attempts.failures == 0:
                print(f"READY bot-pool {','.join(games) or 'all'}", flush=True)
            async for item in call:
                attempts.reset()
                task = asyncio.get_running_loop().create_task(_serve_logged(client, item.request))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except grpc.aio.AioRpcError as error:
            if error.code() not in STREAM_RETRYABLE or attempts.exhausted:
                raise from_rpc_error(error) from None
            await attempts.failed()


async def _serve_logged(client: TafelClient, request: bots_pb2.BotRequest) -> None:
    try:
        await serve_request(client, request)
    except Exception:  # one failed game never stops the pool
        log.exception("bot request failed", extra={"room": request.room_code})
