"""`tafel catalogue`: the games the server offers (LobbyService.ListGameTypes), each option said in
words in the player's language. The server describes its options for programmers (field names,
enum value names such as MODE_POINTS, an English sentence); a player reads the labels here, and an
option this client does not know yet shows its name and the server's sentence."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from tafel.by_game import REGISTRY
from tafel.cli.describe import game_title
from tafel.client import TafelClient
from tafel.i18n import _, language, number
from tafel.play.v1 import play_pb2


def rules_in_language(url: str, lang: str) -> str:
    """The rules page in the player's language: docs/rules has <page>.md (English) beside
    <page>.nl.md and <page>.de.md for every game (tests/docs/test_rules_pages.py keeps it so)."""
    if lang == "en" or not url.endswith(".md") or url.endswith((".nl.md", ".de.md")):
        return url
    return f"{url[: -len('.md')]}.{lang}.md"


def option_label(game: str, spec: play_pb2.OptionSpec) -> str:
    known = _option_words(game, spec.name)
    return _(known[0]) if known else spec.name


def option_text(game: str, spec: play_pb2.OptionSpec) -> str:
    """What the option does and which values it takes, in words."""
    known = _option_words(game, spec.name)
    what = _(known[1]) if known else spec.description
    if spec.WhichOneof("values") == "choice":
        choices = [choice_text(game, c) for c in spec.choice.choices]
        default = choice_text(game, spec.choice.default_value).split(":")[0]
        values = "; ".join(choices) + " " + _("(default: {value})").format(value=default)
    else:
        values = _("{low} to {high} (default: {value})").format(
            low=number(spec.integer.minimum),
            high=number(spec.integer.maximum),
            value=number(spec.integer.default_value),
        )
    text = f"{what}: {values}"
    if spec.max_seats:
        text += " " + _("(only at tables of at most {n})").format(n=spec.max_seats)
    return text


def choice_text(game: str, value: str) -> str:
    module = REGISTRY.get(game)
    known = module.choice_words.get(value) if module else None
    return _(known) if known else value


def _option_words(game: str, option: str) -> tuple[str, str] | None:
    """(label, what it changes), from the game's module; None for an option it does not know."""
    module = REGISTRY.get(game)
    return module.option_words.get(option) if module else None


async def catalogue(client: TafelClient, console: Console) -> int:
    for game in await client.game_types():
        seats = (
            str(game.min_seats)
            if game.min_seats == game.max_seats
            else _("{low} to {high}").format(low=game.min_seats, high=game.max_seats)
        )
        table = Table(title=f"{game_title(game.game)} ({game.game})", title_justify="left")
        table.add_column(_("option"))
        table.add_column(_("what it does"))
        table.add_row(_("players"), seats)
        for spec in game.options:
            table.add_row(option_label(game.game, spec), option_text(game.game, spec))
        if game.rules_url:
            table.add_row(_("rules"), rules_in_language(game.rules_url, language()))
        console.print(table)
    return 0
