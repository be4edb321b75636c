"""The live game screen (Textual): the board in colour, updated as events arrive; keys to move."""

from __future__ import annotations

import time

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, RichLog, Static

from tafel.cli.boards import DIE_ENUM, Cursor, columns_of, connect4_move, plus4_move, render
from tafel.cli.describe import describe, outcome_text
from tafel.client import TafelClient
from tafel.coloursquare.v1 import coloursquare_pb2 as cs
from tafel.errors import TafelError
from tafel.play.v1 import play_pb2


class GameApp(App[str]):
    """Plays (or watches, when `seat` is None) one game. Returns the result line on exit."""

    CSS = """
    #board { height: auto; padding: 1 2; }
    #status { height: 3; padding: 0 2; }
    RichLog { height: 1fr; border: round $accent; }
    """
    BINDINGS = [
        Binding("left", "cursor(-1)", "left"),
        Binding("right", "cursor(1)", "right"),
        Binding("up", "row(-1)", "up", show=False),
        Binding("down", "row(1)", "down", show=False),
        Binding("t", "colour", "white die: cell colour", show=False),
        Binding("enter", "submit", "move"),
        Binding("space", "submit", "move", show=False),
        Binding("b", "bonus", "bonus disc", show=False),
        Binding("r", "die(0)", show=False),
        Binding("y", "die(1)", show=False),
        Binding("g", "die(2)", show=False),
        Binding("w", "die(4)", show=False),
        Binding("j", "joker", "joker", show=False),
        Binding("p", "send_placements", "place/pass", show=False),
        Binding("c", "clear", "clear", show=False),
        Binding("x", "resign", "resign"),
        Binding("q", "quit", "quit"),
        *(Binding(str(n), f"column({n - 1})", show=False) for n in range(1, 10)),
    ]

    def __init__(self, client: TafelClient, game_id: str, seat: int | None, title: str) -> None:
        super().__init__()
        self.client = client
        self.game_id = game_id
        self.seat = seat
        self.title = title
        self.cursor = Cursor()
        self.state: play_pb2.GetGameResponse | None = None
        self.deadline: float | None = None
        self.result = ""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="board")
        yield Static(id="status")
        yield RichLog(id="log", markup=False, wrap=True)
        yield Footer()

    async def on_mount(self) -> None:
        self.sub_title = f"game {self.game_id}" + (f" · you are seat {self.seat}" if self.seat is not None else "")
        await self.refresh_game()
        self.run_worker(self.follow(), exclusive=True)
        self.set_interval(0.5, self.show_status)

    async def follow(self) -> None:
        last = ""
        async for response in self.client.watch_with_deadlines(self.game_id, last, stop_at_end=True):
            self.query_one(RichLog).write(describe(response.event))
            self.deadline = _seconds(response) if response.HasField("turn_deadline") else None
            await self.refresh_game()

    async def refresh_game(self) -> None:
        try:
            self.state = await self.client.get_game(self.game_id)
        except TafelError as error:
            self.say(f"could not read the game: {error.reason}")
            return
        summary = self.state.summary
        if summary.HasField("turn_deadline"):
            self.deadline = summary.turn_deadline.seconds + summary.turn_deadline.nanos / 1e9
        if summary.status.over:
            self.deadline = None
            self.result = outcome_text(summary.status.outcome, self.seat)
        self.query_one("#board", Static).update(render(self.state.view, self.cursor, self.seat))
        self.show_status()

    def show_status(self) -> None:
        if self.state is None:
            return
        status = self.state.summary.status
        if status.over:
            line = f"GAME OVER — {self.result}.  Press q to quit."
        else:
            turn = (
                "YOUR TURN" if self.seat in status.to_act else f"waiting for seat {', '.join(map(str, status.to_act))}"
            )
            clock = f"   clock: {max(0.0, self.deadline - time.time()):4.0f}s" if self.deadline else ""
            line = f"{turn}{clock}"
        self.query_one("#status", Static).update(line)

    def say(self, message: str) -> None:
        self.query_one(RichLog).write(message)

    # -- keys -----------------------------------------------------------------------------------------

    def _redraw(self) -> None:
        if self.state is not None:
            self.query_one("#board", Static).update(render(self.state.view, self.cursor, self.seat))

    def action_cursor(self, step: int) -> None:
        if self.state is None:
            return
        self.cursor.column = (self.cursor.column + step) % columns_of(self.state.view)
        self._redraw()

    def action_row(self, step: int) -> None:
        self.cursor.row = (self.cursor.row + step) % 4
        self._redraw()

    def action_colour(self) -> None:
        self.cursor.colour = (self.cursor.colour + 1) % 4
        self._redraw()

    def action_column(self, column: int) -> None:
        if self.state is not None and column < columns_of(self.state.view):
            self.cursor.column = column
            self._redraw()

    def action_bonus(self) -> None:
        if self.state is not None and self.state.view.WhichOneof("game") == "coloursquare":
            self.cursor.die = 3  # "b" picks the blue die in Colour Square
        else:
            self.cursor.bonus = not self.cursor.bonus
        self._redraw()

    def action_die(self, die: int) -> None:
        self.cursor.die = die
        self._redraw()

    def action_clear(self) -> None:
        self.cursor.placements.clear()
        self._redraw()

    def action_joker(self) -> None:
        if self.state is None or self.state.view.WhichOneof("game") != "coloursquare":
            return
        used = len([p for p in self.cursor.placements if p.HasField("joker")])
        sheet = next((p for p in self.state.view.coloursquare.players if p.seat == self.seat), None)
        taken = sum(1 for value in (sheet.jokers if sheet else []) if value)
        self.cursor.placements.append(cs.Placement(die=DIE_ENUM[self.cursor.die], joker=min(1, taken + used)))
        self._redraw()

    async def action_submit(self) -> None:
        if self.state is None or self.seat is None:
            return
        which = self.state.view.WhichOneof("game")
        if which == "coloursquare":
            # A coloured die can only go into a cell of its colour; the white die goes where `t` points.
            colour = self.cursor.die if self.cursor.die < 4 else self.cursor.colour
            cell = cs.Cell(row=self.cursor.row, column=self.cursor.column, colour=cs.Colour.ValueType(colour + 1))
            self.cursor.placements.append(cs.Placement(die=DIE_ENUM[self.cursor.die], cell=cell))
            self._redraw()
            return
        move = connect4_move(self.cursor) if which == "connect4" else plus4_move(self.cursor)
        await self._send(move)

    async def action_send_placements(self) -> None:
        if self.state is None or self.state.view.WhichOneof("game") != "coloursquare":
            return
        placements = list(self.cursor.placements)
        self.cursor.placements.clear()
        await self._send(cs.Move(placements=placements))

    async def _send(self, move: object) -> None:
        assert self.state is not None
        try:
            await self.client.submit_move(
                self.game_id,
                move,  # type: ignore[arg-type]
                expected_version=self.state.summary.status.version,
            )
        except TafelError as error:
            self.say(f"move refused: {error.reason} — {error.message}")
            await self.refresh_game()

    async def action_resign(self) -> None:
        if self.seat is None or self.state is None or self.state.summary.status.over:
            return
        try:
            await self.client.resign(self.game_id)
        except TafelError as error:
            self.say(f"resign refused: {error.reason}")

    async def action_quit(self) -> None:
        self.exit(self.result)


def _seconds(response: play_pb2.WatchGameResponse) -> float:
    return response.turn_deadline.seconds + response.turn_deadline.nanos / 1e9
