"""The reference client for tafel-conformance, built on the Python SDK. It implements the
interface the kit launches (docs/clients.md, "The conformance kit"):

    CLIENT --server HOST:PORT --token TOKEN --game GAME --room CODE [--resign]
    CLIENT --server HOST:PORT --token TOKEN --game GAME --watch GAME_ID
    CLIENT --server HOST:PORT --token TOKEN --game GAME --events [--count N] [--decline REASON]
           [--draw accept|decline] [--rematch] [--follow NAME]
    CLIENT --server HOST:PORT --token TOKEN --game GAME --chat GAME_ID [--say TEXT] [--count N]
    CLIENT --server HOST:PORT --token TOKEN --game GAME --tournament ID [--code CODE] [--count N]

--room: join the room, play the seat it gives to the end of the game with legal moves (a
level-1 bot chooses), exit 0. --resign: resign at the first turn instead. --watch: print every
event of the game, one JSON line {"event_id": ...} each, from the first to GameEnded, resuming
after a cut connection with nothing lost and nothing twice, then exit 0.

--events: follow the account's event stream, printing each event as a JSON line {"event_id": ...,
"kind": ...}, resuming after a cut from the last id printed. Accept each challenge to you (with
--decline REASON: decline it with that reason) and play every game that starts for you. Answer a
draw offer as --draw says (default: decline), a takeback: decline; a rematch offer: accept with
--rematch, else decline. With --rematch, offer a rematch when a game ends (unless it was the
last). Exit 0 once N games (--count, default 1) have ended, or with --decline once the stream has
shown N challenges declined. --follow NAME: follow that player once the stream is live; a
presence event prints also "username", "state" ("online", "playing", "offline") and "game_id";
exit 0 once N presence changes of theirs have been printed.

--chat: watch the players' channel of the game (history, then live lines), printing each line as a
JSON line {"message_id": ..., "author": ..., "text": ...}, resuming after a cut from the last id
printed; once the watch is live say TEXT there (--say; one request id, resent as is). Exit 0 once
N lines (--count) by others have been printed.

--tournament: join the tournament (with --code, its invitation code), follow its events from the
start, printing each as a JSON line {"event_id": ..., "kind": ...} and resuming after a cut from
the last id printed, and play every game a round or the arena pairs it in (round_started,
arena_game_started) to the end with legal moves, as soon as it is paired. Exit 0 when the
tournament is over, or once N games (--count; 0 = until the end) have been played.

What makes it pass: every move carries a request id and a retry after UNAVAILABLE resends the
same request (the SDK's unary calls do); a refusal (ABORTED: the game moved on; FAILED_PRECONDITION:
illegal now) is answered by reading the game again; waiting is done on the watch stream, not by
polling; a watch, and the account's event stream, resume from the last event id printed."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass

from google.protobuf.message import Message

from tafel import chat
from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient
from tafel.errors import AlreadyExists, IllegalMove, TafelError, Unavailable, VersionConflict
from tafel.events import presence_of
from tafel.play.v1 import challenges_pb2, play_pb2, social_pb2

PENDING = challenges_pb2.CHALLENGE_STATUS_PENDING
STATES = {
    social_pb2.PRESENCE_STATE_ONLINE: "online",
    social_pb2.PRESENCE_STATE_PLAYING: "playing",
    social_pb2.PRESENCE_STATE_OFFLINE: "offline",
}


@dataclass
class EventOptions:
    count: int = 1
    decline: str = ""
    draw: str = "decline"
    rematch: bool = False
    follow: str = ""


class ReferenceClient:
    """One seat (or one watch) through the SDK. The broken clients in the tests override one
    method each to show that the kit catches the fault."""

    def __init__(self, client: TafelClient, game: str) -> None:
        self.client = client
        self.game = game
        self.choose = strategy_for(game, 1)

    async def submit(self, game_id: str, move: Message, version: int) -> None:
        # One request id for every attempt: the SDK resends this same request after UNAVAILABLE.
        await self.client.submit_move(game_id, move, expected_version=version)

    async def events_after(self, game_id: str, after: str) -> AsyncGenerator[play_pb2.WatchGameResponse, None]:
        async for response in self.client.watch_with_deadlines(game_id, after):
            yield response

    async def play(self, code: str, resign: bool) -> int:
        await self.client.join_room(code)
        room = await self.client.wait_room_started(code)
        return await self.play_game(room.game_id, resign)

    async def play_game(self, game_id: str, resign: bool = False) -> int:
        """This player's seat of `game_id`, played with legal moves until the game is over."""
        game = await self.client.wait_for_game(game_id)
        seat = game.seat
        status, view, last = game.summary.status, game.view, game.last_event_id
        while not status.over:
            if seat in status.to_act:
                if resign:
                    await self.client.resign(game_id)
                    return 0
                try:
                    await self.submit(game_id, self.choose(view), status.version)
                except (VersionConflict, IllegalMove):
                    pass  # the game moved on under us (a round resolved, a clock ran out): read again
            else:
                await self.wait_for_change(game_id, seat, last)
            fresh = await self.client.get_game(game_id)
            status, view, last = fresh.summary.status, fresh.view, fresh.last_event_id
        return 0

    async def wait_for_change(self, game_id: str, seat: int, after: str) -> None:
        """Until the game waits on `seat` or is over, from the event stream."""
        async with aclosing(self.events_after(game_id, after)) as events:
            async for response in events:
                if not response.HasField("status"):
                    return  # a server that leaves status off replayed events: read the game instead
                status = response.status
                if response.event.WhichOneof("kind") == "ended" or status.over or seat in status.to_act:
                    return

    async def watch(self, game_id: str) -> int:
        async with aclosing(self.events_after(game_id, "")) as events:
            async for response in events:
                print(json.dumps({"event_id": response.event.event_id}), flush=True)
                if response.event.WhichOneof("kind") == "ended":
                    return 0
        return 1

    # -- a tournament (--tournament) ------------------------------------------------------------------

    async def tournament(self, tournament_id: str, code: str, count: int) -> int:
        me = (await self.client.me()).player_id
        await self.client.join_tournament(tournament_id, invitation_code=code)
        played = 0
        # The SDK's feed resumes after a cut from the last event it gave (nothing lost or twice).
        async for event in self.client.watch_tournament(tournament_id, max_retries=None):
            kind = event.WhichOneof("kind")
            print(json.dumps({"event_id": event.event_id, "kind": kind}), flush=True)
            if kind == "round_started":
                paired = list(event.round_started.round.games)
            elif kind == "arena_game_started":
                paired = [event.arena_game_started.game]
            else:
                paired = []
            for game in paired:
                if game.game_id and any(p.player_id == me for p in game.players):
                    await self.play_game(game.game_id)
                    played += 1
                    if count and played >= count:
                        return 0
            if kind in ("finished", "cancelled"):
                return 0
        return 0

    # -- the account's event stream (--events) ------------------------------------------------------

    async def account_events(self) -> AsyncGenerator[challenges_pb2.AccountEvent, None]:
        """The account's events from now, resumed by the SDK after a cut from the last one seen;
        with --follow, the player is followed once the stream is live (no change is missed)."""
        async with self.client.event_stream() as events:
            if self.options.follow:
                await self.client.follow(self.options.follow)
            async for event in events:
                yield event

    async def follow(self, options: EventOptions) -> int:
        self.me = (await self.client.me()).player_id
        self.options = options
        self.played = 0
        self.declined = 0
        self.presences = 0
        self.done = asyncio.Event()
        self.games: set[asyncio.Task[None]] = set()
        # Held while answering: a draw accepted ends the game, whose end may be seen (and the
        # client exit) before the answer's reply; cancelled then, the answer could be half done.
        self.answering = asyncio.Lock()
        reader = asyncio.ensure_future(self.read_events())
        finished = asyncio.ensure_future(self.done.wait())
        try:
            await asyncio.wait((reader, finished), return_when=asyncio.FIRST_COMPLETED)
            if reader.done():
                reader.result()  # its error, if any
                return 1
            async with self.answering:
                return 0
        finally:
            for task in (reader, finished, *self.games):
                task.cancel()
            await asyncio.gather(reader, finished, *self.games, return_exceptions=True)

    async def read_events(self) -> None:
        async with aclosing(self.account_events()) as events:
            async for event in events:
                kind = event.WhichOneof("kind")
                line: dict[str, str | None] = {"event_id": event.event_id, "kind": kind}
                changed = presence_of(event)
                if changed is not None:
                    line["username"] = changed.player.username
                    line["state"] = STATES.get(changed.presence.state, "unknown")
                    line["game_id"] = changed.presence.game_id
                print(json.dumps(line), flush=True)
                if changed is not None and changed.player.username == self.options.follow:
                    self.presences += 1
                    if self.presences >= self.options.count:
                        self.done.set()
                async with self.answering:
                    await self.on_event(kind, event)

    async def on_event(self, kind: str | None, event: challenges_pb2.AccountEvent) -> None:
        if kind == "challenge":
            await self.on_challenge(event.challenge)
        elif kind == "game_started":
            seats = [p.seat for p in event.game_started.players if p.player.player_id == self.me]
            if seats:
                task = asyncio.ensure_future(self.play_to_the_end(event.game_started.game_id, seats[0]))
                self.games.add(task)
        elif kind == "offer" and event.offer.status == play_pb2.OFFER_STATUS_PENDING:
            if event.offer.by.player.player_id != self.me:
                await self.answer_offer(event.offer)

    async def on_challenge(self, challenge: challenges_pb2.Challenge) -> None:
        if challenge.challenged.player_id != self.me or challenge.open:
            return
        if challenge.status == PENDING:
            try:
                if self.options.decline:
                    await self.client.decline_challenge(challenge.challenge_id, self.options.decline)
                else:
                    await self.client.accept_challenge(challenge.challenge_id)
            except IllegalMove:
                pass  # answered meanwhile (cancelled, expired): its event follows
        elif challenge.status == challenges_pb2.CHALLENGE_STATUS_DECLINED:
            self.declined += 1
            if self.options.decline and self.declined >= self.options.count:
                self.done.set()

    async def answer_offer(self, offer: play_pb2.Offer) -> None:
        accept = {
            play_pb2.OFFER_KIND_DRAW: self.options.draw == "accept",
            play_pb2.OFFER_KIND_REMATCH: self.options.rematch,
        }.get(offer.kind, False)
        try:
            await self.client.answer_offer(offer.game_id, offer.kind, accept)
        except IllegalMove:
            pass  # moot by now (a move was made, it was withdrawn or answered)

    async def play_to_the_end(self, game_id: str, seat: int) -> None:
        await play_game(self.client, game_id, seat, strategy_for(self.game, 1))
        self.played += 1
        if self.played >= self.options.count:
            self.done.set()
        elif self.options.rematch:
            try:
                await self.client.make_offer(game_id, "rematch")
            except AlreadyExists:
                await self.client.answer_offer(game_id, "rematch", True)  # the other side offered first
            except TafelError as error:
                print(f"no rematch: {error}", file=sys.stderr)

    # -- a game's chat (--chat) ---------------------------------------------------------------------

    async def chat_lines(
        self, channel: social_pb2.ChatChannel, say: str
    ) -> AsyncGenerator[social_pb2.ChatMessage, None]:
        """The channel's lines (history, then live), resumed by the SDK after a cut from the last
        one seen; `say` is said once the watch is live."""
        async with self.client.chat_stream(channel) as lines:
            if say:
                await self.client.send_chat(channel, say)
            async for message in lines:
                yield message

    async def chat(self, game_id: str, say: str, count: int) -> int:
        channel = chat.channel("players", game_id)
        heard = 0
        me = (await self.client.me()).player_id
        async with aclosing(self.chat_lines(channel, say)) as lines:
            async for message in lines:
                print(
                    json.dumps(
                        {"message_id": message.message_id, "author": message.author.username, "text": message.text}
                    ),
                    flush=True,
                )
                if message.author.player_id != me:
                    heard += 1
                    if heard >= count:
                        return 0
        return 1


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="the gateway, HOST:PORT")
    parser.add_argument("--token", required=True, help="a session token (authorization: Bearer)")
    parser.add_argument("--game", required=True, help="connect4, plus4 or coloursquare")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--room", help="join this room and play its game")
    mode.add_argument("--watch", help="print this game's events, resuming after cuts")
    mode.add_argument("--events", action="store_true", help="follow the account's event stream (challenges, offers)")
    mode.add_argument("--chat", metavar="GAME_ID", help="watch the game's players' chat, resuming after cuts")
    mode.add_argument("--tournament", metavar="ID", help="join the tournament and play its games")
    parser.add_argument("--code", default="", help="--tournament: the invitation code")
    parser.add_argument("--resign", action="store_true", help="resign at the first turn")
    parser.add_argument("--count", type=int, default=1, help="--events: games to play (or challenges to decline)")
    parser.add_argument("--decline", default="", metavar="REASON", help="--events: decline challenges with REASON")
    parser.add_argument("--draw", choices=("accept", "decline"), default="decline", help="--events: draw offers")
    parser.add_argument("--rematch", action="store_true", help="--events: offer and accept rematches")
    parser.add_argument("--follow", default="", metavar="NAME", help="--events: follow NAME, print their presence")
    parser.add_argument("--say", default="", metavar="TEXT", help="--chat: say TEXT once the watch is live")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace, kind: type[ReferenceClient] = ReferenceClient) -> int:
    async with await TafelClient.connect(args.server) as client:
        client.session = play_pb2.Session(token=args.token)
        player = kind(client, args.game)
        try:
            if args.watch:
                return await player.watch(args.watch)
            if args.events:
                options = EventOptions(args.count, args.decline, args.draw, args.rematch, args.follow)
                return await player.follow(options)
            if args.chat:
                return await player.chat(args.chat, args.say, args.count)
            if args.tournament:
                return await player.tournament(args.tournament, args.code, args.count)
            return await player.play(args.room, args.resign)
        except Unavailable as error:
            print(f"gave up: {error}", file=sys.stderr)
            return 2


def main(argv: list[str] | None = None, kind: type[ReferenceClient] = ReferenceClient) -> None:
    sys.exit(asyncio.run(run(parse(argv), kind)))


if __name__ == "__main__":
    main()
