"""`tafel tournament`: list, create, join, start and watch tournaments; the feed says who did what."""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from rich.console import Console
from rich.table import Table

from tafel.cli.describe import game_title
from tafel.cli.shared import console_connection, id_column
from tafel.client import TafelClient
from tafel.i18n import N_, _, ngettext, number
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


FORMAT_WORDS: dict[int, str] = {
    tp.TOURNAMENT_FORMAT_SWISS: N_("swiss"),
    tp.TOURNAMENT_FORMAT_ROUND_ROBIN: N_("round robin"),
    tp.TOURNAMENT_FORMAT_KNOCKOUT: N_("knockout"),
    tp.TOURNAMENT_FORMAT_TABLES: N_("tables"),
}
STATE_WORDS: dict[int, str] = {
    tp.TOURNAMENT_STATE_REGISTERING: N_("registering"),
    tp.TOURNAMENT_STATE_RUNNING: N_("running"),
    tp.TOURNAMENT_STATE_FINISHED: N_("finished"),
    tp.TOURNAMENT_STATE_CANCELLED: N_("cancelled"),
}


def _enum_word(words: Mapping[int, str], value: int) -> str:
    return _(words[value]) if value in words else "—"


def event_line(event: tp.TournamentEvent, me: str) -> str:
    """One sentence per feed event, naming the players."""

    def who(player: play_pb2.Player) -> str:
        return _("you") if player.player_id == me else player_name(player)

    kind = event.WhichOneof("kind")
    if kind == "player_joined":
        p = event.player_joined.player
        return _("you joined") if p.player_id == me else _("{name} joined").format(name=who(p))
    if kind == "player_left":
        left = event.player_left
        p = left.player
        mine = p.player_id == me
        if left.missed_games:
            if mine:
                return _("you withdrew after missing games")
            return _("{name} withdrew after missing games").format(name=who(p))
        if left.withdrawn:
            return _("you withdrew") if mine else _("{name} withdrew").format(name=who(p))
        return _("you left") if mine else _("{name} left").format(name=who(p))
    if kind == "started":
        count = len(event.started.tournament.players)
        started = ngettext(
            "the tournament started with {n} player", "the tournament started with {n} players", count
        ).format(n=count)
        return f"[bold]{started}[/bold]"
    if kind == "round_started":
        lines = ["[bold]" + _("round {n} started").format(n=event.round_started.round.number) + "[/bold]"]
        for game in event.round_started.round.games:
            names = _(" vs ").join(who(p) for p in game.players)
            board = "  " + _("board {n}: {names}").format(n=game.board, names=names)
            where = "  " + _("(game {game_id})").format(game_id=game.game_id) if game.game_id else " " + _("(bye)")
            lines.append(board + where)
        return "\n".join(lines)
    if kind == "game_finished":
        game = event.game_finished.game
        ranked = sorted(zip(game.ranks, game.players, strict=False), key=lambda pair: pair[0])
        if len(ranked) >= 2 and ranked[0][0] == ranked[-1][0]:
            result = _("draw between {names}").format(names=_(" and ").join(who(p) for _rank, p in ranked))
        else:
            result = _(" ahead of ").join(who(p) for _rank, p in ranked)
        return "  " + _("round {n}, board {board}: {result}").format(
            n=event.game_finished.round, board=game.board, result=result
        )
    if kind == "standings_changed":
        rows = event.standings_changed.standings[:10]
        table = ", ".join(f"{r.rank}. {who(r.player)} {number(r.points)}" for r in rows)
        return "  " + _("standings: {table}").format(table=table)
    if kind == "finished":
        rows = event.finished.standings[:3]
        podium = ", ".join(f"{r.rank}. {who(r.player)}" for r in rows)
        return "[bold]" + _("the tournament is over: {podium}").format(podium=podium) + "[/bold]"
    if kind == "cancelled":
        # The reason is a machine code (CANCELLED_BY_ORGANISER, TOO_FEW_PLAYERS), said in words.
        from tafel.refusals import REFUSALS

        why = event.cancelled.reason
        why = _(REFUSALS[why]) if why in REFUSALS else why
        return _("the tournament was cancelled: {reason}").format(reason=why)
    return f"({kind})"


async def tournaments(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    if args.action == "list":
        listed = await client.list_tournaments()
        table = Table()
        id_column(table, "id", [t.tournament_id for t in listed])
        for header in (_("name"), _("game"), _("format"), _("players"), _("state")):
            table.add_column(header)
        for t in listed:
            table.add_row(
                t.tournament_id,
                t.name,
                game_title(t.game),
                _enum_word(FORMAT_WORDS, t.format),
                number(len(t.players)),
                _enum_word(STATE_WORDS, t.state),
            )
        console.print(table)
        return 0
    if not args.target:
        console.print(_("give the tournament id (see `tafel tournament list`), or a name for create"))
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
            _(
                "created {name}: id [bold]{id}[/bold]. Players join with `tafel tournament join {id}`;"
                " start it with `tafel tournament start {id}`."
            ).format(name=created.name, id=created.tournament_id)
        )
        return 0
    if args.action == "start":
        started = await client.start_tournament(args.target)
        count = len(started.players)
        console.print(
            ngettext("started {name} with {n} player", "started {name} with {n} players", count).format(
                name=started.name, n=count
            )
        )
        return 0
    if args.action == "join":
        joined = await client.join_tournament(args.target)
        console.print(
            _("joined {name}; your games open by themselves — following it now (Ctrl-C stops)").format(name=joined.name)
        )
    return await follow(client, args.target, playing=args.action == "join", console=console)


async def follow(client: TafelClient, tournament_id: str, *, playing: bool, console: Console) -> int:
    me = client.player.player_id
    # No retry limit (Ctrl-C stops): once back, the feed goes on from the last event it showed.
    told = console_connection(console, _("The tournament goes on."), _("Following the tournament again."))
    async for event in client.watch_tournament(tournament_id, max_retries=None, on_connection=told):
        console.print(event_line(event, me), highlight=False)
        if playing and event.WhichOneof("kind") == "round_started":
            for game in event.round_started.round.games:
                seats = [p.player_id for p in game.players]
                if me in seats and game.game_id:
                    from tafel.cli.app import GameApp, screen_title

                    state = await client.get_game(game.game_id)
                    seat = seats.index(me)
                    await GameApp(client, game.game_id, seat, screen_title(state.summary, seat)).run_async()
    return 0
