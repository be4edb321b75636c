"""`tafel catalogue`: the games the server offers (LobbyService.ListGameTypes), each option said in
words in the player's language. The server describes its options for programmers (field names,
enum value names such as MODE_POINTS, an English sentence); a player reads the labels here, and an
option this client does not know yet shows its name and the server's sentence."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from tafel.cli.describe import game_title
from tafel.client import TafelClient
from tafel.i18n import N_, _, language, number
from tafel.play.v1 import play_pb2


def rules_in_language(url: str, lang: str) -> str:
    """The rules page in the player's language: docs/rules has <page>.md (English) beside
    <page>.nl.md and <page>.de.md for every game (tests/docs/test_rules_pages.py keeps it so)."""
    if lang == "en" or not url.endswith(".md") or url.endswith((".nl.md", ".de.md")):
        return url
    return f"{url[: -len('.md')]}.{lang}.md"


# (game, option field) -> (label, what it changes).
OPTIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("connect4", "rows"): (N_("rows"), N_("the height of the board")),
    ("connect4", "columns"): (N_("columns"), N_("the width of the board")),
    ("plus4", "mode"): (N_("how to win"), N_("points, the first line, or rounds")),
    ("plus4", "target"): (N_("target"), N_("the points (or rounds won) needed to win")),
    ("plus4", "move_limit"): (N_("push limit"), N_("pushes in the whole game, after which the score decides")),
    ("coloursquare", "side"): (N_("sheet"), N_("the side of the score sheet to play on")),
    ("coloursquare", "target"): (N_("solo target"), N_("alone: the score to reach (0: none)")),
    ("coloursquare", "timeouts_to_remove"): (
        N_("timeouts before removal"),
        N_("turns in a row a player may let run out before leaving the table"),
    ),
    ("coloursquare", "max_rounds"): (N_("round limit"), N_("the game ends after this many rounds at most")),
}
# A choice's value (an enum value name or a string) -> its words.
CHOICES: dict[tuple[str, str], str] = {
    ("plus4", "MODE_POINTS"): N_("points: first to the target in points"),
    ("plus4", "MODE_FIRST_LINE"): N_("first line: the first completed line wins"),
    ("plus4", "MODE_ROUNDS"): N_("rounds: each completed line wins a round, first to the target in rounds"),
    ("coloursquare", "A"): N_("A: targets, purple and orange squares"),
    ("coloursquare", "B"): N_("B: pre-printed cells and ranges"),
}


def option_label(game: str, spec: play_pb2.OptionSpec) -> str:
    known = OPTIONS.get((game, spec.name))
    return _(known[0]) if known else spec.name


def option_text(game: str, spec: play_pb2.OptionSpec) -> str:
    """What the option does and which values it takes, in words."""
    known = OPTIONS.get((game, spec.name))
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
    known = CHOICES.get((game, value))
    return _(known) if known else value


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
