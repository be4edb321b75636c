"""Scenario `tournament`: N bot players register in a tournament, and it is played to the end.

An organiser creates and starts the tournament; a watcher follows its event stream; at every
round start, each pairing's players play their game (random legal moves, on the play stream).
Players share a few client connections (as one swarm process would); with several gateways each
connection balances over all of them (a gateway that dies leaves its players on the others).

Bots that think like people (`--think M`): before each move a pause drawn from a log-normal
distribution with median M seconds and shape `--think-sigma` (0.5: the middle half of the moves
take 0.71-1.40 M, one in ten over 1.9 M), clipped to [M/4, 4 M].

Measured besides the moves (summary "tournament"): per round, the pairing time (from the previous
round's last game ending, as its players saw it, to the server's time on the TournamentRoundStarted
event: the game-end hook, the results collected, the pairing, the save) and the round-start
latency (from that event's time until each game's first mover has the game's view, i.e. its first
move is possible: p50 and max, the max being "every game of the round can start"; the view comes
from the SDK's wait_for_game, which polls GetGame with a backoff of 50 ms to 1 s, so also the
game's own created_at from that view, the server's side without the polling). One machine's
clock for all of them.

`--format arena --minutes M`: an arena of M minutes; each game is played as the arena pairs it
(TournamentArenaGameStarted). Measured: from the pairing's event to the game's first move being
possible, and a player's wait between the end of a game and its next pairing; pairings with the
same opponent twice in a row are counted (the arena must make none).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import resource
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import grpc
from tafel.autoplay import play_game
from tafel.botplay import random_strategy
from tafel.client import TafelClient
from tafel.errors import TafelError, Unavailable
from tafel.play.v1 import tournaments_pb2

from tafel_loadgen.games import Shared, connect4_fast
from tafel_loadgen.progress import run_progress
from tafel_loadgen.stats import Stats, percentile
from tafel_loadgen.window import Window

PLAYERS_PER_CHANNEL = 64
# A game of a round just paired may take a while to exist at 10,000 players (5,000 games made).
GAME_WAIT_S = 300.0
JOINS_AT_ONCE = 16
JOIN_TRIES = 5
FORMATS = {
    "swiss": tournaments_pb2.TOURNAMENT_FORMAT_SWISS,
    "round_robin": tournaments_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN,
    "knockout": tournaments_pb2.TOURNAMENT_FORMAT_KNOCKOUT,
    "tables": tournaments_pb2.TOURNAMENT_FORMAT_TABLES,
    "arena": tournaments_pb2.TOURNAMENT_FORMAT_ARENA,
}


def think_draw(median_s: float, sigma: float, rng: random.Random) -> Callable[[], float] | float:
    """A pause before each move (see the module's docstring); 0: none."""
    if median_s <= 0:
        return 0.0
    mu = math.log(median_s)

    def draw() -> float:
        pause: float = rng.lognormvariate(mu, sigma)
        return min(max(pause, median_s / 4), median_s * 4)

    return draw


async def join(player: TafelClient, tid: str, stats: Stats) -> None:
    for attempt in range(JOIN_TRIES):
        try:
            await player.join_tournament(tid)
            return
        except Unavailable:
            stats.join_retries += 1
            if attempt == JOIN_TRIES - 1:
                raise
            await asyncio.sleep(1.0 + attempt)


def _ts(at: Any) -> float:
    return float(at.seconds) + float(at.nanos) / 1e9


async def run_tournament(targets: list[str], args: argparse.Namespace) -> Stats:
    stats = Stats()
    count = (args.players + PLAYERS_PER_CHANNEL - 1) // PLAYERS_PER_CHANNEL
    if len(targets) > 1:
        # Round robin over every gateway (the SDK's channel), so a gateway's death moves its
        # players' calls to the others; the organiser (who watches) stays on the first.
        channels = [(await TafelClient.connect(targets, own_connection=True)).channel for _ in range(count)]
        organiser_channel = grpc.aio.insecure_channel(targets[0])
    else:
        # A connection each (gRPC would share one between every channel of the process: one
        # connection takes 1,000 streams, TAFEL_MAX_CONCURRENT_STREAMS, and at 10,000 players the
        # rest waited, so first movers never moved).
        channels = [(await TafelClient.connect(targets, own_connection=True)).channel for _ in range(count)]
        organiser_channel = channels[0]
    players = [TafelClient(channels[i // PLAYERS_PER_CHANNEL]) for i in range(args.players)]
    setup_began = time.perf_counter()
    for index in range(0, len(players), 64):
        await asyncio.gather(*(p.sign_in_as_guest() for p in players[index : index + 64]))
    by_id = {p.player.player_id: p for p in players}
    organiser = TafelClient(organiser_channel)
    await organiser.sign_in_as_guest()
    arena = args.format == "arena"
    tournament = await organiser.create_tournament(
        name=f"loadgen {args.players}",
        game=args.game,
        format=FORMATS[args.format],
        rounds=0 if arena else args.rounds,
        capacity=args.players,
        time_control={"per_move": {"seconds": 60}},
        **({"arena_duration": {"seconds": int(args.minutes * 60)}} if arena else {}),
    )
    tid = tournament.tournament_id
    stats.tournament_id = tid
    # A join costs the gateway time in proportion to the players already in (it reads them all
    # and answers with the list: ~5 µs each), so a few at once; one refused as unavailable (the
    # gateway behind its Redis timeout) is retried, as the refusal says.
    for index in range(0, len(players), JOINS_AT_ONCE):
        await asyncio.gather(*(join(p, tid, stats) for p in players[index : index + JOINS_AT_ONCE]))
    setup_s = time.perf_counter() - setup_began
    print(f"  tournament {tid}: {args.players} players signed in and joined in {setup_s:.1f} s", flush=True)
    started = time.perf_counter()
    start_at = time.time()
    await organiser.start_tournament(tid)
    rng = random.Random(args.seed)
    games: set[asyncio.Task[None]] = set()
    shared = Shared(Window.unbounded())
    think = think_draw(getattr(args, "think", 0.0), getattr(args, "think_sigma", 0.5), rng)
    paired_at: dict[int, float] = {}
    last_end_at: dict[int, float] = {}
    cpu_began = resource.getrusage(resource.RUSAGE_SELF)
    first_move_possible: dict[int, list[float]] = defaultdict(list)
    created: dict[int, list[float]] = defaultdict(list)  # the game's own creation time (server)
    # Arena: each player's last game's end (client clock) and last opponent.
    free_at: dict[str, float] = {}
    last_opponent: dict[str, str] = {}
    repair_waits: list[float] = []
    repeats_in_a_row = 0

    async def play(number: int, game: tournaments_pb2.TournamentGame, paired: float) -> None:
        seats = [(seat, by_id[p.player_id]) for seat, p in enumerate(game.players) if p.player_id in by_id]
        try:
            if args.game == "connect4":
                # The lean loop: the board tracked from events, no reads per move.
                view = await seats[0][1].wait_for_game(game.game_id, timeout_s=GAME_WAIT_S)
                first_move_possible[number].append(time.time() - paired)
                created[number].append(_ts(view.summary.created_at) - paired)
                await asyncio.gather(
                    *(
                        connect4_fast(client, game.game_id, seat, stats, shared, random.Random(rng.random()), think)
                        for seat, client in seats
                    )
                )
                ended = time.time()
                last_end_at[number] = max(last_end_at.get(number, 0.0), ended)
                for p in game.players:
                    free_at[p.player_id] = ended
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
            # The reason too: at an organiser's size, which refusal it was is the finding.
            stats.errors[f"{error.code.name} {error.reason}".strip()] += 1

    rounds = 0
    with run_progress() as progress:
        # Swiss plays a known number of rounds; the others' count follows from the field.
        bar = progress.add_task(f"tournament {tid}: starting", total=args.rounds if args.format == "swiss" else None)
        async for event in organiser.watch_tournament(tid):
            kind = event.WhichOneof("kind")
            if kind == "round_started":
                rounds += 1
                number = event.round_started.round.number
                paired_at[number] = _ts(event.at)
                print(f"ROUND {number} paired", flush=True)  # tools.bench_tournament acts on these
                for game in event.round_started.round.games:
                    if game.game_id:
                        task = asyncio.ensure_future(play(number, game, paired_at[number]))
                        games.add(task)
                        task.add_done_callback(games.discard)
            elif kind == "arena_game_started":
                game = event.arena_game_started.game
                at = _ts(event.at)
                paired_at.setdefault(0, at)
                ids = [p.player_id for p in game.players]
                for p, other in ((ids[0], ids[-1]), (ids[-1], ids[0])):
                    if p in free_at:
                        repair_waits.append(at - free_at.pop(p))
                    repeats_in_a_row += last_opponent.get(p) == other
                    last_opponent[p] = other
                task = asyncio.ensure_future(play(0, game, at))
                games.add(task)
                task.add_done_callback(games.discard)
            elif kind == "finished" and arena:
                print("ARENA finished", flush=True)
            elif kind == "cancelled":
                stats.errors["TOURNAMENT_CANCELLED"] += 1
            elif kind == "game_finished":
                progress.update(bar, description=f"tournament {tid}: round {rounds}, {stats.games_finished} games done")
            if kind == "round_started":
                progress.update(bar, completed=rounds - 1, description=f"tournament {tid}: round {rounds} playing")
        progress.update(bar, completed=rounds)
        await asyncio.gather(*games)
    wall = time.perf_counter() - started
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    stats.client_cpu_s = cpu.ru_utime + cpu.ru_stime - cpu_began.ru_utime - cpu_began.ru_stime
    stats.tournament = tournament_figures(start_at, paired_at, last_end_at, first_move_possible, created)
    stats.tournament["wall_s"] = round(wall, 1)
    stats.tournament["setup_s"] = round(setup_s, 1)
    stats.tournament["join_retries"] = stats.join_retries
    stats.tournament["rounds_played"] = rounds
    if arena:
        waits = first_move_possible.get(0, [])
        stats.tournament["arena"] = {
            "minutes": args.minutes,
            "games": len(waits),
            "paired_to_first_move_ms": {
                "p50": round(percentile(waits, 0.5) * 1000, 1),
                "p99": round(percentile(waits, 0.99) * 1000, 1),
                "max": round(max(waits, default=0.0) * 1000, 1),
            },
            "free_to_paired_again_ms": {
                "p50": round(percentile(repair_waits, 0.5) * 1000, 1),
                "p99": round(percentile(repair_waits, 0.99) * 1000, 1),
                "samples": len(repair_waits),
            },
            "same_opponent_twice_in_a_row": repeats_in_a_row // 2,
        }
        stats.tournament["rounds"] = []
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


def tournament_figures(
    start_at: float,
    paired_at: dict[int, float],
    last_end_at: dict[int, float],
    first_move_possible: dict[int, list[float]],
    created: dict[int, list[float]],
) -> dict[str, Any]:
    """Per round: pairing time and round-start latency (see the module's docstring), in ms."""
    out: list[dict[str, Any]] = []
    for number in sorted(paired_at):
        # Round 1 is paired on the start call (the client's clock: the same machine's).
        before = last_end_at.get(number - 1, start_at if number == 1 else 0.0)
        waits = first_move_possible.get(number, [])
        made = created.get(number, [])
        out.append(
            {
                "round": number,
                "pairing_ms": round((paired_at[number] - before) * 1000, 1) if before else None,
                "games": len(waits),
                "round_start_p50_ms": round(percentile(waits, 0.5) * 1000, 1),
                "round_start_max_ms": round(max(waits) * 1000, 1) if waits else 0.0,
                # The same from the games' created_at: the server's side, without the SDK's polling.
                "created_p50_ms": round(percentile(made, 0.5) * 1000, 1),
                "created_max_ms": round(max(made) * 1000, 1) if made else 0.0,
            }
        )
    return {"rounds": out}


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
