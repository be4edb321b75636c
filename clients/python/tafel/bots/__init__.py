"""Bots for tafel's games: pure decision code that turns a game's public view into a move.

- `tafel.bots.connect4`: a bitboard Connect Four solver (`solve`, `best_move`) and `Connect4Bot`.
- `tafel.bots.plus4`: `Plus4Bot`, searching with the Plus 4 rules module itself.
- `tafel.bots.coloursquare`: `ColourSquareBot`, on the view's legal placements and the rules' scoring.

Each bot takes a level: 1 plays random legal moves, 2 looks one move ahead, 3 is the strongest.
`make_bot(game, level)` builds one by game name. Bots never do I/O: the SDK feeds them views and
sends the moves they return (`bot.choose(view)` gives the game's `Move` message).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

from tafel.by_game import REGISTRY

if TYPE_CHECKING:
    from tafel.bots.coloursquare import ColourSquareBot
    from tafel.bots.connect4 import Connect4Bot
    from tafel.bots.plus4 import Plus4Bot

# The games with a bot: each one's client module (tafel/by_game/<game>.py) names its bot.
GAMES = tuple(name for name, module in REGISTRY.items() if module.bot is not None)


@overload
def make_bot(game: Literal["connect4"], level: int, *, seed: int | None = None, **options: Any) -> Connect4Bot: ...
@overload
def make_bot(game: Literal["plus4"], level: int, *, seed: int | None = None, **options: Any) -> Plus4Bot: ...
@overload
def make_bot(
    game: Literal["coloursquare"], level: int, *, seed: int | None = None, **options: Any
) -> ColourSquareBot: ...
@overload
def make_bot(
    game: str, level: int, *, seed: int | None = None, **options: Any
) -> Connect4Bot | Plus4Bot | ColourSquareBot: ...
def make_bot(
    game: str, level: int, *, seed: int | None = None, **options: Any
) -> Connect4Bot | Plus4Bot | ColourSquareBot:
    """A bot for `game` ("connect4", "plus4" or "coloursquare") at `level` 1..3; `options` go to
    its constructor. Its `choose(view)` returns that game's `Move` message for its `View`. The game's
    client module (tafel/by_game/<game>.py) says which bot plays it."""
    module = REGISTRY.get(game)
    if module is None or module.bot is None:
        raise ValueError(f"no bot for game {game!r}; games: {', '.join(GAMES)}")
    bot: Connect4Bot | Plus4Bot | ColourSquareBot = module.bot(level, seed=seed, **options)
    return bot


__all__ = ["GAMES", "make_bot"]
