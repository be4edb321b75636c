"""Every game the platform runs, one line each: its machine name, the package of its rules
service, its rules page and its fixed port for `make run`.

`make run` starts one service per entry and the gateway routes to them by name; everything else
the platform knows of a game it asks the game's rules service (DescribeGame: seats, options,
rating pools, personal bests). Registering a game is one line here (and its rules service);
tests/services/test_conformance_catalogue.py then holds it to the conformance suite.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    package: str  # the rules service: `python -m <package>`; <package>.rules.RULES, .codec.CODEC
    rules_page: str  # the game's rules page, in the platform's own words (DescribeGame rules_url)
    port: int  # default port for `make run` (0 = any free port in tests)


CATALOGUE: dict[str, Entry] = {
    "connect4": Entry("services.connect4", "docs/rules/connect-four.md", 50061),
    "plus4": Entry("services.plus4", "docs/rules/plus-4.md", 50062),
    "coloursquare": Entry("services.coloursquare", "docs/rules/colour-square.md", 50063),
}

# The same, by what each user reads.
GAMES: dict[str, str] = {game: entry.package for game, entry in CATALOGUE.items()}
RULES_PAGES: dict[str, str] = {game: entry.rules_page for game, entry in CATALOGUE.items()}
DEFAULT_PORTS: dict[str, int] = {game: entry.port for game, entry in CATALOGUE.items()}


def rules_url(game: str, base_url: str = "") -> str:
    """The rules page of `game`: under `base_url` when the operator publishes docs/ somewhere
    (TAFEL_RULES_BASE_URL), else its path in the source tree; "" for a game without a page."""
    page = RULES_PAGES.get(game, "")
    if not page or not base_url:
        return page
    return f"{base_url.rstrip('/')}/{page.removeprefix('docs/')}"
