"""A player's own protection and account from the terminal: `tafel block|unblock|mute|unmute NAME`,
`tafel blocked`, `tafel report NAME --reason R`, `tafel standing` and `tafel account
password|export|delete`."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tafel.chat import channel
from tafel.cli.words import local_time, reason_word, sanction_word, until_text
from tafel.client import TafelClient
from tafel.errors import NotFound, TafelError
from tafel.i18n import _, number
from tafel.play.v1 import social_pb2
from tafel.requests import report_reason

# Commands that act on the signed-in account: a terminal guest is a new one every run, so its
# blocks, standing or password would belong to nobody the person can be again.
NEEDS_ACCOUNT = frozenset({"block", "unblock", "mute", "unmute", "blocked", "standing", "account"})


def needs_account(args: argparse.Namespace) -> None:
    if args.command in NEEDS_ACCOUNT and not args.user:
        what = f"tafel {args.command}" + (f" {args.action}" if args.command == "account" else "")
        raise TafelError(
            "NEEDS_ACCOUNT",
            _(
                "`{command}` is about your account: sign in with --user NAME (or set TAFEL_USER); "
                "a guest of the terminal is a new one each time"
            ).format(command=what),
        )


async def safety(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    """One of the commands above, signed in already."""
    command = args.command
    if command == "block":
        player = await client.block(args.name)
        console.print(
            _(
                "Blocked {name}: you will not be matched or seated with them, they cannot invite or challenge you, "
                "and their chat is hidden from you. They are not told. (`tafel unblock {name}` undoes it.)"
            ).format(name=player.username),
            highlight=False,
        )
    elif command == "unblock":
        await client.unblock(args.name)
        console.print(_("Unblocked {name}.").format(name=args.name), highlight=False)
    elif command == "mute":
        player = await client.mute(args.name)
        console.print(
            _(
                "Muted {name}: their chat is hidden from you; nothing else changes. (`tafel unmute {name}` undoes it.)"
            ).format(name=player.username),
            highlight=False,
        )
    elif command == "unmute":
        await client.unmute(args.name)
        console.print(_("Unmuted {name}.").format(name=args.name), highlight=False)
    elif command == "blocked":
        listed = await client.list_blocked()
        for title, players in ((_("blocked"), listed.blocked), (_("muted"), listed.muted)):
            names = ", ".join(sorted(p.username for p in players))
            console.print(f"{title:<8} {names or _('nobody')}", highlight=False)
    elif command == "report":
        line = None
        if args.chat:
            if not args.game:
                console.print(_("[red]refused:[/red] --chat needs the game: add --game ID."), highlight=False)
                return 2
            line = await _latest_line(client, args.game, args.name)
            if line is None:
                console.print(
                    _("[red]not found:[/red] {name} wrote nothing in that game's chat that you can see.").format(
                        name=args.name
                    ),
                    highlight=False,
                )
                return 1
        report_id = await client.report(
            args.name,
            args.reason,
            game_id=args.game,
            message_id=line.message_id if line else "",
            chat_channel=line.channel if line else None,
            details=args.details,
        )
        console.print(
            _("Reported {name} for {reason} (report {id}). The moderators will look at it; thank you.").format(
                name=args.name, reason=reason_word(report_reason(args.reason)), id=report_id
            ),
            highlight=False,
        )
    elif command == "standing":
        return await standing(client, console)
    elif command == "account":
        return await account(client, args, console)
    return 0


async def standing(client: TafelClient, console: Console) -> int:
    answer = await client.my_standing()
    if not answer.sanctions and not answer.warnings:
        console.print(
            _("{name}: in good standing (no warnings, no sanctions).").format(name=client.player.username),
            highlight=False,
        )
        return 0
    if answer.sanctions:
        table = Table(title=_("in force now"), title_justify="left")
        for header in (_("sanction"), _("since"), _("until"), _("reason")):
            table.add_column(header)
        for sanction in answer.sanctions:
            table.add_row(
                sanction_word(sanction.kind),
                local_time(sanction.starts_at),
                until_text(sanction, word=False),
                sanction.reason,
            )
        console.print(table)
    else:
        console.print(_("no sanction in force"), highlight=False)
    if answer.warnings:
        table = Table(title=_("warnings from the moderators"), title_justify="left")
        table.add_column(_("when"), no_wrap=True)
        table.add_column(_("message"))
        for warning in answer.warnings:
            table.add_row(local_time(warning.at), warning.message)
        console.print(table)
    return 0


async def account(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    if args.action == "password":
        new = new_password(args.user)
        await client.change_password(args.password, new)
        console.print(_("Password changed. Every other session of your account was signed out."), highlight=False)
        return 0
    if args.action == "export":
        document = await client.export_my_data()
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        if args.output == "-":
            sys.stdout.write(text)
            return 0
        path = Path(args.output or f"tafel-export-{client.player.username}.json")
        await asyncio.to_thread(path.write_text, text, encoding="utf-8")
        console.print(
            _("Your data ({size} bytes of JSON) is in {path}.").format(size=number(len(text.encode())), path=path),
            highlight=False,
        )
        return 0
    # delete
    if not args.yes:
        confirm(client.player.username)
    await client.delete_account(args.password)
    console.print(
        _(
            "The account {name} is deleted: its personal data is erased, its finished games show a "
            "placeholder for the name, and every session is signed out."
        ).format(name=args.user),
        highlight=False,
    )
    return 0


def new_password(user: str) -> str:
    """$TAFEL_NEW_PASSWORD, else asked twice without echo (never an argument: `ps` shows those)."""
    if os.environ.get("TAFEL_NEW_PASSWORD"):
        return os.environ["TAFEL_NEW_PASSWORD"]
    try:
        first = getpass.getpass(_("new password for {name}: ").format(name=user))
        again = getpass.getpass(_("the new password again: "))
    except EOFError:
        raise TafelError("NO_PASSWORD", _("no new password: set TAFEL_NEW_PASSWORD or run in a terminal")) from None
    if first != again:
        raise TafelError("PASSWORDS_DIFFER", _("the two new passwords differ; nothing was changed"))
    return first


def confirm(username: str) -> None:
    """Deleting cannot be undone: the person types the account's name (or passes --yes)."""
    print(
        _(
            "Deleting {name} cannot be undone: the account, its ratings, blocks and mutes are erased, "
            "and its finished games stay with a placeholder for the name."
        ).format(name=username)
    )
    try:
        typed = input(_("Type {name} to delete it: ").format(name=username))
    except EOFError:
        typed = ""
    if typed.strip() != username:
        raise TafelError("NOT_CONFIRMED", _("not deleted (the name typed did not match; --yes skips the question)"))


async def _latest_line(client: TafelClient, game_id: str, username: str) -> social_pb2.ChatMessage | None:
    """The player's latest line in the game's chat you read: its players' channel if you played,
    else its spectators' (a channel keeps 500 lines: one page)."""
    for kind in ("players", "spectators"):
        try:
            kept = await client.list_chat(channel(kind, game_id), page_size=500)
        except NotFound:
            continue
        said = [m for m in kept.messages if m.author.username.lower() == username.lower()]
        if said:
            return said[-1]
    return None
