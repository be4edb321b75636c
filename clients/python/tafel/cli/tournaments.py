"""`tafel tournament`: list, create, join, start and watch tournaments; the feed says who did what.
Directors edit one, remove or ban a player, pause and resume it, start the next round, terminate
it, correct a result, announce, read the audit log and export it; an arena's players pause and come
back, and everyone reads the standings (with streaks in an arena)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp
from rich.console import Console
from rich.table import Table

from tafel.cli.describe import game_title
from tafel.cli.shared import console_connection, id_column
from tafel.cli.words import in_words, local_time
from tafel.client import TafelClient
from tafel.i18n import N_, _, ngettext, number
from tafel.names import player_name
from tafel.play.v1 import play_pb2
from tafel.play.v1 import tournaments_pb2 as tp
from tafel.requests import DAYS_PER_MOVE, duration

FORMATS = {
    "swiss": tp.TOURNAMENT_FORMAT_SWISS,
    "round_robin": tp.TOURNAMENT_FORMAT_ROUND_ROBIN,
    "knockout": tp.TOURNAMENT_FORMAT_KNOCKOUT,
    "tables": tp.TOURNAMENT_FORMAT_TABLES,
    "arena": tp.TOURNAMENT_FORMAT_ARENA,
}

ACTIONS = (
    "list",
    "create",
    "join",
    "start",
    "watch",
    "standings",
    "edit",
    "remove",
    "pause",
    "back",
    "resume",
    "next-round",
    "terminate",
    "correct",
    "announce",
    "audit",
    "export",
)


FORMAT_WORDS: dict[int, str] = {
    tp.TOURNAMENT_FORMAT_SWISS: N_("swiss"),
    tp.TOURNAMENT_FORMAT_ROUND_ROBIN: N_("round robin"),
    tp.TOURNAMENT_FORMAT_KNOCKOUT: N_("knockout"),
    tp.TOURNAMENT_FORMAT_TABLES: N_("tables"),
    tp.TOURNAMENT_FORMAT_ARENA: N_("arena"),
}
STATE_WORDS: dict[int, str] = {
    tp.TOURNAMENT_STATE_REGISTERING: N_("registering"),
    tp.TOURNAMENT_STATE_RUNNING: N_("running"),
    tp.TOURNAMENT_STATE_FINISHED: N_("finished"),
    tp.TOURNAMENT_STATE_CANCELLED: N_("cancelled"),
}


def add_arguments(tour: argparse.ArgumentParser, games: Sequence[str]) -> None:
    """`tafel tournament ACTION ID [MORE]` and its options (main.py's parser)."""
    tour.add_argument("action", choices=ACTIONS)
    tour.add_argument(
        "target", nargs="?", default="", metavar="ID_OR_NAME", help=_("the tournament id (name for create)")
    )
    tour.add_argument(
        "more", nargs="*", default=[], metavar="NAME_OR_TEXT", help=_("remove: the player; announce: the message")
    )
    # The first game this client knows (the registry's order) unless one is named.
    tour.add_argument("--game", choices=games, default=games[0], help=_("create: the game"))
    tour.add_argument("--format", choices=tuple(FORMATS), default="swiss", help=_("create: the format"))
    tour.add_argument("--rounds", type=int, default=None, help=_("create, edit: rounds (swiss, tables)"))
    tour.add_argument("--capacity", type=int, default=None, help=_("create, edit: most players (default 64)"))
    tour.add_argument("--per-move", type=float, default=None, metavar="SECONDS", help=_("create: seconds per move"))
    tour.add_argument(
        "--days",
        type=int,
        default=None,
        choices=DAYS_PER_MOVE,
        metavar="N",
        help=_("create: days per move (correspondence)"),
    )
    tour.add_argument("--minutes", type=int, default=None, help=_("create: how long an arena lasts (5-1440)"))
    tour.add_argument("--new-name", default=None, help=_("edit: the new name"))
    tour.add_argument("--starts-at", default=None, metavar="TIME", help=_("create, edit: when it starts (local time)"))
    tour.add_argument("--opens", default=None, metavar="TIME", help=_("create, edit: registration opens (local time)"))
    tour.add_argument(
        "--closes", default=None, metavar="TIME", help=_("create, edit: registration closes (local time)")
    )
    tour.add_argument("--min-rating", type=int, default=None, help=_("create, edit: the rating a player needs"))
    tour.add_argument("--min-games", type=int, default=None, help=_("create, edit: the rated games a player needs"))
    tour.add_argument(
        "--code", default=None, help=_("join: the invitation code; create, edit: needs one (empty: no code)")
    )
    tour.add_argument("--late-join", type=int, default=None, metavar="ROUND", help=_("create, edit: late join until"))
    tour.add_argument(
        "--round-times",
        default=None,
        metavar="TIME,TIME",
        help=_("create, edit: start times of rounds 2, 3, ... (local time; empty: none)"),
    )
    tour.add_argument(
        "--manual-rounds",
        choices=("on", "off"),
        default=None,
        help=_("create, edit: a director starts each round (next-round)"),
    )
    tour.add_argument("--ban", action="store_true", help=_("remove: never let them join again"))
    tour.add_argument("--reason", default="", help=_("remove, terminate, correct: the reason given"))
    tour.add_argument("--everyone", action="store_true", help=_("pause: hold the whole tournament (an arena too)"))
    tour.add_argument("--round", type=int, default=None, help=_("correct: the game's round (arena: 0)"))
    tour.add_argument("--board", type=int, default=None, help=_("correct: the game's board"))
    tour.add_argument("--decider", type=int, default=0, help=_("correct: knockout decider (0: the first game)"))
    tour.add_argument("--ranks", default=None, metavar="1,2", help=_("correct: the place per seat (a draw: 1,1)"))
    out = tour.add_mutually_exclusive_group()
    out.add_argument("--csv", metavar="DIR", default=None, help=_("export: CSV files into DIR"))
    out.add_argument("--json", metavar="DIR", default=None, help=_("export: JSON files into DIR"))


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
        if left.by_director:
            why = f" ({left.reason})" if left.reason else ""
            if left.banned:
                return (_("a director banned you") if mine else _("a director banned {name}").format(name=who(p))) + why
            return (_("a director removed you") if mine else _("a director removed {name}").format(name=who(p))) + why
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
        over = _("the tournament is over: {podium}").format(podium=podium)
        if event.finished.terminated:
            over = _("a director ended the tournament early: {podium}").format(podium=podium)
            over += f" ({event.finished.reason})" if event.finished.reason else ""
        return "[bold]" + over + "[/bold]"
    if kind == "paused":
        if event.paused.paused:
            return "[bold]" + _("a director paused the tournament: the next round waits") + "[/bold]"
        return "[bold]" + _("the tournament goes on") + "[/bold]"
    if kind == "round_scheduled":
        scheduled = event.round_scheduled
        if scheduled.HasField("starts_at"):
            return _("round {n} starts {time}").format(n=scheduled.round, time=local_time(scheduled.starts_at))
        return _("round {n} starts when a director starts it").format(n=scheduled.round)
    if kind == "result_corrected":
        fixed = event.result_corrected
        names = ", ".join(
            f"{who(p)} {number(points)}" for p, points in zip(fixed.game.players, fixed.game.points, strict=False)
        )
        return (
            "[bold]"
            + _("a director corrected round {n}, board {board}: {names} ({reason})").format(
                n=fixed.round, board=fixed.game.board, names=names, reason=fixed.reason
            )
            + "[/bold]"
        )
    if kind == "announcement":
        said = event.announcement
        return "[bold]" + _("announcement from {name}:").format(name=who(said.director)) + "[/bold] " + said.text
    if kind == "updated":
        return _("the directors changed the tournament's settings")
    if kind == "arena_game_started":
        game = event.arena_game_started.game
        names = _(" vs ").join(who(p) for p in game.players)
        return "  " + _("new game: {names} (game {game_id})").format(names=names, game_id=game.game_id)
    if kind == "cancelled":
        # The reason is a machine code (CANCELLED_BY_ORGANISER, TOO_FEW_PLAYERS), said in words.
        from tafel.refusals import REFUSALS

        why = event.cancelled.reason
        why = _(REFUSALS[why]) if why in REFUSALS else why
        return _("the tournament was cancelled: {reason}").format(reason=why)
    return f"({kind})"


def _time(text: str) -> Timestamp:
    """ "2026-12-24 19:00" (this machine's time, or with its offset) as a Timestamp."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise SystemExit(_("{text!r} is not a time: write it like 2026-12-24 19:00").format(text=text)) from None
    stamp = Timestamp()
    stamp.FromDatetime(moment.astimezone(UTC))
    return stamp


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """The CreateTournamentRequest fields the options give (for create and edit)."""
    fields: dict[str, Any] = {}
    if args.new_name is not None:
        fields["name"] = args.new_name
    if args.rounds is not None:
        fields["rounds"] = args.rounds
    if args.capacity is not None:
        fields["capacity"] = args.capacity
    if args.starts_at is not None:
        fields["starts_at"] = _time(args.starts_at)
    if args.opens is not None:
        fields["registration_opens_at"] = _time(args.opens)
    if args.closes is not None:
        fields["registration_closes_at"] = _time(args.closes)
    if args.min_rating is not None or args.min_games is not None or args.code is not None:
        fields["entry"] = tp.EntryConditions(
            min_rating=args.min_rating or 0, min_rated_games=args.min_games or 0, invitation_required=bool(args.code)
        )
    if args.code is not None:
        fields["invitation_code"] = args.code
    if args.late_join is not None:
        fields["late_join_until_round"] = args.late_join
    if args.round_times is not None:
        fields["round_start_times"] = [_time(t) for t in args.round_times.split(",") if t.strip()]
    if args.manual_rounds is not None:
        fields["manual_rounds"] = args.manual_rounds == "on"
    return fields


def describe(t: tp.Tournament) -> list[str]:
    """What a player reads about a tournament beyond its name: the format's facts, entry, rounds'
    times, the pause."""
    lines = [
        f"[bold]{t.name}[/bold] · {game_title(t.game)} · {_enum_word(FORMAT_WORDS, t.format)}"
        f" · {_enum_word(STATE_WORDS, t.state)}"
    ]
    if t.format == tp.TOURNAMENT_FORMAT_ARENA and t.HasField("ends_at"):
        lines.append(_("ends {time}").format(time=local_time(t.ends_at)))
    if t.entry.min_rating:
        lines.append(_("needs a rating of at least {n}").format(n=t.entry.min_rating))
    if t.entry.min_rated_games:
        lines.append(_("needs at least {n} rated games").format(n=t.entry.min_rated_games))
    if t.entry.invitation_required:
        lines.append(_("needs an invitation code") + (f": {t.invitation_code}" if t.invitation_code else ""))
    if t.HasField("registration_opens_at") or t.HasField("registration_closes_at"):
        lines.append(
            _("registration from {opens} to {closes}").format(
                opens=local_time(t.registration_opens_at) or "…", closes=local_time(t.registration_closes_at) or "…"
            )
        )
    if t.late_join_until_round:
        lines.append(_("players may join until round {n}").format(n=t.late_join_until_round))
    for number_, stamp in enumerate(t.round_start_times, start=2):
        lines.append(_("round {n} starts {time}").format(n=number_, time=local_time(stamp)))
    if t.manual_rounds:
        lines.append(_("a director starts each round"))
    if t.HasField("next_round_at"):
        lines.append(_("the next round starts {time}").format(time=local_time(t.next_round_at)))
    if t.paused:
        lines.append("[bold]" + _("paused by a director") + "[/bold]")
    if t.terminated:
        lines.append(_("ended early by a director"))
    return lines


def _player(t: tp.Tournament, name: str) -> play_pb2.Player:
    for p in t.players:
        if name in (p.username, p.player_id, p.display_name):
            return p
    raise SystemExit(_("{name} does not take part in {tournament}").format(name=name, tournament=t.name))


def _ranks(text: str | None) -> list[int]:
    try:
        ranks = [int(r) for r in (text or "").split(",") if r.strip()]
    except ValueError:
        ranks = []
    if len(ranks) < 2:
        raise SystemExit(_("give a place per seat with --ranks, e.g. 1,2 (a draw: 1,1)"))
    return ranks


def standings_table(response: tp.GetStandingsResponse, arena: bool, me: str) -> Table:
    table = Table(title=_("final standings") if response.final else _("standings"))
    for header in ("#", _("player"), _("points"), _("games"), _("wins"), _("draws"), _("losses")):
        table.add_column(header)
    table.add_column(_("streak") if arena else _("Buchholz"))
    table.add_column(_("performance") if arena else _("Sonneborn-Berger"))
    for row in response.standings:
        name = _("you") if row.player.player_id == me else player_name(row.player)
        if row.banned:
            name += " " + _("(banned)")
        elif row.withdrawn:
            name += " " + _("(withdrawn)")
        elif row.paused:
            name += " " + _("(paused)")
        # A streak of two wins or more doubles the next win's points: a flame says so.
        streak = (number(row.streak) + (" 🔥" if row.streak >= 2 else "")) if arena else number(row.buchholz)
        last = number(round(row.performance)) if arena else number(row.sonneborn_berger)
        table.add_row(
            number(row.rank),
            name,
            number(row.points),
            number(row.games),
            number(row.wins),
            number(row.draws),
            number(row.losses),
            streak,
            last,
        )
    return table


def write_files(folder: Path, files: Mapping[str, bytes]) -> list[Path]:
    """The export's files into `folder`; the server names them, and only the name is kept (never a
    path a name might carry)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in files.items():
        path = folder / Path(name).name
        path.write_bytes(data)
        written.append(path)
    return written


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
                number(t.player_count or len(t.players)),
                _enum_word(STATE_WORDS, t.state),
            )
        console.print(table)
        return 0
    if not args.target:
        console.print(_("give the tournament id (see `tafel tournament list`), or a name for create"))
        return 2
    if args.action == "create":
        return await create(client, args, console)
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
        joined = await client.join_tournament(args.target, invitation_code=args.code or "")
        console.print(
            _("joined {name}; your games open by themselves — following it now (Ctrl-C stops)").format(name=joined.name)
        )
        for line in describe(joined)[1:]:
            console.print("  " + line, highlight=False)
    if args.action in ("join", "watch"):
        return await follow(client, args.target, playing=args.action == "join", console=console)
    return await direct(client, args, console)


async def create(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    fields: dict[str, Any] = {"name": args.target, "game": args.game, "format": FORMATS[args.format]}
    fields.update(settings(args))
    if args.days:
        fields["time_control"] = {"days_per_move": args.days}
    elif args.per_move:
        fields["time_control"] = {"per_move": duration(args.per_move)}
    if args.format == "arena":
        fields["arena_duration"] = duration(60 * (args.minutes or 30))
    created = await client.create_tournament(**fields)
    console.print(
        _(
            "created {name}: id [bold]{id}[/bold]. Players join with `tafel tournament join {id}`;"
            " start it with `tafel tournament start {id}`."
        ).format(name=created.name, id=created.tournament_id)
    )
    return 0


async def direct(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    """The directors' actions, an arena player's pause, the standings and the audit log."""
    tid = args.target
    me = client.player.player_id
    if args.action == "standings":
        t = await client.get_tournament(tid)
        for line in describe(t):
            console.print(line, highlight=False)
        arena = t.format == tp.TOURNAMENT_FORMAT_ARENA
        console.print(standings_table(await client.standings(tid), arena, me))
        return 0
    if args.action == "edit":
        fields = settings(args)
        if not fields:
            console.print(_("name what to change, e.g. --capacity 32 or --round-times '2026-12-24 19:00'"))
            return 2
        edited = await client.update_tournament(tid, **fields)
        console.print(_("changed {name}:").format(name=edited.name))
        for line in describe(edited)[1:]:
            console.print("  " + line, highlight=False)
        return 0
    if args.action == "remove":
        if not args.more:
            console.print(_("name the player to remove: tafel tournament remove ID NAME"))
            return 2
        t = await client.get_tournament(tid)
        who = _player(t, args.more[0])
        await client.remove_player(tid, who.player_id, ban=args.ban, reason=args.reason)
        said = _("banned {name} from {tournament}") if args.ban else _("removed {name} from {tournament}")
        console.print(said.format(name=player_name(who), tournament=t.name))
        return 0
    if args.action in ("pause", "back"):
        t = await client.get_tournament(tid)
        playing = any(p.player_id == me for p in t.players)
        if t.format == tp.TOURNAMENT_FORMAT_ARENA and playing and not args.everyone:
            await client.pause_arena_play(tid, paused=args.action == "pause")
            if args.action == "pause":
                console.print(_("paused: you are not paired again until `tafel tournament back {id}`").format(id=tid))
            else:
                console.print(_("back: you are paired as soon as an opponent is free"))
            return 0
        if args.action == "back":
            console.print(_("only an arena's players pause and come back; a director resumes with `resume`"))
            return 2
        await client.pause_tournament(tid)
        console.print(_("paused: games being played go on; the next round waits for `resume`"))
        return 0
    if args.action == "resume":
        await client.resume_tournament(tid)
        console.print(_("resumed"))
        return 0
    if args.action == "next-round":
        answer = await client.start_next_round(tid)
        console.print(_("round {n} started").format(n=answer.round.number))
        return 0
    if args.action == "terminate":
        ended = await client.terminate_tournament(tid, args.reason)
        console.print(_("{name} is over: final standings").format(name=ended.name))
        console.print(standings_table(await client.standings(tid), ended.format == tp.TOURNAMENT_FORMAT_ARENA, me))
        return 0
    if args.action == "correct":
        if args.round is None or args.board is None or not args.reason:
            console.print(_("give --round, --board, --ranks and --reason"))
            return 2
        corrected = await client.correct_result(
            tid,
            round_number=args.round,
            board=args.board,
            decider=args.decider,
            ranks=_ranks(args.ranks),
            reason=args.reason,
        )
        names = ", ".join(
            f"{player_name(p)} {number(points)}"
            for p, points in zip(corrected.game.players, corrected.game.points, strict=False)
        )
        console.print(
            _("round {n}, board {board} corrected: {names}").format(n=args.round, board=args.board, names=names)
        )
        return 0
    if args.action == "announce":
        text = " ".join(args.more)
        if not text:
            console.print(_("write the message: tafel tournament announce ID 'Round 3 starts at 20:00'"))
            return 2
        sent = await client.announce(tid, text)
        console.print(ngettext("announced to {n} player", "announced to {n} players", sent).format(n=sent))
        return 0
    if args.action == "audit":
        table = Table(title=_("what the directors did"))
        for header in (_("time"), _("director"), _("action"), _("what"), _("reason")):
            table.add_column(header)
        for entry in await client.tournament_audit(tid):
            table.add_row(
                local_time(entry.at), player_name(entry.director), entry.action, in_words(entry.detail), entry.reason
            )
        console.print(table)
        return 0
    if args.action == "export":
        folder = args.csv or args.json
        if not folder:
            console.print(_("give --csv DIR or --json DIR"))
            return 2
        files = await client.export_tournament(tid, format="csv" if args.csv else "json")
        for path in await asyncio.to_thread(write_files, Path(folder), files):
            console.print(_("wrote {path}").format(path=path), highlight=False)
        return 0
    return 2


async def follow(client: TafelClient, tournament_id: str, *, playing: bool, console: Console) -> int:
    me = client.player.player_id
    # No retry limit (Ctrl-C stops): once back, the feed goes on from the last event it showed.
    told = console_connection(console, _("The tournament goes on."), _("Following the tournament again."))
    async for event in client.watch_tournament(tournament_id, max_retries=None, on_connection=told):
        console.print(event_line(event, me), highlight=False)
        if not playing:
            continue
        kind = event.WhichOneof("kind")
        # A round's games start together; an arena pairs each player again as soon as they are free.
        if kind == "round_started":
            mine = list(event.round_started.round.games)
        elif kind == "arena_game_started":
            mine = [event.arena_game_started.game]
        else:
            continue
        for game in mine:
            seats = [p.player_id for p in game.players]
            if me in seats and game.game_id:
                from tafel.cli.app import GameApp, screen_title

                state = await client.get_game(game.game_id)
                seat = seats.index(me)
                await GameApp(client, game.game_id, seat, screen_title(state.summary, seat)).run_async()
    return 0
