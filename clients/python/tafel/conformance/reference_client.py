"""The reference client for tafel-conformance, built on the Python SDK. It implements the
interface the kit launches (docs/clients.md, "The conformance kit"):

    CLIENT --server HOST:PORT --token TOKEN --game GAME --room CODE [--resign]
    CLIENT --server HOST:PORT --token TOKEN --game GAME --watch GAME_ID

--room: join the room, play the seat it gives to the end of the game with legal moves (a
level-1 bot chooses), exit 0. --resign: resign at the first turn instead. --watch: print every
event of the game, one JSON line {"event_id": ...} each, from the first to GameEnded, resuming
after a cut connection with nothing lost and nothing twice, then exit 0.

What makes it pass: every move carries a request id and a retry after UNAVAILABLE resends the
same request (the SDK's unary calls do); a refusal (ABORTED: the game moved on; FAILED_PRECONDITION:
illegal now) is answered by reading the game again; waiting is done on the watch stream, not by
polling; a watch resumes from the last event id it printed."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncGenerator
from contextlib import aclosing

from google.protobuf.message import Message

from tafel.botplay import strategy_for
from tafel.client import TafelClient
from tafel.errors import IllegalMove, Unavailable, VersionConflict
from tafel.play.v1 import play_pb2


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
        game_id = room.game_id
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


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="the gateway, HOST:PORT")
    parser.add_argument("--token", required=True, help="a session token (authorization: Bearer)")
    parser.add_argument("--game", required=True, help="connect4, plus4 or coloursquare")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--room", help="join this room and play its game")
    mode.add_argument("--watch", help="print this game's events, resuming after cuts")
    parser.add_argument("--resign", action="store_true", help="resign at the first turn")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace, kind: type[ReferenceClient] = ReferenceClient) -> int:
    async with await TafelClient.connect(args.server) as client:
        client.session = play_pb2.Session(token=args.token)
        player = kind(client, args.game)
        try:
            if args.watch:
                return await player.watch(args.watch)
            return await player.play(args.room, args.resign)
        except Unavailable as error:
            print(f"gave up: {error}", file=sys.stderr)
            return 2


def main(argv: list[str] | None = None, kind: type[ReferenceClient] = ReferenceClient) -> None:
    sys.exit(asyncio.run(run(parse(argv), kind)))


if __name__ == "__main__":
    main()
