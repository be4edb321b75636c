"""`tafel tournament`: list, create, join, start and watch tournaments; the feed says who did what."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from tafel.cli.describe import GAME_TITLES, plural
from tafel.cli.shared import console_connection, id_column
from tafel.client import TafelClient
from tafel.names import player_name
from tafel.play.v1 import play_pb2
from tafel.play.v1 import tournaments_pb2 as tp
from tafel.requests import duration

FORMATS = {
    "swiss": tp.TOURNAMENT_FORMAT_SWISS,
    "round_robin": tp.TOURNAMENT_FORMAT_ROUND_ROBIN,
    "knockout": tp.TOURNAMENT_FORMAT_KNOCKOUT,
    "tables": tp.TOURNAMENT_FORMAT_TABLES,
}


def _enum_word(name: str) -> str:
    return name.split("_", 2)[-1].replace("_", " ").lower()


def event_line(event: tp.TournamentEvent, me: str) -> str:
    """One sentence per feed event, naming the players."""

    def who(player: play_pb2.Player) -> str:
        return "you" if player.player_id == me else player_name(player)

    kind = event.WhichOneof("kind")
    if kind == "player_joined":
        p = event.player_joined.player
        return f"{who(p)} joined"
    if kind == "player_left":
        left = event.player_left
        p = left.player
        how = "withdrew after missing games" if left.missed_games else ("withdrew" if left.withdrawn else "left")
        return f"{who(p)} {how}"
    if kind == "started":
        t = event.started.tournament
        return f"[bold]the tournament started with {plural(len(t.players), 'player')}[/bold]"
    if kind == "round_started":
        lines = [f"[bold]round {event.round_started.round.number} started[/bold]"]
        for game in event.round_started.round.games:
            names = " vs ".join(who(p) for p in game.players)
            lines.append(f"  board {game.board}: {names}" + (f"  (game {game.game_id})" if game.game_id else " (bye)"))
        return "\n".join(lines)
    if kind == "game_finished":
        game = event.game_finished.game
        ranked = sorted(zip(game.ranks, game.players, strict=False), key=lambda pair: pair[0])
        if len(ranked) >= 2 and ranked[0][0] == ranked[-1][0]:
            result = "draw between " + " and ".join(who(p) for _, p in ranked)
        else:
            result = " ahead of ".join(who(p) for _, p in ranked)
        return f"  round {event.game_finished.round}, board {game.board}: {result}"
    if kind == "standings_changed":
        rows = event.standings_changed.standings[:10]
        return "  standings: " + ", ".join(f"{r.rank}. {who(r.player)} {r.points:g}" for r in rows)
    if kind == "finished":
        rows = event.finished.standings[:3]
        podium = ", ".join(f"{r.rank}. {who(r.player)}" for r in rows)
        return f"[bold]the tournament is over: {podium}[/bold]"
    if kind == "cancelled":
        return f"the tournament was cancelled: {event.cancelled.reason}"
    return f"({kind})"


async def tournaments(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    if args.action == "list":
        listed = await client.list_tournaments()
        table = Table()
        id_column(table, "id", [t.tournament_id for t in listed])
        for header in ("name", "game", "format", "players", "state"):
            table.add_column(header)
        for t in listed:
            table.add_row(
                t.tournament_id,
                t.name,
                GAME_TITLES.get(t.game, t.game),
                _enum_word(tp.TournamentFormat.Name(t.format)),
                str(len(t.players)),
                _enum_word(tp.TournamentState.Name(t.state)),
            )
        console.print(table)
        return 0
    if not args.target:
        console.print("give the tournament id (see `tafel tournament list`), or a name for create")
        return 2
    if args.action == "create":
        fields: dict[str, object] = {
            "name": args.target,
            "game": args.game,
            "format": FORMATS[args.format],
            "rounds": args.rounds,
            "capacity": args.capacity,
        }
        if args.per_move:
            fields["time_control"] = {"per_move": duration(args.per_move)}
        created = await client.create_tournament(**fields)
        console.print(
            f"created {created.name}: id [bold]{created.tournament_id}[/bold]. Players join with"
            f" `tafel tournament join {created.tournament_id}`; start it with"
            f" `tafel tournament start {created.tournament_id}`."
        )
        return 0
    if args.action == "start":
        started = await client.start_tournament(args.target)
        console.print(f"started {started.name} with {plural(len(started.players), 'player')}")
        return 0
    if args.action == "join":
        joined = await client.join_tournament(args.target)
        console.print(f"joined {joined.name}; your games open by themselves — following it now (Ctrl-C stops)")
    return await follow(client, args.target, playing=args.action == "join", console=console)


async def follow(client: TafelClient, tournament_id: str, *, playing: bool, console: Console) -> int:
    me = client.player.player_id
    # No retry limit (Ctrl-C stops): once back, the feed goes on from the last event it showed.
    told = console_connection(console, "The tournament goes on.", "Following the tournament again.")
    async for event in client.watch_tournament(tournament_id, max_retries=None, on_connection=told):
        console.print(event_line(event, me), highlight=False)
        if playing and event.WhichOneof("kind") == "round_started":
            for game in event.round_started.round.games:
                seats = [p.player_id for p in game.players]
                if me in seats and game.game_id:
                    from tafel.cli.app import GameApp, game_title

                    state = await client.get_game(game.game_id)
                    seat = seats.index(me)
                    await GameApp(client, game.game_id, seat, game_title(state.summary, seat)).run_async()
    return 0
