"""`tafel`: the terminal client.

    tafel play connect4                  # matchmaking
    tafel play plus4 --vs-bot 3          # a room with a bot from the pool
    tafel play coloursquare --room ABCD  # join a friend's room (or --new-room to host one)
    tafel watch GAME_ID
    tafel games [--live]
    tafel leaderboard connect4
    tafel tournament list | join ID | watch ID
    tafel bot connect4 --level 2 [--games N]
    tafel bot-pool                        # answer people's requests for a bot opponent

Server: --server HOST:PORT[,HOST:PORT...] or TAFEL_SERVER (default 127.0.0.1:50051). Account:
--user/--password or TAFEL_USER/TAFEL_PASSWORD (registered on first use); a guest otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from tafel.client import TafelClient
from tafel.errors import AlreadyExists, InvalidArgument, TafelError, Unauthenticated

console = Console()


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="tafel", description="Play tafel games from the terminal.")
    root.add_argument("--server", default=os.environ.get("TAFEL_SERVER", "127.0.0.1:50051"))
    root.add_argument("--user", default=os.environ.get("TAFEL_USER"))
    root.add_argument("--password", default=os.environ.get("TAFEL_PASSWORD"))
    commands = root.add_subparsers(dest="command", required=True)

    play = commands.add_parser("play", help="play a game")
    play.add_argument("game", choices=("connect4", "plus4", "coloursquare"))
    how = play.add_mutually_exclusive_group()
    how.add_argument("--room", help="join a room by its invite code")
    how.add_argument("--new-room", action="store_true", help="host a room and show its invite code")
    how.add_argument("--vs-bot", type=int, choices=(1, 2, 3), metavar="LEVEL", help="play a bot (1-3)")
    how.add_argument("--solo", action="store_true", help="Colour Square alone")
    play.add_argument("--seats", type=int, default=0, help="table size for --new-room")
    play.add_argument("--per-move", type=float, default=None, help="seconds per move")

    watch = commands.add_parser("watch", help="watch a game live")
    watch.add_argument("game_id")

    games = commands.add_parser("games", help="list your games (or --live: everyone's running games)")
    games.add_argument("--live", action="store_true")

    board = commands.add_parser("leaderboard", help="ratings of a game")
    board.add_argument("game", choices=("connect4", "plus4", "coloursquare"))

    bot = commands.add_parser("bot", help="run a bot that plays through matchmaking")
    bot.add_argument("game", choices=("connect4", "plus4", "coloursquare"))
    bot.add_argument("--level", type=int, choices=(1, 2, 3), default=1)
    bot.add_argument("--games", type=int, default=0, help="stop after N games (0 = forever)")

    tour = commands.add_parser("tournament", help="list, join or watch tournaments")
    tour.add_argument("action", choices=("list", "join", "watch"))
    tour.add_argument("tournament_id", nargs="?", default="")

    pool = commands.add_parser("bot-pool", help="answer requests for bot opponents")
    pool.add_argument("--games", nargs="+", default=["connect4", "plus4", "coloursquare"])
    return root


async def sign_in(client: TafelClient, user: str | None, password: str | None) -> None:
    if user and password:
        try:
            await client.sign_in(user, password)
        except (Unauthenticated, TafelError) as error:
            if error.reason not in ("UNKNOWN_USER", "BAD_CREDENTIALS", "NO_SUCH_ACCOUNT"):
                raise
            try:
                await client.register(user, password)
            except AlreadyExists:
                raise error from None
    else:
        await client.sign_in_as_guest()


async def run(args: argparse.Namespace) -> int:
    targets = [t for t in args.server.split(",") if t]
    async with await TafelClient.connect(targets) as client:
        await sign_in(client, args.user, args.password)
        if args.command == "play":
            return await play(client, args)
        if args.command == "watch":
            return await watch(client, args.game_id)
        if args.command == "games":
            return await list_games(client, args.live)
        if args.command == "leaderboard":
            return await leaderboard(client, args.game)
        if args.command == "tournament":
            if args.action != "list" and not args.tournament_id:
                console.print("give the tournament id (see `tafel tournament list`)")
                return 2
            return await tournaments(client, args)
        if args.command == "bot":
            from tafel.botplay import run_bot

            return await run_bot(client, args.game, args.level, args.games)
        if args.command == "bot-pool":
            from tafel.botplay import run_pool

            return await run_pool(client, args.games)
    return 2


async def play(client: TafelClient, args: argparse.Namespace) -> int:
    from tafel.cli.app import GameApp

    me = client.player
    per_move: dict[str, Any] = {"per_move_s": args.per_move} if args.per_move else {}
    if args.room:
        room = await client.join_room(args.room)
        console.print(f"joined room {room.code}; waiting for it to start ...")
        room = await client.wait_room_started(room.code)
        game_id = room.game_id
    elif args.new_room or args.vs_bot or args.solo:
        seats = 1 if args.solo else (2 if args.vs_bot else args.seats)
        room = await client.create_room(args.game, seats=seats, **per_move)
        if args.vs_bot:
            await client.request_bot(room.code, args.vs_bot)
            console.print(f"asked for a level {args.vs_bot} bot; waiting for it to join ...")
        elif not args.solo:
            console.print(f"room code: [bold]{room.code}[/bold] — share it; waiting for players ...")
        game_id = room.game_id if room.game_id else (await client.wait_room_started(room.code)).game_id
    else:
        console.print(f"looking for a {args.game} opponent ... (Ctrl-C to stop)")
        match = await client.find_match(args.game, **per_move)
        game_id = match.game_id
    state = await client.get_game(game_id)
    seat = state.seat if state.HasField("seat") else None
    result = await GameApp(client, game_id, seat, f"tafel · {args.game} · {me.username}").run_async()
    console.print(f"game {game_id}: {result or 'left'}")
    return 0


async def watch(client: TafelClient, game_id: str) -> int:
    from tafel.cli.app import GameApp

    result = await GameApp(client, game_id, None, f"tafel · watching {game_id}").run_async()
    console.print(f"game {game_id}: {result or 'left'}")
    return 0


async def list_games(client: TafelClient, live: bool) -> int:
    response = await (client.list_live_games() if live else client.list_my_games())
    table = Table("game id", "game", "players", "status")
    for summary in response.games:
        players = ", ".join(p.player.username for p in summary.players)
        status = "over" if summary.status.over else f"to act: {list(summary.status.to_act)}"
        table.add_row(summary.game_id, summary.game, players, status)
    console.print(table)
    return 0


async def leaderboard(client: TafelClient, game: str) -> int:
    response = await client.leaderboard(game)
    table = Table("rank", "player", "rating", "±", "")
    for entry in response.entries:
        rating = entry.rating
        table.add_row(
            str(entry.rank),
            entry.player.username,
            f"{rating.rating:.0f}",
            f"{rating.deviation:.0f}",
            "provisional" if rating.provisional else "",
        )
    console.print(table)
    if response.HasField("me"):
        console.print(f"you: #{response.me.rank} ({response.me.rating.rating:.0f})")
    return 0


async def tournaments(client: TafelClient, args: argparse.Namespace) -> int:
    from tafel.play.v1 import tournaments_pb2

    if args.action == "list":
        table = Table("id", "name", "game", "format", "players", "state")
        for t in await client.list_tournaments():
            table.add_row(
                t.tournament_id,
                t.name,
                t.game,
                tournaments_pb2.TournamentFormat.Name(t.format).split("_", 2)[-1],
                str(len(t.players)),
                tournaments_pb2.TournamentState.Name(t.state).split("_", 2)[-1],
            )
        console.print(table)
        return 0
    if args.action == "join":
        joined = await client.join_tournament(args.tournament_id)
        console.print(f"joined {joined.name}; your games start by themselves — watching it now")
    async for event in client.watch_tournament(args.tournament_id):
        kind = event.WhichOneof("kind")
        if kind == "round_started":
            console.print(f"[bold]round {event.round_started.round.number} started[/bold]")
            me = client.player.player_id
            for game in event.round_started.round.games:
                names = " vs ".join(p.username for p in game.players)
                mine = " ← you" if any(p.player_id == me for p in game.players) else ""
                console.print(f"  board {game.board}: {names} {game.game_id}{mine}")
                if mine and args.action == "join" and game.game_id:
                    seat = next(i for i, p in enumerate(game.players) if p.player_id == me)
                    await play_tournament_game(client, game.game_id, seat)
        elif kind == "standings_changed":
            rows = event.standings_changed.standings[:10]
            console.print("  standings: " + ", ".join(f"{r.rank}. {r.player.username} {r.points:g}" for r in rows))
        elif kind in ("finished", "cancelled"):
            console.print(f"tournament {kind}")
        else:
            console.print(f"  {kind}")
    return 0


async def play_tournament_game(client: TafelClient, game_id: str, seat: int) -> None:
    from tafel.cli.app import GameApp

    await GameApp(client, game_id, seat, f"tafel · tournament game {game_id}").run_async()


def main() -> None:
    args = parser().parse_args()
    try:
        code = asyncio.run(run(args))
    except KeyboardInterrupt:
        code = 130
    except InvalidArgument as error:
        console.print(f"[red]refused:[/red] {error.reason}: {error.message}")
        code = 2
    except TafelError as error:
        console.print(f"[red]error:[/red] {error.reason}: {error.message}")
        code = 1
    sys.exit(code)


if __name__ == "__main__":
    main()
