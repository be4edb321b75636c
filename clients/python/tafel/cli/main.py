"""`tafel`: the terminal client.

    tafel play connect4                  # matchmaking
    tafel play plus4 --vs-bot 3          # a room with a bot from the pool
    tafel play coloursquare --vs-bot 1 --seats 4   # a table of you and three bots
    tafel play coloursquare --room ABCD  # join a friend's room (or --new-room to host one)
    tafel watch GAME_ID
    tafel games [--live]                 # your live and finished games (or everyone's live ones)
    tafel replay GAME_ID                 # step through a finished game's record
    tafel leaderboard connect4
    tafel tournament list | create NAME | join ID [--code C] | start ID | watch ID | standings ID
    tafel tournament create NAME --format arena --minutes 30   # an arena; pause ID / back ID
    tafel tournament edit ID --capacity 32 | remove ID NAME [--ban] | pause ID | resume ID
    tafel tournament next-round ID | terminate ID | correct ID --round 2 --board 1 --ranks 1,2 --reason TEXT
    tafel tournament announce ID TEXT | audit ID | export ID --csv DIR | --json DIR
    tafel bot connect4 --level 2 [--games N]
    tafel bot-pool                        # answer people's requests for a bot opponent
    tafel challenge NAME GAME [--rated] [--per-move 30s] [--seat first|second]
    tafel challenge --bot LEVEL GAME [--per-move 30s] [--seat first|second]
    tafel challenges [accept ID | decline ID --reason later | cancel ID | wait]
    tafel block NAME | unblock NAME | mute NAME | unmute NAME | blocked
    tafel report NAME --reason abuse [--game ID [--chat]] [--details TEXT]
    tafel standing                       # your warnings and sanctions in force
    tafel friends | follow NAME | unfollow NAME   # whom you follow: playing, online, last seen
    tafel profile NAME                   # ratings with their history, last games, results against you
    tafel settings [--chat on|off] [--challenges everyone|followed|nobody]
    tafel account password | export [--output FILE] | delete
    tafel inbox [--unread] | read ID|--all | clear ID|--all | wait   # your notices
    tafel notices [--inbox KIND=off] [--email KIND=on] [--quiet 22:00-07:00] [--digest on --digest-hour 8]
    tafel email [ADDRESS | --confirm TOKEN | --remove]
    tafel vacation [start [--hours N] | end]   # your days-long games' clocks stand still
    tafel play connect4 --days 3         # a correspondence game: 1, 2, 3, 5, 7, 10 or 14 days a move
    tafel search [list] | cancel GAME    # your correspondence searches (they wait a week for you)

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

from tafel.by_game import REGISTRY
from tafel.cli.shared import id_column, sentence
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
from tafel.i18n import LANGUAGES, _, number
from tafel.play.v1 import play_pb2, safety_pb2
from tafel.requests import DAYS_PER_MOVE, enum_names

GAMES = tuple(REGISTRY)  # the games this client draws (tafel/by_game/)
SAFETY_COMMANDS = frozenset({"block", "unblock", "mute", "unmute", "blocked", "report", "standing", "account"})
PEOPLE_COMMANDS = frozenset({"friends", "follow", "unfollow", "profile", "settings"})
NOTICE_COMMANDS = frozenset({"inbox", "notices", "email", "vacation"})
DEFAULT_SERVER = "127.0.0.1:50051"
DAYS_HELP = _("a correspondence game: days per move (1, 2, 3, 5, 7, 10 or 14)")


def server_and_account(user_help: str) -> tuple[argparse.ArgumentParser, argparse._ArgumentGroup]:
    """A parent parser with --server and --user (tafel and tafel-admin share them), and its group
    for more options. Accepted before and after the subcommand."""
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group(_("server and account"))
    # SUPPRESS: a subcommand's copy must not overwrite a value given before the subcommand.
    group.add_argument(
        "--server",
        default=argparse.SUPPRESS,
        metavar="HOST:PORT[,...]",
        help=_("gateway address(es); default $TAFEL_SERVER or {server}").format(server=DEFAULT_SERVER),
    )
    group.add_argument("--user", default=argparse.SUPPRESS, help=user_help)
    return common, group


def _common() -> argparse.ArgumentParser:
    """The account and server options, accepted before and after the subcommand."""
    common, group = server_and_account(
        _("your user name (default $TAFEL_USER; a guest without one); password from $TAFEL_PASSWORD or a prompt")
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
        help=_("create the account --user names if it does not exist yet"),
    )
    group.add_argument(
        "--lang",
        default=argparse.SUPPRESS,
        metavar="|".join(LANGUAGES),
        help=_("the language of the words shown (remembered); default $LANG, English for one tafel lacks"),
    )
    return common


def parser() -> argparse.ArgumentParser:
    common = _common()
    root = argparse.ArgumentParser(
        prog="tafel",
        description=_("Play tafel games from the terminal."),
        parents=[common],
        epilog=_("Start a local server first with `make run`."),
    )
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=help_text, description=help_text, parents=[common])

    play = command("play", _("play a game"))
    play.add_argument("game", choices=GAMES)
    how = play.add_mutually_exclusive_group()
    how.add_argument("--room", metavar="CODE", help=_("join a room by its invite code"))
    how.add_argument("--new-room", action="store_true", help=_("host a room and show its invite code"))
    how.add_argument("--vs-bot", type=int, choices=(1, 2, 3), metavar="LEVEL", help=_("play a bot (1-3)"))
    how.add_argument("--solo", action="store_true", help=_("Colour Square alone"))
    play.add_argument(
        "--seats",
        type=int,
        default=0,
        help=_("table size for --new-room (default: the game's most); with --vs-bot, you and SEATS-1 bots (default 2)"),
    )
    timing = play.add_mutually_exclusive_group()
    timing.add_argument("--per-move", type=float, default=None, metavar="SECONDS", help=_("seconds per move"))
    timing.add_argument("--days", type=int, default=None, choices=DAYS_PER_MOVE, metavar="N", help=DAYS_HELP)
    play.add_argument(
        "--watchable",
        action="store_true",
        help=_("a room's game may be watched by anyone (rooms are private otherwise)"),
    )
    play.add_argument(
        "--target",
        type=int,
        default=0,
        help=_("Plus 4: points (or rounds) to win, default 11; Colour Square: solo target"),
    )
    play.add_argument("--mode", choices=("points", "first_line", "rounds"), help=_("Plus 4: how a game is won"))
    play.add_argument("--side", choices=("A", "B"), help=_("Colour Square: the sheet's side"))

    watch = command("watch", _("watch a game live"))
    watch.add_argument("game_id")

    games = command("games", _("list your live and finished games (or --live: everyone's running games)"))
    games.add_argument("--live", action="store_true", help=_("everyone's running games, to watch"))

    replay = command("replay", _("step through a finished game's record"))
    replay.add_argument("game_id")

    board = command("leaderboard", _("ratings of a game"))
    board.add_argument("game", choices=GAMES)

    command("catalogue", _("the games this server offers, with their options in words"))

    bot = command("bot", _("run a bot that plays through matchmaking"))
    bot.add_argument("game", choices=GAMES)
    bot.add_argument("--level", type=int, choices=(1, 2, 3), default=1)
    bot.add_argument("--games", type=int, default=0, help=_("stop after N games (0 = forever)"))
    bot.add_argument("--per-move", type=float, default=None, metavar="SECONDS", help=_("the clock it searches for"))

    tour = command("tournament", _("list, create, join, play, watch or direct tournaments (see `tafel tournament -h`)"))
    from tafel.cli.tournaments import add_arguments

    add_arguments(tour, GAMES)

    pool = command("bot-pool", _("answer requests for bot opponents"))
    # Empty: every game the server offers (a platform with a game switched off refused a pool that
    # named it, and no bot served any game).
    pool.add_argument(
        "--games", nargs="+", default=[], help=_("games to serve (default: every game the server offers)")
    )

    duel = command("challenge", _("challenge a player (or a bot) to a game, wait for the answer, then play it"))
    duel.add_argument("name", metavar="NAME", nargs="?", default="", help=_("their user name (not with --bot)"))
    duel.add_argument("game", choices=GAMES)
    duel.add_argument("--bot", type=int, choices=(1, 2, 3), metavar="LEVEL", help=_("challenge a bot of level 1-3"))
    duel.add_argument("--rated", action="store_true", help=_("a rated game (casual by default; guests play casual)"))
    duel_timing = duel.add_mutually_exclusive_group()
    duel_timing.add_argument("--per-move", default=None, metavar="TIME", help=_("time per move: 30s, 2m, 1m30s"))
    duel_timing.add_argument("--days", type=int, default=None, choices=DAYS_PER_MOVE, metavar="N", help=DAYS_HELP)
    duel.add_argument(
        "--seat", choices=("first", "second"), default=None, help=_("move first or second (default: drawn)")
    )
    from tafel.cli.challenges import reason_choices

    listed = command(
        "challenges", _("your challenges, in and out: accept, decline or withdraw one, or wait for new ones")
    )
    listed.add_argument("action", nargs="?", default="list", choices=("list", "accept", "decline", "cancel", "wait"))
    listed.add_argument(
        "id", nargs="?", default="", metavar="ID", help=_("the challenge (`tafel challenges` lists them)")
    )
    reasons_said = reason_choices()
    listed.add_argument(
        "--reason",
        default="generic",
        choices=reasons_said,
        metavar="REASON",
        help=_("decline: ") + ", ".join(reasons_said),
    )

    for name, help_text in (
        ("block", _("never be matched or seated with a player; they cannot invite you and their chat is hidden")),
        ("unblock", _("stop blocking a player")),
        ("mute", _("hide a player's chat from you")),
        ("unmute", _("show a muted player's chat again")),
    ):
        command(name, help_text).add_argument("name", metavar="NAME", help=_("their user name"))
    command("blocked", _("the players you block and mute"))
    report = command("report", _("report a player to the moderators"))
    report.add_argument("name", metavar="NAME", help=_("whom the report is about"))
    reasons = enum_names(safety_pb2.ReportReason, "REPORT_REASON_")
    report.add_argument("--reason", required=True, choices=reasons, metavar="REASON", help=", ".join(reasons))
    report.add_argument("--game", default="", metavar="ID", help=_("the game it happened in"))
    report.add_argument(
        "--chat",
        action="store_true",
        help=_("report their latest chat line in that game (with --game); the moderators see the lines around it"),
    )
    report.add_argument(
        "--details", default="", metavar="TEXT", help=_("what happened, in your words (1,000 characters)")
    )
    command("standing", _("your warnings and the sanctions in force"))
    from tafel.cli.people import add_commands

    add_commands(command)
    from tafel.cli.notices import add_commands as add_notice_commands

    add_notice_commands(command)
    from tafel.cli.searches import add_commands as add_search_commands

    add_search_commands(command)
    account = command("account", _("change your password, export your data or delete your account"))
    account.add_argument("action", choices=("password", "export", "delete"))
    account.add_argument(
        "--output",
        default="",
        metavar="FILE",
        help=_("export: the file (default tafel-export-NAME.json; - for stdout)"),
    )
    account.add_argument("--yes", action="store_true", help=_("delete: without asking to type the name"))
    return root


def settle(args: argparse.Namespace) -> argparse.Namespace:
    """Fills the global options from the environment where the command line left them out."""
    args.server = getattr(args, "server", None) or os.environ.get("TAFEL_SERVER") or DEFAULT_SERVER
    args.user = getattr(args, "user", None) or os.environ.get("TAFEL_USER") or None
    args.register = getattr(args, "register", False)
    args.name = getattr(args, "name", None) or os.environ.get("TAFEL_NAME") or ""
    args.lang = getattr(args, "lang", None)
    return args


def asked_language(argv: list[str]) -> str | None:
    """--lang from the command line before it is parsed: the parser's own help is in that language."""
    for index, word in enumerate(argv):
        if word == "--lang" and index + 1 < len(argv):
            return argv[index + 1]
        if word.startswith("--lang="):
            return word.split("=", 1)[1]
    return None


def ask_password(user: str | None) -> str:
    """$TAFEL_PASSWORD, else a prompt that does not echo (never an argument: `ps` shows those)."""
    if not user:
        return ""
    if os.environ.get("TAFEL_PASSWORD"):
        return os.environ["TAFEL_PASSWORD"]
    try:
        return getpass.getpass(_("password for {name}: ").format(name=user))
    except EOFError:
        raise TafelError(
            "NO_PASSWORD", _("no password for {name!r}: set TAFEL_PASSWORD or run in a terminal").format(name=user)
        ) from None


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
                _("wrong user name or password for {name!r}; to create a new account add --register").format(name=user),
            ) from None
    try:
        await client.register(user, password, name)
    except AlreadyExists:
        raise TafelError(
            "BAD_CREDENTIALS", _("the account {name!r} exists and the password is wrong").format(name=user)
        ) from None
    console.print(_("registered the new account {name!r}").format(name=user))


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
        if args.command in NOTICE_COMMANDS:
            from tafel.cli.notices import needs_account as notices_account
            from tafel.cli.notices import notices

            notices_account(args)
            await sign_in(client, args.user, args.password, args.register, console, args.name)
            return await notices(client, args, console)
        if args.command == "search":
            from tafel.cli.notices import needs_account as search_account
            from tafel.cli.searches import searches

            search_account(args)  # a terminal guest is new each run: its searches are nobody's
            await sign_in(client, args.user, args.password, args.register, console, args.name)
            return await searches(client, args, console)
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
        if args.command == "catalogue":
            from tafel.cli.catalogue import catalogue

            return await catalogue(client, console)
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
    from tafel.cli.describe import game_title, outcome_text, seat_names
    from tafel.cli.words import local_time
    from tafel.names import player_name

    if live:
        response = await client.list_live_games()
        table = Table(title=_("games being played now (tafel watch GAME_ID)"))
        id_column(table, _("game id"), [g.game_id for g in response.games])
        for header in (_("game"), _("players")):
            table.add_column(header)
        for summary in response.games:
            players = ", ".join(player_name(p.player) for p in summary.players)
            table.add_row(summary.game_id, game_title(summary.game), players)
        console.print(table)
        return 0
    mine = await client.list_my_games()
    running = [g for g in mine.games if not g.status.over]
    if running:
        table = Table(title=_("your games in progress (tafel watch GAME_ID)"))
        id_column(table, _("game id"), [g.game_id for g in running])
        for header in (_("game"), _("players"), _("to move"), _("clock")):
            table.add_column(header)
        for summary in running:
            names = seat_names(summary.players, None)
            table.add_row(
                summary.game_id,
                game_title(summary.game),
                ", ".join(names),
                ", ".join(names[s] for s in summary.status.to_act if s < len(names)),
                time_left_text(summary),
            )
        console.print(table)
    records = await client.list_records(player_id=client.player.player_id)
    table = Table(title=_("your finished games (tafel replay GAME_ID)"))
    id_column(table, _("game id"), [r.game_id for r in records.records])
    for header in (_("game"), _("players"), _("result"), _("ended")):
        table.add_column(header)
    for record in records.records:
        me = next((p.seat for p in record.players if p.player.player_id == client.player.player_id), None)
        table.add_row(
            record.game_id,
            game_title(record.game),
            ", ".join(player_name(p.player) for p in record.players),
            outcome_text(record.outcome, seat_names(record.players, me)),
            local_time(record.ended_at) if record.HasField("ended_at") else "",
        )
    console.print(table if records.records else _("no finished games yet"))
    return 0


def time_left_text(summary: play_pb2.GameSummary) -> str:
    """The mover's time left ("2 d 5 h"), "on vacation" when they are away (their clock stands)."""
    import time

    from tafel.cli.app import clock_text

    if not summary.HasField("turn_deadline"):
        return ""
    left = clock_text(summary.turn_deadline.seconds - time.time())
    away = any(seat in summary.vacation_seats for seat in summary.status.to_act)
    return _("{left}, on vacation").format(left=left) if away else left


async def leaderboard(client: TafelClient, game: str, console: Console) -> int:
    response = await client.leaderboard(game)
    table = Table(_("rank"), _("player"), _("rating"), "±", "")
    for entry in response.entries:
        rating = entry.rating
        table.add_row(
            number(entry.rank),
            entry.player.username,
            f"{rating.rating:.0f}",
            f"{rating.deviation:.0f}",
            _("provisional") if rating.provisional else "",
        )
    console.print(table)
    if response.HasField("me"):
        console.print(
            _("you: #{rank} ({rating})").format(
                rank=number(response.me.rank), rating=f"{response.me.rating.rating:.0f}"
            )
        )
    return 0


BARRED = ("ACCOUNT_SUSPENDED", "ACCOUNT_BANNED")


def barred_sentence(error: TafelError) -> str:
    """A suspended or banned account's refusal: the server's sentence (the moderator's reason in
    it) with the suspension's end in this machine's local time."""
    from tafel.cli.words import local_time, local_times
    from tafel.i18n import DEFAULT, language

    if language() != DEFAULT:  # the sentence for the reason, with the end and the moderator's words
        text = sentence(error)
        return text[:1].upper() + text[1:] + "."
    text = local_times(error.message.rstrip("."), zone=True)
    if error.until is not None and "until" not in text:
        text += f" (until {local_time(error.until, zone=True)})"
    return text[:1].upper() + text[1:] + "."


def error_line(error: TafelError, args: argparse.Namespace) -> tuple[str, int]:
    """One readable line per failure (never a traceback), and the exit status."""
    if isinstance(error, Unavailable):
        return (
            _(
                "[red]cannot reach the tafel server at {server}[/red] — is it running? "
                "Start one with `make run` (or pass --server HOST:PORT)."
            ).format(server=args.server),
            1,
        )
    if isinstance(error, PermissionDenied) and error.reason in BARRED:
        return f"[red]{barred_sentence(error)}[/red]", 1
    # In the player's language, by the refusal's reason (tafel/refusals.py); English: the server's words.
    if isinstance(error, NotFound):
        return _("[red]not found:[/red] {reason}").format(reason=sentence(error)), 1
    if isinstance(error, InvalidArgument):
        return _("[red]refused:[/red] {reason}").format(reason=sentence(error)), 2
    return _("[red]error:[/red] {reason}").format(reason=sentence(error)), 1


def main(argv: list[str] | None = None) -> None:
    from tafel.i18n import use_from

    words = sys.argv[1:] if argv is None else argv
    use_from(asked_language(words))  # --lang (remembered), else the remembered one, else $LANG
    args = settle(parser().parse_args(words))
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
