"""`tafel challenge NAME GAME` (challenge a player, wait for the answer, play), `tafel challenge --bot
LEVEL GAME` (a bot takes it at once and sits down in a room of two) and `tafel challenges` (yours in
and out; accept, decline with a reason or cancel one by id; wait for new ones)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from rich.console import Console
from rich.table import Table

from tafel.cli.describe import game_title
from tafel.cli.shared import console_connection, id_column, per_move
from tafel.cli.words import decline_word, local_time, parse_duration, span
from tafel.client import TafelClient
from tafel.errors import TafelError
from tafel.events import AccountEventStream
from tafel.i18n import _, ngettext, number
from tafel.names import player_name
from tafel.play.v1 import challenges_pb2 as C

FINAL = (
    C.CHALLENGE_STATUS_ACCEPTED,
    C.CHALLENGE_STATUS_DECLINED,
    C.CHALLENGE_STATUS_CANCELLED,
    C.CHALLENGE_STATUS_EXPIRED,
)


def per_move_seconds(text: str | None) -> float | None:
    """ "30s", "2m", "1m30s" or plain seconds ("45") -> seconds; None: the platform's default."""
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return parse_duration(text).total_seconds()
    except ValueError as error:
        hint = _("--per-move {text}: write it like 30s, 2m or 1m30s").format(text=text)
        raise TafelError("BAD_TIME", hint) from error


def terms(challenge: C.Challenge) -> str:
    """ "Connect Four, casual, 30 seconds a move, you move first" (from the reader's side)."""
    parts = [game_title(challenge.game), _("rated") if challenge.rated else _("casual")]
    per_move = challenge.time_control.per_move.ToTimedelta().total_seconds()
    if per_move:
        parts.append(_("{time} a move").format(time=_seconds(per_move)))
    if challenge.seat_preference:
        first = challenge.seat_preference == C.SEAT_PREFERENCE_FIRST
        moves = _("{name} moves first") if first else _("{name} moves second")
        parts.append(moves.format(name=player_name(challenge.challenger)))
    return ", ".join(parts)


def _seconds(value: float) -> str:
    if value >= 60:
        return span(value)
    return ngettext("{n} second", "{n} seconds", int(value) if value == int(value) else 2).format(n=number(value))


def outcome_line(challenge: C.Challenge, whom: str) -> str:
    if challenge.status == C.CHALLENGE_STATUS_DECLINED:
        return _("{name} declined: {reason}.").format(name=whom, reason=decline_word(challenge.decline_reason))
    if challenge.status == C.CHALLENGE_STATUS_EXPIRED:
        return _("No answer from {name} in time: the challenge expired.").format(name=whom)
    if challenge.status == C.CHALLENGE_STATUS_CANCELLED:
        return _("The challenge was withdrawn.")
    return _("{name} accepted.").format(name=whom)


async def challenge(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    """Challenge, wait on the event stream for the answer (Ctrl-C withdraws it), then play."""
    if bool(args.bot) == bool(args.name):
        raise TafelError("WHOM", _("`tafel challenge NAME GAME` or `tafel challenge --bot LEVEL GAME`: one of the two"))
    if args.bot:
        return await challenge_bot(client, args, console)
    # The stream is live before the challenge is made: its answer cannot come unseen.
    async with client.event_stream(max_retries=None) as events:
        made = await client.create_challenge(
            args.game,
            username=args.name,
            rated=args.rated,
            **per_move(per_move_seconds(args.per_move), args.days),
            seat=args.seat,
        )
        whom = player_name(made.challenged, args.name)
        console.print(
            _(
                "Challenged {name}: {terms}. Waiting for an answer until {time} ... (Ctrl-C withdraws the challenge)"
            ).format(name=whom, terms=terms(made), time=local_time(made.expires_at)),
            highlight=False,
        )
        try:
            answer = await answer_to(events, made)
        except asyncio.CancelledError:
            with contextlib.suppress(TafelError):
                await asyncio.shield(client.cancel_challenge(made.challenge_id))
            console.print(_("Challenge withdrawn."), highlight=False)
            raise
    console.print(outcome_line(answer, whom), highlight=False)
    if answer.status != C.CHALLENGE_STATUS_ACCEPTED:
        return 1
    from tafel.cli.playing import open_game

    return await open_game(client, answer.game_id, console, playing=True)


async def challenge_bot(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    """A bot accepts at once; its room starts the game when the bot sits down (Ctrl-C leaves the
    room, which closes it)."""
    made = await client.create_challenge(
        args.game, bot_level=args.bot, **per_move(per_move_seconds(args.per_move), args.days), seat=args.seat
    )
    whom = _("Bot (level {level})").format(level=made.bot_level)
    console.print(
        _("{name} accepted: {terms}. Waiting for it to sit down ... (Ctrl-C leaves)").format(
            name=whom, terms=terms(made)
        ),
        highlight=False,
    )
    told = console_connection(console, _("The room is kept."), _("Still waiting for {name} ...").format(name=whom))
    try:
        room = await client.wait_room_started(made.room_code, on_connection=told)
    except asyncio.CancelledError:
        with contextlib.suppress(TafelError):
            await asyncio.shield(client.leave_room(made.room_code))
        console.print(_("Left the room."), highlight=False)
        raise
    from tafel.cli.playing import open_game

    return await open_game(client, room.game_id, console, playing=True, public=False)


async def answer_to(events: AccountEventStream, made: C.Challenge) -> C.Challenge:
    async for event in events:
        if event.WhichOneof("kind") == "challenge" and event.challenge.challenge_id == made.challenge_id:
            if event.challenge.status in FINAL:
                return event.challenge
    raise TafelError("EVENTS_ENDED", _("the event stream ended before the challenge was answered"))


async def challenges(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    action = args.action
    if action in ("accept", "decline", "cancel") and not args.id:
        raise TafelError(
            "ID_NEEDED",
            _("`tafel challenges {action} ID`: which challenge (`tafel challenges` lists them)").format(action=action),
        )
    if action == "accept":
        accepted = await client.accept_challenge(args.id)
        console.print(
            _("Accepted {name}'s challenge: {terms}.").format(
                name=player_name(accepted.challenger), terms=terms(accepted)
            ),
            highlight=False,
        )
        from tafel.cli.playing import open_game

        return await open_game(client, accepted.game_id, console, playing=True)
    if action == "decline":
        declined = await client.decline_challenge(args.id, args.reason)
        console.print(
            _("Declined {name}'s challenge ({reason}).").format(
                name=player_name(declined.challenger), reason=decline_word(declined.decline_reason)
            ),
            highlight=False,
        )
        return 0
    if action == "cancel":
        cancelled = await client.cancel_challenge(args.id)
        console.print(
            _("Withdrew your challenge to {name}.").format(name=player_name(cancelled.challenged)), highlight=False
        )
        return 0
    if action == "wait":
        return await wait(client, console)
    show(await client.list_challenges(), console)
    return 0


def show(listed: C.ListChallengesResponse, console: Console) -> None:
    if not listed.incoming and not listed.outgoing:
        console.print(_("No challenges waiting. (`tafel challenge NAME GAME` makes one.)"), highlight=False)
        return
    for title, rows, incoming in (
        (_("challenges to you"), listed.incoming, True),
        (_("your challenges"), listed.outgoing, False),
    ):
        if not rows:
            continue
        table = Table(title=title, title_justify="left")
        id_column(table, _("id"), [c.challenge_id for c in rows])
        for header in (_("from") if incoming else _("to"), _("game"), _("until")):
            table.add_column(header)
        for row in rows:
            who = row.challenger if incoming else row.challenged
            table.add_row(row.challenge_id, player_name(who), terms(row), local_time(row.expires_at))
        console.print(table)
    if listed.incoming:
        console.print(
            _("Answer with `tafel challenges accept ID` or `tafel challenges decline ID --reason later`."),
            highlight=False,
        )


async def wait(client: TafelClient, console: Console) -> int:
    """Print challenges to you as they come (and what becomes of them) until Ctrl-C."""
    me = client.player.player_id
    async with client.event_stream(max_retries=None) as events:
        for pending in (await client.list_challenges()).incoming:
            console.print(_incoming_line(pending), highlight=False)
        console.print(_("Waiting for challenges ... (Ctrl-C stops)"), highlight=False)
        async for event in events:
            if event.WhichOneof("kind") != "challenge" or event.challenge.challenged.player_id != me:
                continue
            if event.challenge.status == C.CHALLENGE_STATUS_PENDING:
                console.print(_incoming_line(event.challenge), highlight=False)
            elif event.challenge.status in (C.CHALLENGE_STATUS_CANCELLED, C.CHALLENGE_STATUS_EXPIRED):
                what = (
                    _("{name}'s challenge was withdrawn.")
                    if event.challenge.status == C.CHALLENGE_STATUS_CANCELLED
                    else _("{name}'s challenge expired.")
                )
                console.print(what.format(name=player_name(event.challenge.challenger)), highlight=False)
    return 0


def _incoming_line(challenge: C.Challenge) -> str:
    return _(
        "{name} challenges you: {terms}. "
        "`tafel challenges accept {id}` or `tafel challenges decline {id} --reason later`"
    ).format(name=player_name(challenge.challenger), terms=terms(challenge), id=challenge.challenge_id)


def reason_choices() -> list[str]:
    from tafel.requests import enum_names

    return [name.replace("_", "-") for name in enum_names(C.DeclineReason, "DECLINE_REASON_")]
