"""The room screen (Textual) before a game starts: the invite code, every seat and who sits there;
the host may start early with the players present (StartRoom)."""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static

from tafel.cli.describe import game_title
from tafel.cli.shared import BACK, LOST, sentence, translate_bindings
from tafel.client import TafelClient
from tafel.errors import TafelError
from tafel.i18n import N_, _, ngettext
from tafel.names import player_name
from tafel.play.v1 import play_pb2


def seats_text(room: play_pb2.Room, me: str) -> Text:
    text = Text()
    title = game_title(room.game)
    taken = ngettext("{taken} of {n} seat taken", "{taken} of {n} seats taken", room.seats).format(
        taken=len(room.players), n=room.seats
    )
    text.append("  " + _("room {code}").format(code=room.code) + f" · {title} · {taken}\n\n", style="bold")
    for index in range(max(room.seats, len(room.players))):
        if index < len(room.players):
            player = room.players[index]
            notes = [
                n
                for n, on in ((_("host"), player.player_id == room.host.player_id), (_("you"), player.player_id == me))
                if on
            ]
            text.append(f"  {index + 1}. {player_name(player)}" + (f" ({', '.join(notes)})" if notes else "") + "\n")
        else:
            text.append(f"  {index + 1}. " + _("(free)") + "\n", style="dim")
    return text


class LobbyApp(App[str]):
    """Returns the started game's id, or "" when the player left or the room closed."""

    ENABLE_COMMAND_PALETTE = False
    CSS = "#seats { padding: 1 2; } #status { padding: 0 2; }"
    KEYS = (("s", "start", N_("start now")), ("q", "leave", N_("leave the room")))
    BINDINGS = [Binding(key, action, description) for key, action, description in KEYS]

    def __init__(self, client: TafelClient, room: play_pb2.Room) -> None:
        super().__init__()
        translate_bindings(self)
        self.client = client
        self.room = room
        self.title = _("tafel · room {code}").format(code=room.code)
        self.message = ""
        self.reconnecting = False  # the room's watch is lost until a gateway answers again

    @property
    def hosting(self) -> bool:
        return self.room.host.player_id == self.client.player.player_id

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="seats")
        yield Static(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.show()
        self.run_worker(self.follow(), exclusive=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.hosting if action == "start" else True

    def show(self) -> None:
        self.query_one("#seats", Static).update(seats_text(self.room, self.client.player.player_id))
        free = self.room.seats - len(self.room.players)
        if self.reconnecting:
            line = _(LOST) + " " + _("Your room is kept: wait, or press q to leave.")
        elif self.hosting:
            line = ngettext(
                "Share the code {code}. The game starts when {free} more joins, or press s to start now with {n}.",
                "Share the code {code}. The game starts when {free} more join, or press s to start now with {n}.",
                free,
            ).format(code=self.room.code, free=free, n=len(self.room.players))
        else:
            line = ngettext(
                "Waiting for {free} more to join, or for {host} to start.",
                "Waiting for {free} more to join, or for {host} to start.",
                free,
            ).format(free=free, host=player_name(self.room.host))
        self.query_one("#status", Static).update(line + (f"\n{self.message}" if self.message else ""))

    async def follow(self) -> None:
        try:
            # No retry limit: the room is kept by the platform, so the screen waits for it as long
            # as the person does (q leaves).
            watch = self.client.watch_room(self.room.code, max_retries=None, on_connection=self.connection)
            async for room in watch:
                self.room = room
                if room.state == play_pb2.ROOM_STATE_STARTED and room.game_id:
                    self.exit(room.game_id)
                    return
                if room.state == play_pb2.ROOM_STATE_CLOSED:
                    self.exit("")
                    return
                self.show()
        except TafelError as error:
            self.message = _("Lost the room: {reason}. Press q.").format(reason=sentence(error))
            self.show()

    async def connection(self, up: bool) -> None:
        self.reconnecting = not up
        self.message = _(BACK) if up else ""  # (while lost, the line above says so)
        self.show()

    async def action_start(self) -> None:
        if not self.hosting:
            return
        if self.reconnecting:
            self.message = _("Not started: the game server is not answering. Press s again once it is back.")
            self.show()
            return
        try:
            room = await self.client.start_room(self.room.code)
        except TafelError as error:
            self.message = _("Cannot start yet: {reason}.").format(reason=sentence(error))
            self.show()
            return
        if room.game_id:
            self.exit(room.game_id)

    async def action_leave(self) -> None:
        try:
            # With the server away, q must not wait for it: leave at once (the seat stays taken).
            await asyncio.wait_for(self.client.leave_room(self.room.code), 2 if self.reconnecting else 30)
        except (TafelError, TimeoutError):
            pass  # leaving a room that already closed or started: nothing to undo
        self.exit("")
