"""`tafel search list | cancel GAME`: your correspondence searches. A search for a
days-long game (`tafel play GAME --days N`) stays queued after the terminal closes, for a week,
until someone is paired with it (the game then shows in `tafel games` and your inbox) or you
cancel it."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from tafel.cli.describe import game_title
from tafel.cli.words import local_time, span, time_left
from tafel.client import TafelClient
from tafel.i18n import _, ngettext

SEARCH_COMMANDS = frozenset({"search"})


def add_commands(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """The subcommand, made with main.py's `command(name, help)`."""
    search = command("search", _("your searches for a days-long game: list them, or cancel one"))
    search.add_argument("action", nargs="?", default="list", choices=("list", "cancel"))
    search.add_argument("game", nargs="?", default=None, metavar="GAME", help=_("cancel: the game searched for"))


async def searches(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    if args.action == "cancel":
        if not args.game:
            console.print(_("name the game whose search to cancel: tafel search cancel GAME"))
            return 2
        answer = await client.cancel_search(args.game)
        if answer.cancelled:
            console.print(_("your search for {game} is cancelled").format(game=game_title(args.game)))
        elif answer.game_id:
            console.print(
                _("too late: your search was paired already; the game is {game_id} (tafel watch {game_id})").format(
                    game_id=answer.game_id
                )
            )
        else:
            console.print(_("you have no search for {game} waiting").format(game=game_title(args.game)))
        return 0
    waiting = await client.list_my_searches()
    if not waiting:
        console.print(_("no searches waiting (tafel play GAME --days N starts one)"))
        return 0
    table = Table(title=_("your open correspondence searches (tafel search cancel GAME)"))
    for header in (_("game"), _("clock"), _("searching since"), _("gives up")):
        table.add_column(header)
    for search in waiting:
        days = search.time_control.days_per_move
        per_move = (
            ngettext("{n} day a move", "{n} days a move", days).format(n=days)
            if days
            else span(search.time_control.per_move.ToSeconds())
        )
        table.add_row(game_title(search.game), per_move, local_time(search.queued_at), time_left(search.expires_at))
    console.print(table)
    return 0
