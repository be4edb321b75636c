"""Scenario `games`: G concurrent games kept going through matchmaking; random legal moves."""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import grpc
from tafel.autoplay import game_on_stream, play_game
from tafel.botplay import random_strategy
from tafel.client import TafelClient
from tafel.connect4.v1 import connect4_pb2
from tafel.errors import TafelError, Unavailable, VersionConflict
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2
from tafel.play_stream import PlayStream

from tafel_loadgen.stats import Stats
from tafel_loadgen.window import Board, Window

# A move refused UNAVAILABLE is sent again this many times in all, this long apart.
UNAVAILABLE_TRIES = 10
UNAVAILABLE_PAUSE_S = 0.5


@dataclass
class Shared:
    """State the players share inside one process: when each version was submitted, and the
    measured window (window.py: moves, games, latencies and searches count inside it only)."""

    window: Window
    submitted: dict[tuple[str, int], float] = field(default_factory=dict)


async def connect4_fast(
    client: TafelClient,
    game_id: str,
    seat: int,
    stats: Stats,
    shared: Shared,
    rng: random.Random,
    think_s: float | Callable[[], float],
    stream: PlayStream | None = None,
    watching: play_pb2.GetGameResponse | None = None,
) -> None:
    """Connect Four on the play stream with the board tracked from events (no reads per move).
    A player that keeps one `stream` open across games (as a busy client would) passes it in,
    and `watching` when its search started the watch (PlayStream.find_and_watch). `think_s`: a
    fixed pause before each move, or a function drawing one per move."""
    async with game_on_stream(client, game_id, stream) as on:
        on.over = await _connect4_on(client, on.stream, game_id, seat, stats, shared, rng, think_s, watching)


async def _connect4_on(
    client: TafelClient,
    stream: PlayStream,
    game_id: str,
    seat: int,
    stats: Stats,
    shared: Shared,
    rng: random.Random,
    think_s: float | Callable[[], float],
    watching: play_pb2.GetGameResponse | None,
) -> bool:
    """Whether the game ended (else the run stopped first or a move failed)."""
    # One timer for the whole game (the opponent may stop with the run: 5 s past it, the game is
    # given up) rather than one per awaited event: a timer per wait was a visible share of the
    # load generator's CPU, which it shares with the servers.
    try:
        async with shared.window.timeout(grace_s=5):
            return await _play_connect4(client, stream, game_id, seat, stats, shared, rng, think_s, watching)
    except TimeoutError:
        if time.monotonic() <= shared.window.end:
            raise
        return False


async def _submit(
    client: TafelClient,
    stream: PlayStream,
    game_id: str,
    move: connect4_pb2.Move,
    status: games_pb2.GameStatus,
    stats: Stats,
) -> games_pb2.GameStatus:
    """The move, sent again while it is refused UNAVAILABLE (the refusal says retry), as a person's
    client does; the status after it. The expected version guards a resend: had an earlier send
    landed after all, the resend is a VersionConflict and the game's status is read instead."""
    for attempt in range(UNAVAILABLE_TRIES):
        try:
            answer = await stream.submit_move(game_id, move, expected_version=status.version)
            return answer.status
        except Unavailable as error:
            if attempt + 1 == UNAVAILABLE_TRIES:
                raise
            stats.retried[error.reason or error.code.name] += 1
            await asyncio.sleep(UNAVAILABLE_PAUSE_S)
        except VersionConflict:
            if attempt == 0:
                raise
            # An earlier send landed. The status it made, not the game's latest: the opponent's
            # reply may be there already, and its disc reaches the board from the stream, in order.
            fresh = (await client.get_game(game_id)).summary.status
            if fresh.over:
                return fresh
            landed = games_pb2.GameStatus()
            landed.CopyFrom(status)
            landed.version = status.version + 1
            del landed.to_act[:]
            return landed
    raise AssertionError("unreachable")


async def _play_connect4(
    client: TafelClient,
    stream: PlayStream,
    game_id: str,
    seat: int,
    stats: Stats,
    shared: Shared,
    rng: random.Random,
    think_s: float | Callable[[], float],
    watching: play_pb2.GetGameResponse | None,
) -> bool:
    window = shared.window
    if watching is None:
        watching = await stream.watch(game_id)
    view = watching.view.connect4
    heights = [len(column.seats) for column in view.board]
    rows = view.rows
    open_columns = [c for c, h in enumerate(heights) if h < rows]  # kept, not rebuilt each move
    status = watching.summary.status
    while not status.over:
        if seat in status.to_act:
            if time.monotonic() >= window.end:
                return False  # the run is over: stop moving
            pause = think_s() if callable(think_s) else think_s
            if pause:
                await asyncio.sleep(pause)
            column = rng.choice(open_columns)
            shared.submitted[(game_id, status.version + 1)] = time.perf_counter()
            try:
                after = await _submit(client, stream, game_id, connect4_pb2.Move(column=column), status, stats)
            except TafelError as error:
                stats.errors[f"{error.code.name} {error.reason}".strip()] += 1
                return False
            stats.moves_whole_run += 1
            if window.inside():
                stats.moves += 1
            heights[column] += 1
            if heights[column] == rows:
                open_columns.remove(column)
            status = after
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
                if started is not None and window.inside():
                    stats.latencies.append(time.perf_counter() - started)
        if delivery.HasField("status"):
            if delivery.status.version >= status.version:
                status = delivery.status
        elif event.version > status.version or kind == "ended":
            status = (await client.get_game(game_id)).summary.status  # a gateway without statuses
    if window.inside():
        stats.games_finished += seat == 0
    return True


def count_in_window(stats: Stats, window: Window, _answer: object = None) -> None:
    stats.moves_whole_run += 1
    if window.inside():
        stats.count_move()


async def player(
    targets: list[str],
    game: str,
    stats: Stats,
    shared: Shared,
    think_s: float,
    seed: int,
    seats: int = 2,
    own_connection: bool = True,
) -> None:
    rng = random.Random(seed)
    connecting = TafelClient.connect(targets, own_connection=own_connection)
    async with await connecting as client, contextlib.AsyncExitStack() as stack:
        await client.sign_in_as_guest()
        # Connect Four players keep one play stream open across their games and find their
        # matches on it too (a busy client's shape: no new call per game).
        stream: PlayStream | None = None
        if game == "connect4":
            stream = await stack.enter_async_context(client.play_stream())
        window = shared.window
        first = True
        while time.monotonic() < window.end:
            queued = time.perf_counter()
            watching: play_pb2.GetGameResponse | None = None
            try:
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for runs the search in a task of
                # its own, one more per game.
                async with window.timeout(at_least_s=1.0):
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
            waited = time.perf_counter() - queued
            if first:  # setup: the window opens once every player has its first match
                first = False
                stats.first_matchmaking.append(waited)
                window.board.matched_first()
            elif window.inside():
                stats.matchmaking.append(waited)
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
                        on_move=partial(count_in_window, stats, window),
                    )
                    if window.inside():
                        stats.games_finished += match.seat == 0
            except TafelError as error:
                stats.errors[error.code.name] += 1
            except grpc.aio.AioRpcError as error:
                stats.errors[error.code().name] += 1
            except TimeoutError:
                stats.errors["CLIENT_TIMEOUT"] += 1


async def run_games(
    targets: list[str],
    game: str,
    games: int,
    think_s: float,
    duration_s: float,
    seed: int,
    seats: int = 2,
    board: Board | None = None,
    own_connections: bool = True,
) -> Stats:
    """`games` concurrent games of `seats` players each (Colour Square tables: 1-6), measured
    over a window of `duration_s` that opens once every player has its first match (window.py;
    `board` shares it with the players of other processes). Each player has a TCP connection of
    its own, as players on their own machines (and the peers' bots, ../shared/peers) have;
    `own_connections=False` puts them all on one (gRPC's default within a process)."""
    stats = Stats()
    window = Window(board or Board(seats * games), duration_s)
    shared = Shared(window)
    follow = asyncio.get_running_loop().create_task(window.follow())
    try:
        await asyncio.gather(
            *(
                player(targets, game, stats, shared, think_s, seed * 100_000 + i, seats, own_connections)
                for i in range(seats * games)
            )
        )
    finally:
        follow.cancel()
    if window.setup_timed_out:
        stats.errors["SETUP_TIMEOUT"] += 1
    stats.setup_s = window.start - window.board.launched if window.start != math.inf else 0.0
    stats.client_cpu_s = window.cpu_in_window
    return stats


async def run_pings(targets: list[str], streams: int, duration_s: float, own_connections: bool = True) -> Stats:
    """The floor: empty Ping/Pong round trips on the same play-stream layout (one per player)."""
    stats = Stats()
    stop_at = time.monotonic() + duration_s

    async def pinger() -> None:
        async with await TafelClient.connect(targets, own_connection=own_connections) as client:
            await client.sign_in_as_guest()
            async with client.play_stream() as stream:
                while time.monotonic() < stop_at:
                    await stream.ping(1)
                    stats.pings += 1

    await asyncio.gather(*(pinger() for _ in range(streams)))
    return stats
