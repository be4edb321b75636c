"""`tafel replay GAME_ID`: step through a finished game, one action (and the events it caused) at a
time. Each step's board is the server's view at that version (GetGameRecord's views, rebuilt by the
game's rules service), drawn as a live board is; where the server no longer keeps them, the final
position stands beside the steps."""

from __future__ import annotations

from itertools import groupby

from rich.console import Console, Group, RenderableType
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static

from tafel.by_game import REGISTRY
from tafel.cli.boards import Cursor, Seating, render
from tafel.cli.describe import describe, game_title, outcome_text, seat_names
from tafel.cli.shared import translate_bindings
from tafel.client import TafelClient
from tafel.errors import NotFound
from tafel.games.v1 import games_pb2
from tafel.i18n import N_, _
from tafel.play.v1 import play_pb2

SHOWN_STEPS = 12  # the steps listed above the current one


class ReplayApp(App[None]):
    ENABLE_COMMAND_PALETTE = False
    CSS = "#board { padding: 0 1; height: auto; } #steps { padding: 0 2; }"
    KEYS = (
        ("right", "step(1)", N_("next"), True),
        ("left", "step(-1)", N_("back"), True),
        ("home", "jump(0)", N_("start"), False),
        ("end", "jump(-1)", N_("end"), False),
        ("q", "quit", N_("quit"), False),
    )
    BINDINGS = [Binding(key, action, description, priority=first) for key, action, description, first in KEYS]

    def __init__(
        self,
        record: play_pb2.GameRecord,
        state: play_pb2.GetGameResponse,
        events: list[games_pb2.GameEvent],
        views: list[games_pb2.GameView] | None = None,
    ) -> None:
        super().__init__()
        translate_bindings(self)
        self.record = record
        self.state = state
        self.names = seat_names(record.players, None)
        # One step per version: an action and everything it caused.
        self.steps = [list(group) for _, group in groupby(events, key=lambda e: e.version)]
        self.views = views or []  # by version
        self.at = 0
        title = game_title(record.game)
        self.title = _("tafel · replay · {title}: {names}").format(title=title, names=_(" vs ").join(self.names))
        self.sub_title = _("game {game_id}").format(game_id=record.game_id)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="board")
        yield Static(id="steps")
        yield Footer()

    def on_mount(self) -> None:
        self.show()

    def board(self) -> RenderableType:
        """The board at the current step: the server's view of its version, drawn as a live board
        is; the final position, said so, where the server no longer keeps the views."""
        seating = Seating(names=self.names)
        step = self.steps[self.at]
        version = step[0].version if step else 0
        if version >= len(self.views):
            return Group(Text(_("final position:"), style="dim"), render(self.state.view, Cursor(), None, seating))
        view = self.views[version]
        game = view.WhichOneof("game") or ""
        if game in REGISTRY:  # what the view does not carry (the last push's column)
            for event in step:
                if event.WhichOneof("kind") == game:
                    REGISTRY[game].seen(getattr(event, game), seating)
        return render(view, Cursor(), None, seating)

    def show(self) -> None:
        self.query_one("#board", Static).update(self.board())
        lines = Text()
        first = max(0, self.at - SHOWN_STEPS)
        for index in range(first, self.at + 1):
            sentence = " ".join(describe(e, self.names) for e in self.steps[index])
            lines.append(f"{index + 1:>4}. {sentence}\n", style="bold" if index == self.at else "dim")
        counter = _("step {n} of {total}").format(n=self.at + 1, total=len(self.steps))
        result = _("result: {result}").format(result=outcome_text(self.record.outcome, self.names))
        lines.append(f"\n{counter}   {result}")
        self.query_one("#steps", Static).update(lines)

    def action_step(self, delta: int) -> None:
        self.at = max(0, min(len(self.steps) - 1, self.at + delta))
        self.show()

    def action_jump(self, where: int) -> None:
        self.at = where % len(self.steps)
        self.show()


async def replay(client: TafelClient, game_id: str, console: Console) -> int:
    try:
        record, views = await client.get_replay(game_id)
    except NotFound:
        raise NotFound(
            "NO_SUCH_RECORD",
            _("there is no finished game {game_id!r} (`tafel games` lists yours)").format(game_id=game_id),
        ) from None
    state = await client.get_game(game_id)
    events = [response.event async for response in client.watch_with_deadlines(game_id, "", stop_at_end=True)]
    if not events:
        console.print(_("game {game_id} has no recorded events").format(game_id=game_id))
        return 1
    await ReplayApp(record, state, events, views).run_async()
    return 0
