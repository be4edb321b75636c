"""Knowing each other from the terminal: `tafel friends` (whom you follow, with where
they are now), `tafel follow NAME` / `tafel unfollow NAME`, `tafel profile NAME` (a player's page:
ratings with a text sparkline of their history, last games, results against you) and `tafel
settings` (chat on or off, who may challenge you)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp
from rich.console import Console
from rich.table import Table

from tafel.cli.describe import game_title
from tafel.cli.shared import id_column
from tafel.cli.words import local_time, span
from tafel.client import TafelClient
from tafel.errors import TafelError
from tafel.i18n import N_, _, ngettext
from tafel.names import player_name
from tafel.play.v1 import social_pb2

S = social_pb2
# Commands about the signed-in account's own list or settings: a terminal guest is a new one every
# run (and guests cannot follow: FOLLOW_NEEDS_ACCOUNT).
NEEDS_ACCOUNT = frozenset({"friends", "follow", "unfollow", "settings"})
PEOPLE_COMMANDS = NEEDS_ACCOUNT | {"profile"}
POLICIES = {
    S.CHALLENGE_POLICY_EVERYONE: N_("everyone"),
    S.CHALLENGE_POLICY_FOLLOWED: N_("only players you follow"),
    S.CHALLENGE_POLICY_NOBODY: N_("nobody"),
}
RESULTS = {
    S.GAME_RESULT_WIN: N_("won"),
    S.GAME_RESULT_LOSS: N_("lost"),
    S.GAME_RESULT_DRAW: N_("draw"),
    S.GAME_RESULT_OTHER: "—",
}
BARS = "▁▂▃▄▅▆▇█"
SPARK_POINTS = 24  # the latest ratings a sparkline shows (one character each)


def add_commands(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """The subcommands, made with main.py's `command(name, help)`."""
    command("friends", _("the players you follow: playing which game, online, or when last seen"))
    command("follow", _("follow a player (see them in `tafel friends`)")).add_argument(
        "name", metavar="NAME", help=_("their user name")
    )
    command("unfollow", _("stop following a player")).add_argument("name", metavar="NAME", help=_("their user name"))
    profile = command("profile", _("a player's page: ratings and their history, last games, results against you"))
    profile.add_argument("name", metavar="NAME", help=_("their user name"))
    settings = command("settings", _("show your settings, or change them"))
    settings.add_argument("--chat", choices=("on", "off"), help=_("chat in your games, rooms and tournaments"))
    settings.add_argument(
        "--challenges",
        choices=("everyone", "followed", "nobody"),
        help=_("who may challenge you by name (followed: the players you follow)"),
    )


def needs_account(args: argparse.Namespace) -> None:
    if args.command in NEEDS_ACCOUNT and not args.user:
        raise TafelError(
            "NEEDS_ACCOUNT",
            _(
                "`{command}` is about your account: sign in with --user NAME (or set TAFEL_USER); "
                "a guest of the terminal is a new one each time"
            ).format(command=f"tafel {args.command}"),
        )


async def people(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    """One of the commands above, signed in already."""
    if args.command == "friends":
        return await friends(client, console)
    if args.command == "follow":
        followed = await client.follow(args.name)
        console.print(
            _("You follow {name} ({username}): {presence}. (`tafel friends` lists whom you follow.)").format(
                name=player_name(followed.player),
                username=followed.player.username,
                presence=presence_text(followed.presence),
            ),
            highlight=False,
        )
    elif args.command == "unfollow":
        await client.unfollow(args.name)
        console.print(_("You no longer follow {name}.").format(name=args.name), highlight=False)
    elif args.command == "profile":
        return await profile(client, args.name, console)
    elif args.command == "settings":
        return await settings(client, args, console)
    return 0


def ago(stamp: Timestamp, now: datetime | None = None) -> str:
    """ "3 hours ago", "just now" ("" for an unset time)."""
    if not stamp.seconds and not stamp.nanos:
        return ""
    seconds = ((now or datetime.now(UTC)) - stamp.ToDatetime(tzinfo=UTC)).total_seconds()
    return _("just now") if seconds < 60 else _("{span} ago").format(span=span(seconds))


def presence_text(presence: social_pb2.Presence) -> str:
    """ "playing Connect Four (tafel watch r-…)", "online", "last seen 2025-05-01 14:02 (3 hours
    ago)", or "not shown" (a block between you, or never signed in)."""
    state = presence.state
    if state == S.PRESENCE_STATE_PLAYING:
        title = game_title(presence.game) if presence.game else _("a game")
        if presence.watchable and presence.game_id:
            return _("playing {title} (tafel watch {game_id})").format(title=title, game_id=presence.game_id)
        return _("playing {title} (a private game)").format(title=title)
    if state == S.PRESENCE_STATE_ONLINE:
        return _("online")
    if state == S.PRESENCE_STATE_OFFLINE:
        if presence.HasField("last_seen"):
            return _("last seen {time} ({ago})").format(
                time=local_time(presence.last_seen), ago=ago(presence.last_seen)
            )
        return _("offline")
    return _("not shown")


async def friends(client: TafelClient, console: Console) -> int:
    following = await client.list_following()
    if not following:
        console.print(_("You follow nobody yet: `tafel follow NAME` adds a player."), highlight=False)
        return 0
    table = Table(title=_("players you follow (playing first, then online, then by last seen)"))
    for header in (_("player"), _("user name"), _("now")):
        table.add_column(header)
    for followed in following:
        table.add_row(player_name(followed.player), followed.player.username, presence_text(followed.presence))
    console.print(table)
    return 0


def sparkline(points: list[float], width: int = SPARK_POINTS) -> str:
    """The latest `width` ratings as bars from lowest to highest ("▁▃▅█"); a flat history is a
    line of middling bars."""
    points = points[-width:]
    if not points:
        return ""
    low, high = min(points), max(points)
    if high - low < 1e-9:
        return BARS[len(BARS) // 2 - 1] * len(points)
    top = len(BARS) - 1
    return "".join(BARS[round((p - low) / (high - low) * top)] for p in points)


def head_to_head(against: social_pb2.HeadToHead) -> str:
    wins = ngettext("{n} win", "{n} wins", against.wins).format(n=against.wins)
    losses = ngettext("{n} loss", "{n} losses", against.losses).format(n=against.losses)
    draws = ngettext("{n} draw", "{n} draws", against.draws).format(n=against.draws)
    return f"{wins}, {losses}, {draws}"


def labelled(label: str, value: str, width: int = 11) -> str:
    """ "joined     2025-05-01 14:02": the label (translated) padded so the values line up."""
    return f"{label:<{width - 1}} {value}"


async def profile(client: TafelClient, username: str, console: Console) -> int:
    page = await client.get_profile(username)
    player = page.player
    mine = player.player_id == client.player.player_id
    name = player_name(player)
    also = f" ({player.username})" if name != player.username else ""
    console.print(f"[bold]{name}[/bold]{also}", highlight=False)
    width = max(len(_("joined")), len(_("now")), len(_("followers"))) + 2
    console.print(labelled(_("joined"), local_time(page.joined_at) or _("unknown"), width), highlight=False)
    console.print(labelled(_("now"), presence_text(page.presence), width), highlight=False)
    follows = labelled(_("followers"), str(page.followers), width)
    if not mine:
        both = ((_("you follow them"), page.followed_by_you), (_("they follow you"), page.follows_you))
        ties = [tie for tie, on in both if on]
        follows += f"  ·  {', '.join(ties)}" if ties else ""
        if not page.challengeable:
            follows += "  ·  " + _("takes no challenge from you")
    console.print(follows, highlight=False)
    if not mine and page.HasField("against_you"):
        console.print(_("you against them: {tally}").format(tally=head_to_head(page.against_you)), highlight=False)
    if page.ratings:
        table = Table(title=_("ratings (the line: their latest rated games, oldest first)"))
        for header in (_("game"), _("rating"), "±", _("games"), _("history")):
            table.add_column(header)
        for entry in page.ratings:
            rating = entry.rating
            history = [p.rating for p in entry.history]
            low_high = " " + _("{low} to {high}").format(low=f"{min(history):.0f}", high=f"{max(history):.0f}")
            low_high = low_high if len(history) > 1 else ""
            table.add_row(
                game_title(entry.game) + (" " + _("(provisional)") if rating.provisional else ""),
                f"{rating.rating:.0f}",
                f"{rating.deviation:.0f}",
                str(rating.games),
                sparkline(history) + low_high,
            )
        console.print(table)
    else:
        console.print(_("no rated games yet"), highlight=False)
    if page.recent_games:
        table = Table(title=_("last games (tafel replay GAME_ID)"))
        id_column(table, _("game id"), [g.game_id for g in page.recent_games])
        for header in (_("game"), _("players"), _("result"), _("ended")):
            table.add_column(header)
        for game in page.recent_games:
            result = RESULTS.get(game.result, "—")
            table.add_row(
                game.game_id,
                game_title(game.game) + (" " + _("(rated)") if game.rated else ""),
                ", ".join(player_name(p.player) for p in game.players),
                _(result) if result != "—" else result,
                local_time(game.ended_at),
            )
        console.print(table)
    else:
        console.print(_("no finished games yet"), highlight=False)
    return 0


async def settings(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    if args.chat is None and args.challenges is None:
        now = await client.get_settings()
        console.print(_("your settings:"), highlight=False)
    else:
        chat = None if args.chat is None else args.chat == "on"
        now = await client.update_settings(chat_enabled=chat, challenge_policy=args.challenges)
        console.print(_("changed; your settings now:"), highlight=False)
    shown_as = now.display_name or client.player.username
    labels = (_("chat"), _("challenges from"), _("shown as"))
    width = max(len(label) for label in labels) + 2
    policy = _(POLICIES.get(now.challenge_policy, POLICIES[S.CHALLENGE_POLICY_EVERYONE]))
    for label, value in zip(labels, (_("on") if now.chat_enabled else _("off"), policy, shown_as), strict=True):
        console.print("  " + labelled(label, value, width), highlight=False)
    return 0
