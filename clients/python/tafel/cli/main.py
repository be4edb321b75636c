"""`tafel`: the terminal client.

    tafel play connect4                  # matchmaking
    tafel play plus4 --vs-bot 3          # a room with a bot from the pool
    tafel play coloursquare --vs-bot 1 --seats 4   # a table of you and three bots
    tafel play coloursquare --room ABCD  # join a friend's room (or --new-room to host one)
    tafel watch GAME_ID
    tafel games [--live]                 # your live and finished games (or everyone's live ones)
    tafel replay GAME_ID                 # step through a finished game's record
    tafel leaderboard connect4
    tafel tournament list | create NAME | join ID | start ID | watch ID
    tafel bot connect4 --level 2 [--games N]
    tafel bot-pool                        # answer people's requests for a bot opponent
    tafel challenge NAME GAME [--rated] [--per-move 30s] [--seat first|second]
    tafel challenge --bot LEVEL GAME [--per-move 30s] [--seat first|second]
    tafel challenges [accept ID | decline ID --reason later | cancel ID | wait]
    tafel block NAME | unblock NAME | mute NAME | unmute NAME | blocked
    tafel report NAME --reason abuse [--game ID] [--details TEXT]
    tafel standing                       # your warnings and sanctions in force
    tafel friends | follow NAME | unfollow NAME   # whom you follow: playing, online, last seen
    tafel profile NAME                   # ratings with their history, last games, results against you
    tafel settings [--chat on|off] [--challenges everyone|followed|nobody]
    tafel account password | export [--output FILE] | delete

The options --server, --user and --register go before or after the subcommand. The password comes
from TAFEL_PASSWORD or a prompt (never the command line: it would show in `ps` and the history).
"""

from __future__ import annotations

import tafel.grpc_polling  # noqa: F401  (first: gRPC reads its experiments when imported)

# isort: split
import argparse
import asyncio
import getpass
import os
import sys

from rich.console import Console
from rich.table import Table

from tafel.cli.shared import id_column
from tafel.client import TafelClient
from tafel.errors import (
    AlreadyExists,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    TafelError,
    Unauthenticated,
    Unavailable,
)
from tafel.play.v1 import safety_pb2
from tafel.requests import enum_names

GAMES = ("connect4", "plus4", "coloursquare")
SAFETY_COMMANDS = frozenset({"block", "unblock", "mute", "unmute", "blocked", "report", "standing", "account"})
PEOPLE_COMMANDS = frozenset({"friends", "follow", "unfollow", "profile", "settings"})
DEFAULT_SERVER = "127.0.0.1:50051"


def server_and_account(user_help: str) -> tuple[argparse.ArgumentParser, argparse._ArgumentGroup]:
    """A parent parser with --server and --user (tafel and tafel-admin share them), and its group
    for more options. Accepted before and after the subcommand."""
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("server and account")
    # SUPPRESS: a subcommand's copy must not overwrite a value given before the subcommand.
    group.add_argument(
        "--server",
        default=argparse.SUPPRESS,
        metavar="HOST:PORT[,...]",
        help=f"gateway address(es); default $TAFEL_SERVER or {DEFAULT_SERVER}",
    )
    group.add_argument("--user", default=argparse.SUPPRESS, help=user_help)
    return common, group


def _common() -> argparse.ArgumentParser:
    """The account and server options, accepted before and after the subcommand."""
    common, group = server_and_account(
        "your user name (default $TAFEL_USER; a guest without one); password from $TAFEL_PASSWORD or a prompt"
    )
    group.add_argument(
        "--name",
        default=argparse.SUPPRESS,
        metavar="DISPLAY NAME",
        help='the name others see, in any script ("Jörg de Vries"; default $TAFEL_NAME); kept with an account',
    )
    group.add_argument(
        "--register",
        action="store_true",
        default=argparse.SUPPRESS,
        help="create the account --user names if it does not exist yet",
    )
    return common


def parser() -> argparse.ArgumentParser:
    common = _common()
    root = argparse.ArgumentParser(
        prog="tafel",
        description="Play tafel games from the terminal.",
        parents=[common],
        epilog="Start a local server first with `make run`.",
    )
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=help_text, description=help_text, parents=[common])

    play = command("play", "play a game")
    play.add_argument("game", choices=GAMES)
    how = play.add_mutually_exclusive_group()
    how.add_argument("--room", metavar="CODE", help="join a room by its invite code")
    how.add_argument("--new-room", action="store_true", help="host a room and show its invite code")
    how.add_argument("--vs-bot", type=int, choices=(1, 2, 3), metavar="LEVEL", help="play a bot (1-3)")
    how.add_argument("--solo", action="store_true", help="Colour Square alone")
    play.add_argument(
        "--seats",
        type=int,
        default=0,
        help="table size for --new-room (default: the game's most); with --vs-bot, you and SEATS-1 bots (default 2)",
    )
    play.add_argument("--per-move", type=float, default=None, metavar="SECONDS", help="seconds per move")
    play.add_argument(
        "--watchable", action="store_true", help="a room's game may be watched by anyone (rooms are private otherwise)"
    )
    play.add_argument(
        "--target",
        type=int,
        default=0,
        help="Plus 4: points (or rounds) to win, default 11; Colour Square: solo target",
    )
    play.add_argument("--mode", choices=("points", "first_line", "rounds"), help="Plus 4: how a game is won")
    play.add_argument("--side", choices=("A", "B"), help="Colour Square: the sheet's side")

    watch = command("watch", "watch a game live")
    watch.add_argument("game_id")

    games = command("games", "list your live and finished games (or --live: everyone's running games)")
    games.add_argument("--live", action="store_true", help="everyone's running games, to watch")

    replay = command("replay", "step through a finished game's record")
    replay.add_argument("game_id")

    board = command("leaderboard", "ratings of a game")
    board.add_argument("game", choices=GAMES)

    bot = command("bot", "run a bot that plays through matchmaking")
    bot.add_argument("game", choices=GAMES)
    bot.add_argument("--level", type=int, choices=(1, 2, 3), default=1)
    bot.add_argument("--games", type=int, default=0, help="stop after N games (0 = forever)")
    bot.add_argument("--per-move", type=float, default=None, metavar="SECONDS", help="the clock it searches for")

    tour = command("tournament", "list, create, join, start or watch tournaments")
    tour.add_argument("action", choices=("list", "create", "join", "start", "watch"))
    tour.add_argument("target", nargs="?", default="", metavar="ID_OR_NAME", help="the tournament id (name for create)")
    tour.add_argument("--game", choices=GAMES, default="connect4", help="create: the game")
    tour.add_argument(
        "--format", choices=("swiss", "round_robin", "knockout", "tables"), default="swiss", help="create: the format"
    )
    tour.add_argument("--rounds", type=int, default=0, help="create: rounds (swiss, tables)")
    tour.add_argument("--capacity", type=int, default=0, help="create: most players (default 64)")
    tour.add_argument("--per-move", type=float, default=None, metavar="SECONDS", help="create: seconds per move")

    pool = command("bot-pool", "answer requests for bot opponents")
    # Empty: every game the server offers (a platform with a game switched off refused a pool that
    # named it, and no bot served any game).
    pool.add_argument("--games", nargs="+", default=[], help="games to serve (default: every game the server offers)")

    duel = command("challenge", "challenge a player (or a bot) to a game, wait for the answer, then play it")
    duel.add_argument("name", metavar="NAME", nargs="?", default="", help="their user name (not with --bot)")
    duel.add_argument("game", choices=GAMES)
    duel.add_argument("--bot", type=int, choices=(1, 2, 3), metavar="LEVEL", help="challenge a bot of level 1-3")
    duel.add_argument("--rated", action="store_true", help="a rated game (casual by default; guests play casual)")
    duel.add_argument("--per-move", default=None, metavar="TIME", help="time per move: 30s, 2m, 1m30s")
    duel.add_argument("--seat", choices=("first", "second"), default=None, help="move first or second (default: drawn)")
    from tafel.cli.challenges import reason_choices

    listed = command("challenges", "your challenges, in and out: accept, decline or withdraw one, or wait for new ones")
    listed.add_argument("action", nargs="?", default="list", choices=("list", "accept", "decline", "cancel", "wait"))
    listed.add_argument("id", nargs="?", default="", metavar="ID", help="the challenge (`tafel challenges` lists them)")
    reasons_said = reason_choices()
    listed.add_argument(
        "--reason",
        default="generic",
        choices=reasons_said,
        metavar="REASON",
        help="decline: " + ", ".join(reasons_said),
    )

    for name, help_text in (
        ("block", "never be matched or seated with a player; they cannot invite you and their chat is hidden"),
        ("unblock", "stop blocking a player"),
        ("mute", "hide a player's chat from you"),
        ("unmute", "show a muted player's chat again"),
    ):
        command(name, help_text).add_argument("name", metavar="NAME", help="their user name")
    command("blocked", "the players you block and mute")
    report = command("report", "report a player to the moderators")
    report.add_argument("name", metavar="NAME", help="whom the report is about")
    reasons = enum_names(safety_pb2.ReportReason, "REPORT_REASON_")
    report.add_argument("--reason", required=True, choices=reasons, metavar="REASON", help=", ".join(reasons))
    report.add_argument("--game", default="", metavar="ID", help="the game it happened in")
    report.add_argument("--details", default="", metavar="TEXT", help="what happened, in your words (1,000 characters)")
    command("standing", "your warnings and the sanctions in force")
    from tafel.cli.people import add_commands

    add_commands(command)
    account = command("account", "change your password, export your data or delete your account")
    account.add_argument("action", choices=("password", "export", "delete"))
    account.add_argument(
        "--output", default="", metavar="FILE", help="export: the file (default tafel-export-NAME.json; - for stdout)"
    )
    account.add_argument("--yes", action="store_true", help="delete: without asking to type the name")
    return root


def settle(args: argparse.Namespace) -> argparse.Namespace:
    """Fills the global options from the environment where the command line left them out."""
    args.server = getattr(args, "server", None) or os.environ.get("TAFEL_SERVER") or DEFAULT_SERVER
    args.user = getattr(args, "user", None) or os.environ.get("TAFEL_USER") or None
    args.register = getattr(args, "register", False)
    args.name = getattr(args, "name", None) or os.environ.get("TAFEL_NAME") or ""
    return args


def ask_password(user: str | None) -> str:
    """$TAFEL_PASSWORD, else a prompt that does not echo (never an argument: `ps` shows those)."""
    if not user:
        return ""
    if os.environ.get("TAFEL_PASSWORD"):
        return os.environ["TAFEL_PASSWORD"]
    try:
        return getpass.getpass(f"password for {user}: ")
    except EOFError:
        raise TafelError("NO_PASSWORD", f"no password for {user!r}: set TAFEL_PASSWORD or run in a terminal") from None


async def sign_in(
    client: TafelClient, user: str | None, password: str, register: bool, console: Console, name: str = ""
) -> None:
    """Signs in (a guest without a user), with `name` as the display name others see."""
    if not user:
        await client.sign_in_as_guest(name)
        return
    try:
        await client.sign_in(user, password)
        if name and name != client.player.display_name:
            await client.set_display_name(name)
        return
    except Unauthenticated as error:
        # The server does not say whether the name or the password was wrong (it would tell a
        # stranger which names exist): a new account is made only when asked for.
        if error.reason != "BAD_CREDENTIALS":
            raise
        if not register:
            raise TafelError(
                "BAD_CREDENTIALS",
                f"wrong user name or password for {user!r}; to create a new account add --register",
            ) from None
    try:
        await client.register(user, password, name)
    except AlreadyExists:
        raise TafelError("BAD_CREDENTIALS", f"the account {user!r} exists and the password is wrong") from None
    console.print(f"registered the new account {user!r}")


async def run(args: argparse.Namespace, console: Console) -> int:
    targets = [t for t in args.server.split(",") if t]
    async with await TafelClient.connect(targets) as client:
        if args.command in SAFETY_COMMANDS:
            from tafel.cli.safety import needs_account, safety

            needs_account(args)
            await sign_in(client, args.user, args.password, args.register, console, args.name)
            return await safety(client, args, console)
        if args.command in PEOPLE_COMMANDS:
            from tafel.cli.people import needs_account as people_account
            from tafel.cli.people import people

            people_account(args)
            await sign_in(client, args.user, args.password, args.register, console, args.name)
            return await people(client, args, console)
        await sign_in(client, args.user, args.password, args.register, console, args.name)
        if args.command == "play":
            from tafel.cli.playing import play

            return await play(client, args, console)
        if args.command == "watch":
            from tafel.cli.playing import watch

            return await watch(client, args.game_id, console)
        if args.command == "games":
            return await list_games(client, args.live, console)
        if args.command == "replay":
            from tafel.cli.replay import replay

            return await replay(client, args.game_id, console)
        if args.command == "leaderboard":
            return await leaderboard(client, args.game, console)
        if args.command == "tournament":
            from tafel.cli.tournaments import tournaments

            return await tournaments(client, args, console)
        if args.command == "bot":
            from tafel.botplay import run_bot

            return await run_bot(client, args.game, args.level, args.games, per_move_s=args.per_move)
        if args.command in ("challenge", "challenges"):
            from tafel.cli import challenges

            if args.command == "challenge":
                return await challenges.challenge(client, args, console)
            return await challenges.challenges(client, args, console)
        if args.command == "bot-pool":
            from tafel.botplay import run_pool

            return await run_pool(client, args.games)
    return 2


async def list_games(client: TafelClient, live: bool, console: Console) -> int:
    from tafel.cli.describe import GAME_TITLES, outcome_text, seat_names
    from tafel.names import player_name

    if live:
        response = await client.list_live_games()
        table = Table(title="games being played now (tafel watch GAME_ID)")
        id_column(table, "game id", [g.game_id for g in response.games])
        for header in ("game", "players"):
            table.add_column(header)
        for summary in response.games:
            players = ", ".join(player_name(p.player) for p in summary.players)
            table.add_row(summary.game_id, GAME_TITLES.get(summary.game, summary.game), players)
        console.print(table)
        return 0
    mine = await client.list_my_games()
    running = [g for g in mine.games if not g.status.over]
    if running:
        table = Table(title="your games in progress (tafel watch GAME_ID)")
        id_column(table, "game id", [g.game_id for g in running])
        for header in ("game", "players", "to move"):
            table.add_column(header)
        for summary in running:
            names = seat_names(summary.players, None)
            table.add_row(
                summary.game_id,
                GAME_TITLES.get(summary.game, summary.game),
                ", ".join(names),
                ", ".join(names[s] for s in summary.status.to_act if s < len(names)),
            )
        console.print(table)
    records = await client.list_records(player_id=client.player.player_id)
    table = Table(title="your finished games (tafel replay GAME_ID)")
    id_column(table, "game id", [r.game_id for r in records.records])
    for header in ("game", "players", "result", "ended"):
        table.add_column(header)
    for record in records.records:
        me = next((p.seat for p in record.players if p.player.player_id == client.player.player_id), None)
        table.add_row(
            record.game_id,
            GAME_TITLES.get(record.game, record.game),
            ", ".join(player_name(p.player) for p in record.players),
            outcome_text(record.outcome, seat_names(record.players, me)),
            record.ended_at.ToDatetime().strftime("%Y-%m-%d %H:%M") if record.HasField("ended_at") else "",
        )
    console.print(table if records.records else "no finished games yet")
    return 0


async def leaderboard(client: TafelClient, game: str, console: Console) -> int:
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


BARRED = ("ACCOUNT_SUSPENDED", "ACCOUNT_BANNED")


def barred_sentence(error: TafelError) -> str:
    """A suspended or banned account's refusal: the server's sentence (the moderator's reason in
    it) with the suspension's end in this machine's local time."""
    from tafel.cli.words import local_time, local_times

    text = local_times(error.message.rstrip("."), zone=True)
    if error.until is not None and "until" not in text:
        text += f" (until {local_time(error.until, zone=True)})"
    return text[:1].upper() + text[1:] + "."


def error_line(error: TafelError, args: argparse.Namespace) -> tuple[str, int]:
    """One readable line per failure (never a traceback), and the exit status."""
    if isinstance(error, Unavailable):
        return (
            f"[red]cannot reach the tafel server at {args.server}[/red] — is it running? "
            "Start one with `make run` (or pass --server HOST:PORT).",
            1,
        )
    if isinstance(error, PermissionDenied) and error.reason in BARRED:
        return f"[red]{barred_sentence(error)}[/red]", 1
    if isinstance(error, NotFound):
        return f"[red]not found:[/red] {error.message or error.reason}", 1
    if isinstance(error, InvalidArgument):
        return f"[red]refused:[/red] {error.message or error.reason}", 2
    return f"[red]error:[/red] {error.message or error.reason}", 1


def main(argv: list[str] | None = None) -> None:
    args = settle(parser().parse_args(argv))
    console = Console()
    try:
        args.password = ask_password(args.user)
        code = asyncio.run(run(args, console))
    except KeyboardInterrupt:
        code = 130
    except TafelError as error:
        line, code = error_line(error, args)
        console.print(line, highlight=False, soft_wrap=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
