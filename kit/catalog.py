"""Every game the platform runs: machine name -> the package of its rules service.

`make run` starts one service per entry and the gateway routes to them by name; registering a
game is one line here.
"""

GAMES: dict[str, str] = {
    "connect4": "services.connect4",
    "plus4": "services.plus4",
    "coloursquare": "services.coloursquare",
}

# Each game's rules page, in the platform's own words (DescribeGame / ListGameTypes `rules_url`).
RULES_PAGES: dict[str, str] = {
    "connect4": "docs/rules/connect-four.md",
    "plus4": "docs/rules/plus-4.md",
    "coloursquare": "docs/rules/colour-square.md",
}


def rules_url(game: str, base_url: str = "") -> str:
    """The rules page of `game`: under `base_url` when the operator publishes docs/ somewhere
    (TAFEL_RULES_BASE_URL), else its path in the source tree; "" for a game without a page."""
    page = RULES_PAGES.get(game, "")
    if not page or not base_url:
        return page
    return f"{base_url.rstrip('/')}/{page.removeprefix('docs/')}"


# Fixed default ports for `make run` (0 = any free port in tests).
DEFAULT_PORTS: dict[str, int] = {
    "connect4": 50061,
    "plus4": 50062,
    "coloursquare": 50063,
}
