"""Play a whole game with a strategy, through the public API only (the bots' and load
generator's loop): watch the game on the play stream, and whenever the game waits on our seat,
ask the strategy for a move and submit it with the version it was made against."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from google.protobuf.message import Message

from tafel.client import TafelClient
from tafel.errors import IllegalMove, TafelError, Unavailable, VersionConflict
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2
from tafel.play_stream import PlayStream

# Given our seat's current view, return a move message (e.g. connect4_pb2.Move).
Strategy = Callable[[games_pb2.GameView], Message]
# How long a player waits before sending a move refused UNAVAILABLE again.
UNAVAILABLE_PAUSE_S = 0.5


async def play_game(
    client: TafelClient,
    game_id: str,
    seat: int,
    strategy: Strategy,
    *,
    think_s: float = 0.0,
    timeout_s: float = 600.0,
    think_in_thread: bool = False,
    on_move: Callable[[play_pb2.SubmitMoveResponse], object] | None = None,
    stream: PlayStream | None = None,
    watching: play_pb2.GetGameResponse | None = None,
) -> games_pb2.Outcome:
    """Play `seat` of `game_id` to the end; returns the outcome. `think_in_thread` runs the
    strategy off the event loop (for searching bots sharing a process with other games).
    `stream`: a play stream the caller keeps open across games (else one is opened for this
    game); `watching`: the game's watch already started on it (PlayStream.find_and_watch), so
    neither a read nor a watch request comes first."""
    async with game_on_stream(client, game_id, stream) as on:
        game = (client, game_id, seat, strategy, think_s, timeout_s, think_in_thread, on_move, watching)
        outcome = await _play(on.stream, *game)
        on.over = True
        return outcome


@dataclass(slots=True)
class GameOnStream:
    stream: PlayStream
    over: bool = False  # set by the player when the game ended: its watch ended with it


@contextlib.asynccontextmanager
async def game_on_stream(client: TafelClient, game_id: str, stream: PlayStream | None) -> AsyncIterator[GameOnStream]:
    """A game played on `stream` (one the caller keeps open across games), else on a stream of its
    own, closed after. A watch on the caller's stream that the game left before its end (an error,
    a cancellation, the player's `over` not set) is stopped, so the stream can go on to the next."""
    if stream is None:
        async with client.play_stream() as own:
            yield GameOnStream(own)
        return
    on = GameOnStream(stream)
    try:
        yield on
    finally:
        if not on.over:
            with contextlib.suppress(TafelError):
                await stream.stop_watching(game_id)


async def _play(
    stream: PlayStream,
    client: TafelClient,
    game_id: str,
    seat: int,
    strategy: Strategy,
    think_s: float,
    timeout_s: float,
    think_in_thread: bool,
    on_move: Callable[[play_pb2.SubmitMoveResponse], object] | None,
    watching: play_pb2.GetGameResponse | None,
) -> games_pb2.Outcome:
    if watching is None:
        await client.wait_for_game(game_id)
        watching = await stream.watch(game_id)
    status = watching.summary.status
    view = watching.view
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not status.over:
        if seat in status.to_act:
            if think_s:
                await asyncio.sleep(think_s)
            move = await asyncio.to_thread(strategy, view) if think_in_thread else strategy(view)
            try:
                answer = await stream.submit_move(game_id, move, expected_version=status.version)
                status = answer.status
                if on_move is not None:
                    on_move(answer)
            except (VersionConflict, IllegalMove):
                # The game moved on (a timeout, a simultaneous round resolving): re-read it.
                fresh = await client.get_game(game_id)
                status, view = fresh.summary.status, fresh.view
                continue
            except Unavailable:
                # Refused for now (e.g. STORE_UNAVAILABLE while the store restarts): the same move
                # again shortly. The expected version guards it: had the first one been applied after
                # all, this one is a VersionConflict and the game is read again.
                if loop.time() + UNAVAILABLE_PAUSE_S > deadline:
                    raise
                await asyncio.sleep(UNAVAILABLE_PAUSE_S)
                continue
            if not status.over and seat in status.to_act:
                view = (await client.get_game(game_id)).view
            continue
        delivery = await stream.next_event(timeout=max(0.1, deadline - loop.time()))
        if delivery.game_id != game_id:
            continue
        if delivery.HasField("status"):
            if delivery.status.version >= status.version:
                status = delivery.status
        elif delivery.event.version > status.version or delivery.event.WhichOneof("kind") == "ended":
            status = (await client.get_game(game_id)).summary.status  # a gateway without statuses
        if not status.over and seat in status.to_act:
            fresh = await client.get_game(game_id)
            status, view = fresh.summary.status, fresh.view
    return status.outcome
