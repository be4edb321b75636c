"""`tafel challenge NAME GAME` (challenge a player, wait for the answer, play), `tafel challenge --bot
LEVEL GAME` (a bot takes it at once and sits down in a room of two) and `tafel challenges` (yours in
and out; accept, decline with a reason or cancel one by id; wait for new ones)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from rich.console import Console
from rich.table import Table

from tafel.cli.describe import GAME_TITLES
from tafel.cli.shared import console_connection, id_column
from tafel.cli.words import decline_word, local_time, parse_duration, span
from tafel.client import TafelClient
from tafel.errors import TafelError
from tafel.events import AccountEventStream
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
        raise TafelError("BAD_TIME", f"--per-move {text}: write it like 30s, 2m or 1m30s") from error


def terms(challenge: C.Challenge) -> str:
    """ "Connect Four, casual, 30 seconds a move, you move first" (from the reader's side)."""
    parts = [GAME_TITLES.get(challenge.game, challenge.game), "rated" if challenge.rated else "casual"]
    per_move = challenge.time_control.per_move.ToTimedelta().total_seconds()
    if per_move:
        parts.append(f"{_seconds(per_move)} a move")
    if challenge.seat_preference:
        first = challenge.seat_preference == C.SEAT_PREFERENCE_FIRST
        parts.append(f"{player_name(challenge.challenger)} moves {'first' if first else 'second'}")
    return ", ".join(parts)


def _seconds(value: float) -> str:
    return f"{value:g} seconds" if value < 60 else span(value)


def outcome_line(challenge: C.Challenge, whom: str) -> str:
    if challenge.status == C.CHALLENGE_STATUS_DECLINED:
        return f"{whom} declined: {decline_word(challenge.decline_reason)}."
    if challenge.status == C.CHALLENGE_STATUS_EXPIRED:
        return f"No answer from {whom} in time: the challenge expired."
    if challenge.status == C.CHALLENGE_STATUS_CANCELLED:
        return "The challenge was withdrawn."
    return f"{whom} accepted."


async def challenge(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    """Challenge, wait on the event stream for the answer (Ctrl-C withdraws it), then play."""
    if bool(args.bot) == bool(args.name):
        raise TafelError("WHOM", "`tafel challenge NAME GAME` or `tafel challenge --bot LEVEL GAME`: one of the two")
    if args.bot:
        return await challenge_bot(client, args, console)
    # The stream is live before the challenge is made: its answer cannot come unseen.
    async with client.event_stream(max_retries=None) as events:
        made = await client.create_challenge(
            args.game, username=args.name, rated=args.rated, per_move_s=per_move_seconds(args.per_move), seat=args.seat
        )
        whom = player_name(made.challenged, args.name)
        console.print(
            f"Challenged {whom}: {terms(made)}. Waiting for an answer until "
            f"{local_time(made.expires_at)} ... (Ctrl-C withdraws the challenge)",
            highlight=False,
        )
        try:
            answer = await answer_to(events, made)
        except asyncio.CancelledError:
            with contextlib.suppress(TafelError):
                await asyncio.shield(client.cancel_challenge(made.challenge_id))
            console.print("Challenge withdrawn.", highlight=False)
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
        args.game, bot_level=args.bot, per_move_s=per_move_seconds(args.per_move), seat=args.seat
    )
    whom = f"Bot (level {made.bot_level})"
    console.print(f"{whom} accepted: {terms(made)}. Waiting for it to sit down ... (Ctrl-C leaves)", highlight=False)
    told = console_connection(console, "The room is kept.", f"Still waiting for {whom} ...")
    try:
        room = await client.wait_room_started(made.room_code, on_connection=told)
    except asyncio.CancelledError:
        with contextlib.suppress(TafelError):
            await asyncio.shield(client.leave_room(made.room_code))
        console.print("Left the room.", highlight=False)
        raise
    from tafel.cli.playing import open_game

    return await open_game(client, room.game_id, console, playing=True, public=False)


async def answer_to(events: AccountEventStream, made: C.Challenge) -> C.Challenge:
    async for event in events:
        if event.WhichOneof("kind") == "challenge" and event.challenge.challenge_id == made.challenge_id:
            if event.challenge.status in FINAL:
                return event.challenge
    raise TafelError("EVENTS_ENDED", "the event stream ended before the challenge was answered")


async def challenges(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    action = args.action
    if action in ("accept", "decline", "cancel") and not args.id:
        raise TafelError(
            "ID_NEEDED", f"`tafel challenges {action} ID`: which challenge (`tafel challenges` lists them)"
        )
    if action == "accept":
        accepted = await client.accept_challenge(args.id)
        console.print(f"Accepted {player_name(accepted.challenger)}'s challenge: {terms(accepted)}.", highlight=False)
        from tafel.cli.playing import open_game

        return await open_game(client, accepted.game_id, console, playing=True)
    if action == "decline":
        declined = await client.decline_challenge(args.id, args.reason)
        console.print(
            f"Declined {player_name(declined.challenger)}'s challenge ({decline_word(declined.decline_reason)}).",
            highlight=False,
        )
        return 0
    if action == "cancel":
        cancelled = await client.cancel_challenge(args.id)
        console.print(f"Withdrew your challenge to {player_name(cancelled.challenged)}.", highlight=False)
        return 0
    if action == "wait":
        return await wait(client, console)
    show(await client.list_challenges(), console)
    return 0


def show(listed: C.ListChallengesResponse, console: Console) -> None:
    if not listed.incoming and not listed.outgoing:
        console.print("No challenges waiting. (`tafel challenge NAME GAME` makes one.)", highlight=False)
        return
    for title, rows, other in (
        ("challenges to you", listed.incoming, "from"),
        ("your challenges", listed.outgoing, "to"),
    ):
        if not rows:
            continue
        table = Table(title=title, title_justify="left")
        id_column(table, "id", [c.challenge_id for c in rows])
        for header in (other, "game", "until"):
            table.add_column(header)
        for row in rows:
            who = row.challenger if other == "from" else row.challenged
            table.add_row(row.challenge_id, player_name(who), terms(row), local_time(row.expires_at))
        console.print(table)
    if listed.incoming:
        console.print(
            "Answer with `tafel challenges accept ID` or `tafel challenges decline ID --reason later`.",
            highlight=False,
        )


async def wait(client: TafelClient, console: Console) -> int:
    """Print challenges to you as they come (and what becomes of them) until Ctrl-C."""
    me = client.player.player_id
    async with client.event_stream(max_retries=None) as events:
        for pending in (await client.list_challenges()).incoming:
            console.print(_incoming_line(pending), highlight=False)
        console.print("Waiting for challenges ... (Ctrl-C stops)", highlight=False)
        async for event in events:
            if event.WhichOneof("kind") != "challenge" or event.challenge.challenged.player_id != me:
                continue
            if event.challenge.status == C.CHALLENGE_STATUS_PENDING:
                console.print(_incoming_line(event.challenge), highlight=False)
            elif event.challenge.status in (C.CHALLENGE_STATUS_CANCELLED, C.CHALLENGE_STATUS_EXPIRED):
                what = "withdrawn" if event.challenge.status == C.CHALLENGE_STATUS_CANCELLED else "expired"
                console.print(f"{player_name(event.challenge.challenger)}'s challenge {what}.", highlight=False)
    return 0


def _incoming_line(challenge: C.Challenge) -> str:
    return (
        f"{player_name(challenge.challenger)} challenges you: {terms(challenge)}. "
        f"`tafel challenges accept {challenge.challenge_id}` or "
        f"`tafel challenges decline {challenge.challenge_id} --reason later`"
    )


def reason_choices() -> list[str]:
    from tafel.requests import enum_names

    return [name.replace("_", "-") for name in enum_names(C.DeclineReason, "DECLINE_REASON_")]
