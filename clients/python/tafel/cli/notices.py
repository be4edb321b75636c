"""Notices, e-mail and vacations from the terminal: `tafel inbox` (your notices; `--unread`,
`read ID|--all`, `clear ID|--all`, `wait` for new ones as they come), `tafel notices` (which notices
reach you and how, quiet hours, the daily digest), `tafel email [ADDRESS | --confirm TOKEN |
--remove]` and `tafel vacation [start --hours N | end]`."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from tafel.cli.describe import game_title
from tafel.cli.shared import id_column
from tafel.cli.words import local_time, span
from tafel.client import TafelClient
from tafel.errors import TafelError
from tafel.i18n import N_, _, language, ngettext
from tafel.names import player_name
from tafel.play.v1 import notices_pb2
from tafel.requests import enum_names

N = notices_pb2
NOTICE_COMMANDS = frozenset({"inbox", "notices", "email", "vacation"})
# E-mail and vacations are an account's (EMAIL_NEEDS_ACCOUNT); a terminal guest is new each run,
# so its inbox and settings would be empty and forgotten.
KINDS = enum_names(N.NotificationKind, "NOTIFICATION_KIND_")
KIND_NAMES = {
    N.NOTIFICATION_KIND_YOUR_TURN: N_("your move"),
    N.NOTIFICATION_KIND_TIME_RUNNING_OUT: N_("time running out"),
    N.NOTIFICATION_KIND_OPPONENT_MOVED: N_("opponent moved"),
    N.NOTIFICATION_KIND_GAME_OVER: N_("game over"),
    N.NOTIFICATION_KIND_CHALLENGE_RECEIVED: N_("challenge received"),
    N.NOTIFICATION_KIND_ROUND_STARTED: N_("round started"),
    N.NOTIFICATION_KIND_ROUND_STARTING_SOON: N_("round starting soon"),
    N.NOTIFICATION_KIND_ANNOUNCEMENT: N_("director's announcement"),
    N.NOTIFICATION_KIND_OPPONENT_ON_VACATION: N_("opponent on vacation"),
    N.NOTIFICATION_KIND_RESULT_CORRECTED: N_("result corrected"),
}


def add_commands(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """The subcommands, made with main.py's `command(name, help)`."""
    inbox = command("inbox", _("your notices: list them, mark them read, clear them, or wait for new ones"))
    inbox.add_argument("action", nargs="?", default="list", choices=("list", "read", "clear", "wait"))
    inbox.add_argument("ids", nargs="*", default=[], metavar="ID", help=_("the notices (`tafel inbox` lists them)"))
    inbox.add_argument("--unread", action="store_true", help=_("list only the unread ones"))
    inbox.add_argument("--all", action="store_true", help=_("read or clear: every notice"))
    notices = command("notices", _("which notices reach you and how: show them, or change them"))
    notices.add_argument("--inbox", nargs="+", default=[], metavar="KIND=on|off", help=", ".join(KINDS))
    notices.add_argument("--email", nargs="+", default=[], metavar="KIND=on|off", help=_("also e-mailed"))
    notices.add_argument("--quiet", metavar="HH:MM-HH:MM|off", help=_("quiet hours: no e-mail then"))
    notices.add_argument("--time-zone", metavar="ZONE", help=_('your time zone, e.g. "Europe/Amsterdam"'))
    notices.add_argument("--digest", choices=("on", "off"), help=_("a daily e-mail of what waits for you"))
    notices.add_argument("--digest-hour", type=int, metavar="HOUR", help=_("the hour it goes out (0-23)"))
    email = command("email", _("your e-mail address: show it, set it (a link to confirm it is mailed), confirm it"))
    email.add_argument("address", nargs="?", default=None, metavar="ADDRESS")
    email.add_argument("--confirm", metavar="TOKEN", help=_("confirm with the token from the mailed link"))
    email.add_argument("--remove", action="store_true", help=_("remove your address"))
    vacation = command("vacation", _("your vacation: your days-long games' clocks stand still while you are away"))
    vacation.add_argument("action", nargs="?", default="show", choices=("show", "start", "end"))
    vacation.add_argument("--hours", type=int, default=None, help=_("start: how long (default: until you end it)"))


def needs_account(args: argparse.Namespace) -> None:
    confirming = args.command == "email" and args.confirm
    if not args.user and not confirming:
        raise TafelError(
            "NEEDS_ACCOUNT",
            _(
                "`{command}` is about your account: sign in with --user NAME (or set TAFEL_USER); "
                "a guest of the terminal is a new one each time"
            ).format(command=f"tafel {args.command}"),
        )


async def notices(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    """One of the commands above, signed in already (`email --confirm` needs no sign-in)."""
    if args.command == "inbox":
        return await inbox(client, args, console)
    if args.command == "notices":
        return await settings(client, args, console)
    if args.command == "email":
        return await email(client, args, console)
    return await vacation(client, args, console)


# -- the inbox ----------------------------------------------------------------------------------


def _result(notice: notices_pb2.Notification) -> str:
    outcome = notice.outcome
    if not outcome.ranks:
        return _("it ended")
    if outcome.draw:
        return _("a draw")
    return _("you won") if notice.seat in outcome.winners else _("you lost")


def notice_text(notice: notices_pb2.Notification) -> str:
    """The notice as a sentence in the player's language."""
    game = game_title(notice.game) if notice.game else _("a game")
    name = player_name(notice.player) if notice.HasField("player") else _("someone")
    tournament = notice.tournament_name or _("a tournament")
    kind = notice.kind
    if kind == N.NOTIFICATION_KIND_YOUR_TURN:
        if notice.HasField("player"):
            return _("Your move in {game} against {name}.").format(game=game, name=name)
        return _("Your move in {game}.").format(game=game)
    if kind == N.NOTIFICATION_KIND_TIME_RUNNING_OUT:
        hours = notice.hours_left
        return ngettext(
            "Your clock in {game} runs out in {n} hour ({when}).",
            "Your clock in {game} runs out in {n} hours ({when}).",
            hours,
        ).format(game=game, n=hours, when=local_time(notice.deadline))
    if kind == N.NOTIFICATION_KIND_OPPONENT_MOVED:
        return _("{name} moved in {game}.").format(name=name, game=game)
    if kind == N.NOTIFICATION_KIND_GAME_OVER:
        return _("Your game of {game} is over: {result}.").format(game=game, result=_result(notice))
    if kind == N.NOTIFICATION_KIND_CHALLENGE_RECEIVED:
        return _("{name} challenged you to {game} (tafel challenges).").format(name=name, game=game)
    if kind == N.NOTIFICATION_KIND_ROUND_STARTED:
        return _("Round {round} of {tournament} has started.").format(round=notice.round, tournament=tournament)
    if kind == N.NOTIFICATION_KIND_ROUND_STARTING_SOON:
        return _("Round {round} of {tournament} starts at {when}.").format(
            round=notice.round, tournament=tournament, when=local_time(notice.starts_at)
        )
    if kind == N.NOTIFICATION_KIND_ANNOUNCEMENT:
        return _("{name} in {tournament}: “{text}”").format(name=name, tournament=tournament, text=notice.text)
    if kind == N.NOTIFICATION_KIND_OPPONENT_ON_VACATION:
        return _("{name} is on vacation until {when}; their clock in {game} stands still.").format(
            name=name, when=local_time(notice.until), game=game
        )
    if kind == N.NOTIFICATION_KIND_RESULT_CORRECTED:
        return _("A result in {tournament} (round {round}) was corrected: {text}").format(
            tournament=tournament, round=notice.round, text=notice.text
        )
    return _("A notice.")


def notice_target(notice: notices_pb2.Notification) -> str:
    """Where to go from the terminal: the game's id (tafel watch / play), or the tournament's."""
    return notice.game_id or notice.tournament_id or notice.challenge_id


async def inbox(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    if args.action in ("read", "clear"):
        if not args.ids and not args.all:
            raise TafelError("NO_NOTICE", _("name the notices (`tafel inbox` lists them) or give --all"))
        if args.action == "read":
            left = await client.mark_notifications_read(*args.ids, all=args.all)
        else:
            left = await client.clear_notifications(*args.ids, all=args.all)
        console.print(ngettext("{n} unread notice left", "{n} unread notices left", left).format(n=left))
        return 0
    if args.action == "wait":
        return await wait(client, console)
    response = await client.list_notifications(unread_only=args.unread, page_size=100)
    shown = list(response.notifications)
    if not shown:
        console.print(_("no unread notices") if args.unread else _("no notices"))
        return 0
    table = Table(
        title=ngettext("your notices ({n} unread)", "your notices ({n} unread)", response.unread).format(
            n=response.unread
        )
    )
    id_column(table, _("id"), [n.notification_id for n in shown])
    for header in ("", _("when"), _("notice"), _("game or tournament")):
        table.add_column(header)
    for notice in shown:
        table.add_row(
            notice.notification_id,
            "" if notice.read else "•",
            local_time(notice.at),
            notice_text(notice),
            notice_target(notice),
        )
    console.print(table)
    console.print(_("tafel inbox read ID | read --all | clear ID | clear --all"), highlight=False)
    return 0


async def wait(client: TafelClient, console: Console) -> int:
    """Print each new notice as it comes, and the unread count when it changes elsewhere."""
    first = await client.list_notifications(unread_only=True, page_size=1)
    console.print(
        ngettext(
            "{n} unread notice; waiting for new ones (Ctrl+C to stop)",
            "{n} unread notices; waiting for new ones (Ctrl+C to stop)",
            first.unread,
        ).format(n=first.unread),
        highlight=False,
    )
    async with client.event_stream() as events:
        async for event in events:
            which = event.WhichOneof("kind")
            if which == "notification":
                notice = event.notification
                target = notice_target(notice)
                console.print(
                    f"{local_time(notice.at)}  {notice_text(notice)}" + (f"  [{target}]" if target else ""),
                    highlight=False,
                    markup=False,
                )
            elif which == "inbox":
                unread = event.inbox.unread
                console.print(ngettext("{n} unread notice", "{n} unread notices", unread).format(n=unread))
    return 0


# -- settings -----------------------------------------------------------------------------------


def _switches(values: list[str], flag: str) -> dict[str, bool]:
    """["your_turn=off", "announcement=on"] -> {"your_turn": False, "announcement": True}."""
    out: dict[str, bool] = {}
    for value in values:
        kind, _sep, state = value.partition("=")
        if state not in ("on", "off") or kind.replace("-", "_").lower() not in KINDS:
            raise TafelError(
                "BAD_NOTIFICATION_SETTINGS",
                _("{flag} {value}: write KIND=on or KIND=off, KIND one of {kinds}").format(
                    flag=flag, value=value, kinds=", ".join(KINDS)
                ),
            )
        out[kind] = state == "on"
    return out


def _minutes(text: str) -> int:
    hours, _sep, minutes = text.partition(":")
    return int(hours) * 60 + int(minutes or 0)


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _quiet(text: str) -> tuple[int, int] | bool:
    if text == "off":
        return False
    start, _sep, end = text.partition("-")
    try:
        return _minutes(start), _minutes(end)
    except ValueError:
        raise TafelError(
            "BAD_NOTIFICATION_SETTINGS", _("--quiet {text}: write it like 22:00-07:00, or off").format(text=text)
        ) from None


async def settings(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    changing = (
        args.inbox
        or args.email
        or args.quiet
        or args.time_zone is not None
        or args.digest
        or args.digest_hour is not None
    )
    if not changing:
        now = await client.notification_settings()
        console.print(_("your notice settings:"), highlight=False)
    else:
        now = await client.update_notification_settings(
            inbox=_switches(args.inbox, "--inbox"),
            email=_switches(args.email, "--email"),
            quiet_hours=None if args.quiet is None else _quiet(args.quiet),
            time_zone=args.time_zone,
            email_digest=None if args.digest is None else args.digest == "on",
            digest_hour=args.digest_hour,
        )
        console.print(_("changed; your notice settings now:"), highlight=False)
    table = Table(_("notice"), _("kind"), _("inbox"), _("e-mail"))
    for preference in now.preferences:
        table.add_row(
            _(KIND_NAMES.get(preference.kind, "")),
            N.NotificationKind.Name(preference.kind).removeprefix("NOTIFICATION_KIND_").lower(),
            _("on") if preference.inbox else _("off"),
            _("on") if preference.email else _("off"),
        )
    console.print(table)
    quiet = now.quiet_hours
    hours = f"{_clock(quiet.start_minute)}-{_clock(quiet.end_minute)}" if quiet.enabled else _("off")
    console.print("  " + _("quiet hours: {hours}").format(hours=hours), highlight=False)
    console.print("  " + _("time zone: {zone}").format(zone=now.time_zone or "UTC"), highlight=False)
    digest = _("at {hour}").format(hour=_clock(now.digest_hour * 60)) if now.email_digest else _("off")
    console.print("  " + _("daily digest: {digest}").format(digest=digest), highlight=False)
    return 0


def _address_lines(address: notices_pb2.EmailAddress) -> list[str]:
    lines = []
    if address.address:
        state = _("confirmed") if address.confirmed else _("waiting for confirmation")
        lines.append(_("your e-mail: {address} ({state})").format(address=address.address, state=state))
    if address.pending_address:
        lines.append(
            _("{address} waits for confirmation: follow the link mailed to it").format(address=address.pending_address)
        )
    return lines or [_("no e-mail address (tafel email ADDRESS sets one)")]


async def email(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    if args.confirm:
        answer = await client.confirm_email(args.confirm)
        console.print(
            _("{address} is confirmed for {name}").format(address=answer.email.address, name=answer.username),
            highlight=False,
        )
        return 0
    if args.remove or args.address is not None:
        address = "" if args.remove else args.address.strip()
        now = await client.set_email(address, language=language())
        if address:
            console.print(_("a link to confirm it is on its way to {address}").format(address=address), highlight=False)
    else:
        now = await client.get_email()
    for line in _address_lines(now):
        console.print(line, highlight=False)
    return 0


# -- vacations ----------------------------------------------------------------------------------


async def vacation(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    if args.action == "start":
        now = await client.start_vacation(args.hours)
    elif args.action == "end":
        now = await client.end_vacation()
    else:
        now = await client.vacation()
    if now.active:
        if now.HasField("ends_at"):
            console.print(_("you are on vacation until {when}").format(when=local_time(now.ends_at)), highlight=False)
        else:
            console.print(
                _("you are on vacation since {when}").format(when=local_time(now.started_at)), highlight=False
            )
        console.print(_("your games' clocks stand still; `tafel vacation end` to come back"), highlight=False)
    else:
        console.print(_("you are not on vacation"), highlight=False)
    left = now.allowance_left.ToTimedelta().total_seconds()
    allowance = now.allowance.ToTimedelta().total_seconds()
    console.print(
        _("left this year: {left} of {allowance}").format(left=span(left), allowance=span(allowance)), highlight=False
    )
    return 0
