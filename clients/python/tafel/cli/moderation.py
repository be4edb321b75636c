"""The staff's terminal: what `tafel-admin` does besides `grant` (the server's console script,
gateway/standing/admin_cli.py, makes the first admin straight in Redis and hands every other
subcommand to `main` here, which talks to a gateway like any client, signed in as a staff account).

    tafel-admin reports [--all]              # the queue, oldest open first
    tafel-admin report ID                    # one report with the game and the account
    tafel-admin resolve ID NOTE
    tafel-admin lookup NAME
    tafel-admin warn NAME MESSAGE
    tafel-admin mute NAME 30m REASON         # in chat; durations like 30m, 2h, 7d, 1d12h
    tafel-admin suspend NAME 7d REASON
    tafel-admin ban NAME REASON
    tafel-admin lift NAME SANCTION_ID REASON
    tafel-admin rename NAME NEW REASON
    tafel-admin audit [NAME]
    tafel-admin role NAME ROLE REASON        # admins: player, organiser, moderator or admin
    tafel-admin staff                        # admins: every account with a staff role

Signing in as `tafel` does: --server (or $TAFEL_SERVER), --user (or $TAFEL_USER), the password
from $TAFEL_PASSWORD or a prompt. Times are shown in this machine's time zone.
"""

from __future__ import annotations

import tafel.grpc_polling  # noqa: F401  (first: gRPC reads its experiments when imported)

# isort: split
import argparse
import asyncio
import os
from collections.abc import Iterable

from rich import box
from rich.console import Console
from rich.table import Table

from tafel.admin.v1 import admin_pb2
from tafel.cli.describe import game_title, outcome_text, seat_names
from tafel.cli.main import DEFAULT_SERVER, ask_password, error_line, server_and_account, sign_in
from tafel.cli.words import (
    action_word,
    in_words,
    local_time,
    parse_duration,
    reason_word,
    role_word,
    sanction_word,
    until_text,
)
from tafel.client import TafelClient
from tafel.errors import PermissionDenied, TafelError
from tafel.play.v1 import play_pb2
from tafel.requests import enum_names
from tafel.staff import StaffClient

PROG = "tafel-admin"


def parser() -> argparse.ArgumentParser:
    common, _ = server_and_account(
        "your staff account (default $TAFEL_USER); password from $TAFEL_PASSWORD or a prompt"
    )
    root = argparse.ArgumentParser(
        prog=PROG,
        description="Handle reports, sanction accounts, read the audit log and grant roles.",
        parents=[common],
        epilog=f"On the server itself, `{PROG} grant NAME ROLE` makes the first admin (straight in Redis).",
    )
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=help_text, description=help_text, parents=[common])

    reports = command("reports", "the open reports, oldest first")
    reports.add_argument("--all", action="store_true", help="resolved reports too")
    command("report", "one report with its game and the reported account").add_argument("report_id", metavar="ID")
    resolve = command("resolve", "close a report with a note of what was done")
    resolve.add_argument("report_id", metavar="ID")
    resolve.add_argument("note", metavar="NOTE")
    command("lookup", "an account: role, sanctions, warnings, reports, last games").add_argument("name", metavar="NAME")
    warn = command("warn", "a warning the player reads")
    warn.add_argument("name", metavar="NAME")
    warn.add_argument("message", metavar="MESSAGE")
    for name, help_text in (
        ("mute", "mute a player in chat for a time"),
        ("suspend", "refuse a player's sign-in and every call for a time (their live games are forfeited)"),
    ):
        timed = command(name, help_text)
        timed.add_argument("name", metavar="NAME")
        timed.add_argument("duration", metavar="DURATION", help="like 30m, 2h, 7d or 1d12h (1 minute to 365 days)")
        timed.add_argument("reason", metavar="REASON", help="shown to the player")
    ban = command("ban", "refuse a player's sign-in and every call until lifted")
    ban.add_argument("name", metavar="NAME")
    ban.add_argument("reason", metavar="REASON", help="shown to the player")
    for action in (warn, ban, *(commands.choices[n] for n in ("mute", "suspend"))):
        action.add_argument("--report", default="", metavar="ID", help="the report this answers")
    lift = command("lift", "end a sanction before its time")
    lift.add_argument("name", metavar="NAME")
    lift.add_argument("sanction_id", metavar="SANCTION_ID", help="from `lookup NAME`")
    lift.add_argument("reason", metavar="REASON")
    rename = command("rename", "give an account a new user name (its sessions are signed out)")
    rename.add_argument("name", metavar="NAME")
    rename.add_argument("new_name", metavar="NEW")
    rename.add_argument("reason", metavar="REASON")
    audit = command("audit", "the audit log, newest first")
    audit.add_argument("name", nargs="?", default="", metavar="NAME", help="only the entries about this account")
    audit.add_argument("--limit", type=int, default=50, help="entries to show (default 50)")
    role = command("role", "give an account a role (admins)")
    role.add_argument("name", metavar="NAME")
    role.add_argument("role", metavar="ROLE", choices=enum_names(play_pb2.Role, "ROLE_"))
    role.add_argument("reason", metavar="REASON")
    command("staff", "every account holding a staff role (admins)")
    return root


def main(argv: list[str] | None = None, console: Console | None = None) -> int:
    """Runs one staff command; returns the exit status (0 done, 1 refused or failed, 2 misused)."""
    from tafel.i18n import use

    # The staff's terminal speaks English only (its words are not in the catalogue): the shared
    # helpers it uses (words.py, describe.py) must not answer a moderator's $LANG halfway.
    use("en")
    try:
        args = parser().parse_args(argv)
    except SystemExit as stop:  # --help, or a usage error argparse has printed
        return stop.code if isinstance(stop.code, int) else 2
    args.server = getattr(args, "server", None) or os.environ.get("TAFEL_SERVER") or DEFAULT_SERVER
    args.user = getattr(args, "user", None) or os.environ.get("TAFEL_USER") or ""
    console = console or Console(highlight=False)
    if args.command in ("mute", "suspend"):
        try:
            args.duration_s = parse_duration(args.duration).total_seconds()
        except ValueError as error:
            console.print(f"[red]{PROG}:[/red] {error}", highlight=False)
            return 2
    try:
        if not args.user:
            raise TafelError("NEEDS_ACCOUNT", "sign in as a staff account: --user NAME (or set TAFEL_USER)")
        args.password = ask_password(args.user)
        return asyncio.run(run(args, console))
    except KeyboardInterrupt:
        return 130
    except TafelError as error:
        if isinstance(error, PermissionDenied) and error.reason == "ROLE_REQUIRED":
            roles = error.metadata.get("roles", "")
            who = f" ({roles.replace(',', ' or ')})" if roles else ""
            console.print(f"[red]refused:[/red] {args.user} has no staff role for this{who}.", highlight=False)
            return 1
        line, code = error_line(error, args)
        console.print(line, highlight=False, soft_wrap=True)
        return code


async def run(args: argparse.Namespace, console: Console) -> int:
    targets = [t for t in args.server.split(",") if t]
    async with await TafelClient.connect(targets) as client:
        await sign_in(client, args.user, args.password, False, console)
        staff = StaffClient(client)
        command = args.command
        if command == "reports":
            await show_reports(staff, args.all, console)
        elif command == "report":
            await show_report(staff, args.report_id, console)
        elif command == "resolve":
            report = await staff.resolve_report(args.report_id, args.note)
            console.print(f"Resolved report {report.report_id} (about {report.reported.username}): {args.note}")
        elif command == "lookup":
            show_account(await staff.look_up(args.name), console)
        elif command == "warn":
            warning = await staff.warn(args.name, args.message, report_id=args.report)
            console.print(f"Warned {args.name} (warning {warning.warning_id}): {warning.message}")
        elif command in ("mute", "suspend", "ban"):
            kind = {"mute": "chat_mute", "suspend": "suspension", "ban": "ban"}[command]
            sanction = await staff.sanction(
                args.name, kind, args.reason, duration_s=getattr(args, "duration_s", 0.0), report_id=args.report
            )
            done = {"mute": "Muted in chat", "suspend": "Suspended", "ban": "Banned"}[command]
            console.print(f"{done} {args.name} {until_text(sanction)}: {sanction.reason}")
            lift = f"{PROG} lift {args.name} {sanction.sanction_id} REASON"
            console.print(f"  sanction {sanction.sanction_id}; `{lift}` ends it")
        elif command == "lift":
            await staff.lift_sanction(args.name, args.sanction_id, args.reason)
            console.print(f"Lifted sanction {args.sanction_id} of {args.name}.")
        elif command == "rename":
            player = await staff.rename(args.name, args.new_name, args.reason)
            console.print(f"Renamed {args.name} to {player.username}; their sessions were signed out.")
        elif command == "audit":
            await show_audit(staff, args.name, args.limit, console)
        elif command == "role":
            account = await staff.set_role(args.name, args.role, args.reason)
            console.print(f"{account.player.username} is now {article(role_word(account.role))}.")
        elif command == "staff":
            show_staff(await staff.list_staff(), console)
    return 0


def article(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def table(*headers: str, title: str = "") -> Table:
    """A plain table: a rule under the headers, no frame (copies cleanly from a terminal)."""
    out = Table(box=box.SIMPLE_HEAD, title=title or None, title_justify="left", pad_edge=False, show_edge=False)
    for header in headers:
        out.add_column(header, no_wrap=header in ("id", "when", "filed", "since", "until", "sanction id"))
    return out


def facts(rows: Iterable[tuple[str, str]], console: Console) -> None:
    """Aligned "label  value" lines; the empty values left out."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for label, value in rows:
        if value:
            grid.add_row(label, value)
    console.print(grid)


def where(report: admin_pb2.Report) -> str:
    parts = [f"game {report.game_id}" if report.game_id else ""]
    parts.append(f"message {report.message_id}" if report.message_id else "")
    return ", ".join(p for p in parts if p)


# -- reports ----------------------------------------------------------------------------------------


async def show_reports(staff: StaffClient, include_resolved: bool, console: Console) -> None:
    first = await staff.list_reports(include_resolved=include_resolved, page_size=100)
    reports = list(first.reports)
    token = first.next_page_token
    while token:
        page = await staff.list_reports(include_resolved=include_resolved, page_size=100, page_token=token)
        reports.extend(page.reports)
        token = page.next_page_token
    opened = f"{first.open_count} open report{'s' if first.open_count != 1 else ''}"
    if not reports:
        console.print(f"{opened}: the queue is empty." if not include_resolved else "No reports yet.")
        return
    headers = ["id", "filed", "about", "reason", "by", "where", "details"]
    if include_resolved:
        headers.insert(1, "status")
    out = table(*headers, title=f"{opened} (`{PROG} report ID` shows one)")
    for report in reports:
        row = [
            report.report_id,
            local_time(report.created_at),
            report.reported.username,
            reason_word(report.reason),
            report.reporter.username,
            where(report),
            report.details,
        ]
        if include_resolved:
            row.insert(1, "open" if report.status == admin_pb2.REPORT_STATUS_OPEN else "resolved")
        out.add_row(*row)
    console.print(out)


async def show_report(staff: StaffClient, report_id: str, console: Console) -> None:
    answer = await staff.get_report(report_id)
    report = answer.report
    status = "open" if report.status == admin_pb2.REPORT_STATUS_OPEN else "resolved"
    console.print(f"[bold]Report {report.report_id}[/bold] ({status})")
    facts(
        [
            ("filed", f"{local_time(report.created_at)} by {report.reporter.username}"),
            ("about", report.reported.username),
            ("reason", reason_word(report.reason)),
            ("where", where(report)),
            ("details", report.details or "(none given)"),
            (
                "resolved",
                f"{local_time(report.resolved_at)} by {report.resolved_by.username}: {report.resolution}"
                if report.status == admin_pb2.REPORT_STATUS_RESOLVED
                else "",
            ),
        ],
        console,
    )
    if answer.HasField("game"):
        console.print()
        console.print("[bold]The game[/bold]")
        game_facts(answer.game, console)
    elif report.game_id:
        console.print(f"\nThe game {report.game_id} has no record (not finished, or gone).")
    if answer.HasField("account"):
        console.print()
        show_account(answer.account, console)
    if report.status == admin_pb2.REPORT_STATUS_OPEN:
        name = report.reported.username
        console.print(
            f"\nAct with `{PROG} warn|mute|suspend|ban {name} ... --report {report.report_id}`, "
            f"then `{PROG} resolve {report.report_id} NOTE`."
        )


def game_facts(record: play_pb2.GameRecord, console: Console) -> None:
    names = seat_names(record.players, None)
    facts(
        [
            ("game", f"{record.game_id}, {game_title(record.game)}"),
            ("players", ", ".join(p.player.username for p in record.players)),
            ("result", outcome_text(record.outcome, names)),
            ("ended", local_time(record.ended_at)),
            ("moves", str(len(record.actions))),
        ],
        console,
    )


# -- accounts ---------------------------------------------------------------------------------------


def show_account(account: admin_pb2.Account, console: Console) -> None:
    player = account.player
    console.print(f"[bold]{player.username}[/bold] ({role_word(account.role)})")
    in_force = {s.sanction_id for s in account.sanctions}
    facts(
        [
            ("account id", player.player_id),
            ("joined", local_time(account.joined_at)),
            ("reports", f"{account.reports_about} about them, {account.reports_made} made by them"),
            (
                "now",
                "; ".join(f"{sanction_word(s.kind)} {until_text(s)}" for s in account.sanctions)
                or "no sanction in force",
            ),
        ],
        console,
    )
    if account.history:
        out = table("sanction id", "kind", "since", "until", "state", "reason", title="sanctions")
        for sanction in account.history:
            end = local_time(sanction.ends_at) if sanction.HasField("ends_at") else "until lifted"
            state = "in force" if sanction.sanction_id in in_force else "over"
            out.add_row(
                sanction.sanction_id,
                sanction_word(sanction.kind),
                local_time(sanction.starts_at),
                end,
                state,
                sanction.reason,
            )
        console.print()
        console.print(out)
    if account.warnings:
        out = table("when", "message", title="warnings")
        for warning in account.warnings:
            out.add_row(local_time(warning.at), warning.message)
        console.print()
        console.print(out)
    if account.recent_games:
        out = table("game id", "game", "players", "result", "ended", title="last games")
        for record in account.recent_games:
            out.add_row(
                record.game_id,
                game_title(record.game),
                ", ".join(p.player.username for p in record.players),
                outcome_text(record.outcome, seat_names(record.players, None)),
                local_time(record.ended_at),
            )
        console.print()
        console.print(out)


def show_staff(accounts: list[admin_pb2.Account], console: Console) -> None:
    if not accounts:
        console.print("No account holds a staff role.")
        return
    joined = any(a.HasField("joined_at") for a in accounts)
    out = table("name", "role", *(["joined"] if joined else []))
    for account in sorted(accounts, key=lambda a: (-a.role, a.player.username)):
        row = [account.player.username, role_word(account.role)]
        out.add_row(*row, *([local_time(account.joined_at)] if joined else []))
    console.print(out)


# -- the audit log ----------------------------------------------------------------------------------


async def show_audit(staff: StaffClient, username: str, limit: int, console: Console) -> None:
    entries: list[admin_pb2.AuditEntry] = []
    token = ""
    while len(entries) < limit:
        page = await staff.audit_log(username, page_size=min(100, limit - len(entries)), page_token=token)
        entries.extend(page.entries)
        token = page.next_page_token
        if not token:
            break
    about = f" about {username}" if username else ""
    if not entries:
        console.print(f"The audit log has no entries{about}.")
        return
    more = " (older ones: --limit N)" if token else ""
    out = table("when", "who", "action", "whom", "reason", "details", title=f"audit log{about}, newest first{more}")
    for entry in entries[:limit]:
        out.add_row(
            local_time(entry.at),
            entry.actor.username,
            action_word(entry.action),
            entry.subject.username,
            entry.reason,
            in_words(" ".join(f"{k}={v}" for k, v in sorted(entry.details.items()))),
        )
    console.print(out)
