"""What several of the terminal client's commands share: a table column for ids, and the game
options and time control read from the command line. Its own module because main.py dispatches
to the commands' modules, which must not import main.py back (an import cycle)."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from google.protobuf.message import Message
from rich.console import Console
from rich.table import Table

from tafel.by_game import REGISTRY
from tafel.errors import TafelError
from tafel.i18n import N_, _
from tafel.refusals import refusal_text


def id_column(table: Table, header: str, ids: list[str]) -> None:
    """An id column that never shortens an id (it is there to be copied)."""
    table.add_column(header, no_wrap=True, min_width=max((len(i) for i in ids), default=len(header)))


def sentence(error: TafelError) -> str:
    """What a person reads for a refusal or failure, in their language: in English the server's
    sentence, or the SDK's plain one for a status gRPC made (tafel/errors.py keeps gRPC's own text
    out of `message`); in Dutch or German the sentence for its reason code (tafel/refusals.py)."""
    return refusal_text(error)


# What every screen says when the game server stops answering, and when it is back;
# translated where shown (`_(LOST)`).
LOST = N_("Lost the connection to the game server. Reconnecting…")
BACK = N_("Connected to the game server again.")


def console_connection(console: Console, kept: str, meanwhile: str) -> Callable[[bool], Awaitable[None]]:
    """An `on_connection` for a wait printed line by line (matchmaking, a room, a tournament's
    feed): the loss and the return in words, what is kept, what it is doing once back."""

    async def tell(up: bool) -> None:
        if up:
            console.print(_(BACK) + f" {meanwhile}", highlight=False)
        else:
            console.print(_(LOST) + f" {kept} " + _("(Ctrl-C stops.)"), highlight=False)

    return tell


def translate_bindings(node: Any) -> None:
    """The footer's words in the player's language: a Textual class's BINDINGS are made when the
    class is defined, before the language is chosen, so they hold the English (marked with N_) and
    each screen swaps in the translations of its own copy (DOMNode._bindings) when it is made."""
    bindings = node._bindings.key_to_bindings
    for key, listed in bindings.items():
        bindings[key] = [replace(b, description=_(b.description)) if b.description else b for b in listed]


def per_move(seconds: float | None, days: int | None = None) -> dict[str, Any]:
    """The clock options for the SDK: seconds a move, or days a move (correspondence)."""
    if days:
        return {"days_per_move": days}
    return {"per_move_s": seconds} if seconds else {}


def table_options(args: argparse.Namespace) -> Message | None:
    """The game's own options from --target/--mode/--side (None: the game's defaults)."""
    module = REGISTRY.get(args.game)
    return module.options_from_args(args) if module else None
