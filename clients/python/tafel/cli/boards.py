"""Drawing a game's view as a rich renderable: the registry's module for the game draws it
(tafel/by_game/<game>.py); no I/O here."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from tafel.by_game import REGISTRY
from tafel.by_game.base import Cursor, Seating
from tafel.games.v1 import games_pb2
from tafel.i18n import _


def render(view: games_pb2.GameView, cursor: Cursor, seat: int | None, table: Seating | None = None) -> RenderableType:
    which = view.WhichOneof("game") or ""
    module = REGISTRY.get(which)
    if module is None:
        return Text(_("(no view)"))
    return module.render(getattr(view, which), cursor, seat, table or Seating())


def columns_of(view: games_pb2.GameView) -> int:
    which = view.WhichOneof("game") or ""
    module = REGISTRY.get(which)
    return module.columns(getattr(view, which)) if module else 4


__all__ = ["Cursor", "Seating", "columns_of", "render"]
