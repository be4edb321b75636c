"""Scenario `games`: G concurrent games kept going through matchmaking; random legal moves."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass, field

import grpc
from tafel.autoplay import game_on_stream, play_game
from tafel.botplay import random_strategy
from tafel.client import TafelClient
from tafel.connect4.v1 import connect4_pb2
from tafel.errors import TafelError
from tafel.play.v1 import play_pb2
from tafel.play_stream import PlayStream

from tafel_loadgen.stats import Stats


@dataclass
class Shared:
    """State both players of a game share inside one process: when each version was submitted."""

    submitted: dict[tuple[str, int], float] = field(default_factory=dict)


async def connect4_fast(
    client: TafelClient,
    game_id: str,
    seat: int,
    stats: Stats,
    shared: Shared,
    rng: random.Random,
    think_s: float,
    stop_at: float,
    stream: PlayStream | None = None,
    watching: play_pb2.GetGameResponse | None = None,
) -> None:
    """Connect Four on the play stream with the board tracked from events (no reads per move).
    A player that keeps one `stream` open across games (as a busy client would) passes it in,
    and `watching` when its search started the watch (PlayStream.find_and_watch)."""
    async with game_on_stream(client, game_id, stream) as on:
        on.over = await _connect4_on(client, on.stream, game_id, seat, stats, shared, rng, think_s, stop_at, watching)


async def _connect4_on(
    client: TafelClient,
    stream: PlayStream,
    game_id: str,
    seat: int,
    stats: Stats,
    shared: Shared,
    rng: random.Random,
    think_s: float,
    stop_at: float,
    watching: play_pb2.GetGameResponse | None,
) -> bool:
    """Whether the game ended (else the run stopped first or a move failed)."""
    # One timer for the whole game (the opponent may stop with the run: 5 s past it, the game is
    # given up) rather than one per awaited event: a timer per wait was a visible share of the
    # load generator's CPU, which it shares with the servers.
    deadline = asyncio.get_running_loop().time() + (stop_at - time.monotonic()) + 5
    try:
        async with asyncio.timeout_at(deadline):
            return await _play_connect4(client, stream, game_id, seat, stats, shared, rng, think_s, stop_at, watching)
    except TimeoutError:
        if time.monotonic() <= stop_at:
            raise
        return False


async def _play_connect4(
    client: TafelClient,
    stream: PlayStream,
    game_id: str,
    seat: int,
    stats: Stats,
    shared: Shared,
    rng: random.Random,
    think_s: float,
    stop_at: float,
    watching: play_pb2.GetGameResponse | None,
) -> bool:
    if watching is None:
        watching = await stream.watch(game_id)
    view = watching.view.connect4
    heights = [len(column.seats) for column in view.board]
    rows = view.rows
    open_columns = [c for c, h in enumerate(heights) if h < rows]  # kept, not rebuilt each move
    status = watching.summary.status
    while not status.over:
        if seat in status.to_act:
            if time.monotonic() >= stop_at:
                return False  # the run is over: stop moving
            if think_s:
                await asyncio.sleep(think_s)
            column = rng.choice(open_columns)
            shared.submitted[(game_id, status.version + 1)] = time.perf_counter()
            try:
                answer = await stream.submit_move(
                    game_id, connect4_pb2.Move(column=column), expected_version=status.version
                )
            except TafelError as error:
                stats.errors[error.code.name] += 1
                return False
            stats.moves += 1
            heights[column] += 1
            if heights[column] == rows:
                open_columns.remove(column)
            status = answer.status
            continue
        # The stream delivers each event once and in order, none at or before the view it
        # started at (tafel/play_stream.py): only another game's leftovers are skipped here.
        delivery = await stream.next_event()
        if delivery.game_id != game_id:
            continue
        event = delivery.event
        kind = event.WhichOneof("kind")
        if kind == "connect4":
            dropped = event.connect4.disc_dropped
            if dropped.seat != seat:
                column = dropped.column
                heights[column] += 1
                if heights[column] == rows:
                    open_columns.remove(column)
                started = shared.submitted.pop((game_id, event.version), None)
                if started is not None:
                    stats.latencies.append(time.perf_counter() - started)
        if delivery.HasField("status"):
            if delivery.status.version >= status.version:
                status = delivery.status
        elif event.version > status.version or kind == "ended":
            status = (await client.get_game(game_id)).summary.status  # a gateway without statuses
    stats.games_finished += seat == 0
    return True


async def player(
    targets: list[str],
    game: str,
    stats: Stats,
    shared: Shared,
    stop_at: float,
    think_s: float,
    seed: int,
    seats: int = 2,
) -> None:
    rng = random.Random(seed)
    async with await TafelClient.connect(targets) as client, contextlib.AsyncExitStack() as stack:
        await client.sign_in_as_guest()
        # Connect Four players keep one play stream open across their games and find their
        # matches on it too (a busy client's shape: no new call per game).
        stream: PlayStream | None = None
        if game == "connect4":
            stream = await stack.enter_async_context(client.play_stream())
        while time.monotonic() < stop_at:
            queued = time.perf_counter()
            watching: play_pb2.GetGameResponse | None = None
            try:
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for runs the search in a task of
                # its own, one more per game.
                async with asyncio.timeout(max(1.0, stop_at - time.monotonic())):
                    if stream is not None:
                        # The search starts the game's watch: its first view comes with the match.
                        match, watching = await stream.find_and_watch(game, min_seats=seats, max_seats=seats)
                    else:
                        match = await client.find_match(game, min_seats=seats, max_seats=seats)
            except TimeoutError:
                return
            except TafelError as error:
                stats.errors[error.code.name] += 1
                # Back off: a play stream that gave up (every gateway down too long) refuses each
                # search at once, and this loop must not spin on it.
                await asyncio.sleep(0.2)
                continue
            stats.matchmaking.append(time.perf_counter() - queued)
            try:
                if stream is not None:
                    await connect4_fast(
                        client,
                        match.game_id,
                        match.seat,
                        stats,
                        shared,
                        rng,
                        think_s,
                        stop_at,
                        stream=stream,
                        watching=watching,
                    )
                else:
                    await play_game(
                        client,
                        match.game_id,
                        match.seat,
                        random_strategy(game, rng),
                        think_s=think_s,
                        on_move=stats.count_move,
                    )
                    stats.games_finished += match.seat == 0
            except TafelError as error:
                stats.errors[error.code.name] += 1
            except grpc.aio.AioRpcError as error:
                stats.errors[error.code().name] += 1
            except TimeoutError:
                stats.errors["CLIENT_TIMEOUT"] += 1


async def run_games(
    targets: list[str], game: str, games: int, think_s: float, duration_s: float, seed: int, seats: int = 2
) -> Stats:
    """`games` concurrent games of `seats` players each (Colour Square tables: 1-6)."""
    stats = Stats()
    shared = Shared()
    stop_at = time.monotonic() + duration_s
    await asyncio.gather(
        *(
            player(targets, game, stats, shared, stop_at, think_s, seed * 100_000 + i, seats)
            for i in range(seats * games)
        )
    )
    return stats


async def run_pings(targets: list[str], streams: int, duration_s: float) -> Stats:
    """The floor: empty Ping/Pong round trips on the same play-stream layout (one per player)."""
    stats = Stats()
    stop_at = time.monotonic() + duration_s

    async def pinger() -> None:
        async with await TafelClient.connect(targets) as client:
            await client.sign_in_as_guest()
            async with client.play_stream() as stream:
                while time.monotonic() < stop_at:
                    await stream.ping(1)
                    stats.pings += 1

    await asyncio.gather(*(pinger() for _ in range(streams)))
    return stats
