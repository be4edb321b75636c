"""Scenario `tournament`: N bot players register in a tournament, and it is played to the end.

An organiser creates and starts the tournament; a watcher follows its event stream; at every
round start, each pairing's players play their game (random legal moves, on the play stream).
Players share a few client connections (as one swarm process would).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

import grpc
from tafel.autoplay import play_game
from tafel.botplay import random_strategy
from tafel.client import TafelClient
from tafel.errors import TafelError
from tafel.play.v1 import tournaments_pb2

from tafel_loadgen.games import Shared, connect4_fast
from tafel_loadgen.progress import run_progress
from tafel_loadgen.stats import Stats
from tafel_loadgen.window import Window

PLAYERS_PER_CHANNEL = 64
FORMATS = {
    "swiss": tournaments_pb2.TOURNAMENT_FORMAT_SWISS,
    "round_robin": tournaments_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN,
    "knockout": tournaments_pb2.TOURNAMENT_FORMAT_KNOCKOUT,
    "tables": tournaments_pb2.TOURNAMENT_FORMAT_TABLES,
}


async def run_tournament(targets: list[str], args: argparse.Namespace) -> Stats:
    stats = Stats()
    channels = [
        grpc.aio.insecure_channel(targets[i % len(targets)])
        for i in range((args.players + PLAYERS_PER_CHANNEL - 1) // PLAYERS_PER_CHANNEL)
    ]
    players = [TafelClient(channels[i // PLAYERS_PER_CHANNEL]) for i in range(args.players)]
    for index in range(0, len(players), 64):
        await asyncio.gather(*(p.sign_in_as_guest() for p in players[index : index + 64]))
    by_id = {p.player.player_id: p for p in players}
    organiser = TafelClient(channels[0])
    await organiser.sign_in_as_guest()
    tournament = await organiser.create_tournament(
        name=f"loadgen {args.players}",
        game=args.game,
        format=FORMATS[args.format],
        rounds=args.rounds,
        capacity=args.players,
        time_control={"per_move": {"seconds": 60}},
    )
    tid = tournament.tournament_id
    stats.tournament_id = tid
    for index in range(0, len(players), 64):
        await asyncio.gather(*(p.join_tournament(tid) for p in players[index : index + 64]))
    started = time.perf_counter()
    await organiser.start_tournament(tid)
    rng = random.Random(args.seed)
    games: set[asyncio.Task[None]] = set()
    shared = Shared(Window.unbounded())

    async def play(game: tournaments_pb2.TournamentGame) -> None:
        seats = [(seat, by_id[p.player_id]) for seat, p in enumerate(game.players) if p.player_id in by_id]
        try:
            if args.game == "connect4":
                # The lean loop: the board tracked from events, no reads per move.
                await seats[0][1].wait_for_game(game.game_id)
                await asyncio.gather(
                    *(
                        connect4_fast(client, game.game_id, seat, stats, shared, random.Random(rng.random()), 0.0)
                        for seat, client in seats
                    )
                )
            else:
                await asyncio.gather(
                    *(
                        play_game(client, game.game_id, seat, random_strategy(args.game, random.Random(rng.random())))
                        for seat, client in seats
                    )
                )
            if args.game != "connect4":
                stats.games_finished += 1  # connect4_fast counts its own
        except TafelError as error:
            stats.errors[error.code.name] += 1

    rounds = 0
    with run_progress() as progress:
        # Swiss plays a known number of rounds; the others' count follows from the field.
        bar = progress.add_task(f"tournament {tid}: starting", total=args.rounds if args.format == "swiss" else None)
        async for event in organiser.watch_tournament(tid):
            kind = event.WhichOneof("kind")
            if kind == "round_started":
                rounds += 1
                for game in event.round_started.round.games:
                    if game.game_id:
                        task = asyncio.ensure_future(play(game))
                        games.add(task)
                        task.add_done_callback(games.discard)
            elif kind == "cancelled":
                stats.errors["TOURNAMENT_CANCELLED"] += 1
            elif kind == "game_finished":
                progress.update(bar, description=f"tournament {tid}: round {rounds}, {stats.games_finished} games done")
            if kind == "round_started":
                progress.update(bar, completed=rounds - 1, description=f"tournament {tid}: round {rounds} playing")
        progress.update(bar, completed=rounds)
        await asyncio.gather(*games)
    wall = time.perf_counter() - started
    # Moves come from the finished games' records (every applied action).
    standings = await organiser.standings(tid)
    print(
        f"  tournament {tid}: {rounds} rounds, {stats.games_finished} games, wall {wall:.1f} s; "
        f"winner {standings.standings[0].player.username if standings.standings else '-'}",
        flush=True,
    )
    if args.game != "connect4":
        stats.moves = await count_moves(organiser, tid)
    for channel in channels:
        await channel.close()
    return stats


async def count_moves(client: TafelClient, tournament_id: str) -> int:
    moves = 0
    tournament = await client.get_tournament(tournament_id)
    for number in range(1, tournament.rounds + 1):
        response = await client._call(
            client.tournaments.GetRound, tournaments_pb2.GetRoundRequest(tournament_id=tournament_id, round=number)
        )
        for game in response.round.games:
            if game.game_id:
                try:
                    record = await client.get_record(game.game_id)
                except TafelError:
                    continue
                moves += sum(1 for action in record.actions if action.WhichOneof("action") == "move")
    return moves
