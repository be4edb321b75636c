"""What every game's client module declares (`GameClient`), and the small types they share: the
cursor the player moves, the seating drawn beside a board, and the names a sentence speaks of.

A game's module (tafel/by_game/<game>.py) fills one `GameClient`; the terminal and the SDK ask
the registry (tafel/by_game/__init__.py) instead of testing a game's name, so a new game is one
module here and a line in the registry (docs/new-game.md)."""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message
from rich.console import RenderableType

from tafel.i18n import _

SEAT_STYLES = ("bold yellow", "bold red", "bold green", "bold blue", "bold magenta", "bold cyan")


@dataclass
class Cursor:
    """What the player points at on the live screen. Kept by the screen between key presses; each
    game's module reads the fields its own keys move and ignores the rest."""

    column: int = 0
    row: int = 0
    colour: int = 0  # a cell's colour, for games whose cells have several
    bonus: bool = False  # a special piece chosen for the next move
    die: int = 0  # the die chosen for the next placement, for dice games
    placements: list[Any] = field(default_factory=list)  # parts of a move gathered before it is sent
    round: int = -1  # the round the cursor was last set up for (a new round resets the parts)


@dataclass
class Seating:
    """Who sits where and whose clock runs: names by seat ("you" for the viewer)."""

    names: list[str] = field(default_factory=list)
    to_act: set[int] = field(default_factory=set)
    clock: str = ""  # time left for the seats to act, e.g. "0:42"
    per_move: str = ""  # each move's allowance, shown for the seats not on the clock
    last_column: int | None = None  # the last move's column, where a view does not carry it
    width: int = 100  # the screen's columns: how many player sheets fit side by side

    def name(self, seat: int) -> str:
        return self.names[seat] if seat < len(self.names) else _("seat {number}").format(number=seat + 1)

    def clock_of(self, seat: int) -> str:
        if seat in self.to_act:
            return ("◀ " + _("to move") + f" {self.clock}").rstrip()
        return f"  {self.per_move}" if self.per_move else ""


def you() -> str:
    return _("you")


def seat_label(seat: int) -> str:
    return _("seat {number}").format(number=seat + 1)


class Namer:
    """Seat number to a name, falling back to "seat N" (counted from 1) for seats it does not know."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)

    def __call__(self, seat: int) -> str:
        return self.names[seat] if seat < len(self.names) else seat_label(seat)

    def is_you(self, seat: int) -> bool:
        return self(seat) == you()

    def say(self, seat: int, mine: str, theirs: str, **values: object) -> str:
        """`mine` when `seat` is the viewer's, else `theirs` with {name}; both already translated."""
        if self.is_you(seat):
            return mine.format(**values)
        return theirs.format(name=self(seat), **values)

    def join(self, seats: Sequence[int]) -> str:
        """ "alice and bob"; "nobody" for no seat."""
        return _(" and ").join(self(s) for s in seats) or _("nobody")


Say = Callable[[str], None]  # a line for the screen's log


def _nothing(*_args: object) -> None:
    return None


def _no_options(_args: argparse.Namespace) -> Message | None:
    return None


@dataclass(frozen=True)
class GameClient:
    """One game as the Python client knows it. `name` is the game's field in every games.v1 union
    (GameMove, GameView, GameEvent, GameOptions) and its name in the catalogue (ListGameTypes).

    The callables take the game's own messages (the union's field already taken out), so a module
    never looks at another game's. Those with defaults are for games that need them."""

    name: str
    # The title as the game's clubs say it, marked with N_ and translated where shown. The server's
    # catalogue carries an English title only; the player reads theirs.
    title: str
    # The board: (the game's View, cursor, the viewer's seat or None, seating) -> a rich renderable.
    render: Callable[[Any, Cursor, int | None, Seating], RenderableType]
    # One sentence for one of the game's own events, names by seat ("you" for the viewer).
    describe: Callable[[Any, Namer], str]
    # How a game of it ends (Outcome.reason, N_-marked words), beyond the endings all games share.
    endings: Mapping[str, str] = field(default_factory=dict)
    # Option field -> (label, what it changes) and a choice's value -> its words, for `tafel catalogue`.
    option_words: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    choice_words: Mapping[str, str] = field(default_factory=dict)
    # The game's Options from the command line (--target, --mode, --side); None: the defaults.
    options_from_args: Callable[[argparse.Namespace], Message | None] = _no_options
    # The live screen's keys beyond the common ones (screen actions; see tafel/cli/app.py).
    actions: frozenset[str] = frozenset()
    # Columns the cursor moves over, from the View.
    columns: Callable[[Any], int] = lambda _view: 4
    # Enter/space: the Move to send now, or None when the key only gathered a part of one.
    submit: Callable[[Any, Cursor, int, Say], Message | None] = lambda _view, _cursor, _seat, _say: None
    # After a move was accepted (e.g. a special piece is spent).
    moved: Callable[[Cursor], None] = _nothing
    # The "b" key.
    press_b: Callable[[Cursor], None] = _nothing
    # "j": put a part on a joker field; "p": the gathered parts as one Move (None: nothing to send).
    joker: Callable[[Any, Cursor, int, Say], None] = _nothing
    send_parts: Callable[[Cursor], Message | None] = lambda _cursor: None
    # The cursor follows a new View (no spent piece chosen, the right die for the role).
    follow_view: Callable[[Any, Cursor, int], None] = _nothing
    # One of the game's own events seen on the live screen (what the view does not carry).
    seen: Callable[[Any, Seating], None] = _nothing
    # Options for a short game, where a game is played to check something else (the conformance
    # kit's play-<game> scenarios); None: the defaults are short enough.
    short_options: Message | None = None
    # The game's bot: (level 1..3, seed=..., **options) -> an object whose choose(View) gives a Move
    # (tafel/bots/; imported when a bot is made, so the terminal starts without the engines).
    bot: Callable[..., Any] | None = None
    # A random legal move from the View alone, where the view lists them (load generators);
    # None: a level-1 bot's move.
    random_move: Callable[[Any, random.Random], Message] | None = None
