"""`tafel play` and `tafel watch`: find or host the table, then the live game screen."""

from __future__ import annotations

import argparse

from rich.console import Console

from tafel.cli.describe import game_title
from tafel.cli.shared import console_connection, per_move, table_options
from tafel.client import TafelClient
from tafel.errors import NotFound
from tafel.i18n import _, ngettext


async def play(client: TafelClient, args: argparse.Namespace, console: Console) -> int:
    timing = per_move(args.per_move, args.days)
    options = table_options(args)
    title = game_title(args.game)
    public = True  # matchmaking games are listed and open to spectators; a room's only if it says so
    if args.room or args.new_room:
        from tafel.cli.lobby import LobbyApp

        if args.room:
            room = await client.join_room(args.room)
        else:
            room = await client.create_room(args.game, options, seats=args.seats, watchable=args.watchable, **timing)
        game_id = room.game_id or await LobbyApp(client, room).run_async() or ""
        public = room.watchable
        if not game_id:
            console.print(_("left room {code}").format(code=room.code))
            return 0
    elif args.vs_bot or args.solo:
        seats = 1 if args.solo else max(2, args.seats)
        room = await client.create_room(args.game, options, seats=seats, watchable=args.watchable, **timing)
        if args.vs_bot:
            # A bot a seat: each is a request of its own, served by a pool's guest of its own.
            for _seat in range(seats - 1):
                await client.request_bot(room.code, args.vs_bot)
            console.print(
                ngettext(
                    "asked for a level {level} bot; waiting for it to join ...",
                    "asked for {n} level {level} bots; waiting for them to join ...",
                    seats - 1,
                ).format(n=seats - 1, level=args.vs_bot)
            )
        told = console_connection(console, _("The room is kept."), _("Still waiting for the bot ..."))
        game_id = room.game_id or (await client.wait_room_started(room.code, on_connection=told)).game_id
        public = room.watchable
    else:
        if args.days:  # a correspondence search outlives this terminal (a week at most)
            console.print(
                _(
                    "looking for a {title} opponent ... (Ctrl-C leaves; the search waits up to a week: "
                    "tafel search cancel {game} withdraws it)"
                ).format(title=title, game=args.game)
            )
        else:
            console.print(_("looking for a {title} opponent ... (Ctrl-C to stop)").format(title=title))
        # No retry limit: the search waits for the platform as long as the person does.
        told = console_connection(
            console, _("Your search is kept."), _("Still looking for a {title} opponent ...").format(title=title)
        )
        found = await client.find_match(args.game, options, max_retries=None, on_connection=told, **timing)
        game_id = found.game_id
    return await open_game(client, game_id, console, playing=True, public=public)


async def watch(client: TafelClient, game_id: str, console: Console) -> int:
    return await open_game(client, game_id, console, playing=False)


async def open_game(client: TafelClient, game_id: str, console: Console, *, playing: bool, public: bool = True) -> int:
    from tafel.cli.app import GameApp, screen_title

    try:
        state = await client.get_game(game_id)
    except NotFound:
        raise NotFound(
            "NO_SUCH_GAME", _("there is no game {game_id!r} (`tafel games --live` lists them)").format(game_id=game_id)
        ) from None
    seat = state.seat if playing and state.HasField("seat") else None
    app = GameApp(client, game_id, seat, screen_title(state.summary, seat), public=public)
    result = await app.run_async()
    console.print(_("game {game_id}: {result}").format(game_id=game_id, result=result or _("left")))
    if app.next_game:  # a rematch everyone accepted: straight on to it
        console.print(_("the rematch: game {game_id}").format(game_id=app.next_game))
        return await open_game(client, app.next_game, console, playing=True, public=public)
    return 0
