"""Every game the platform runs: machine name -> the package of its rules service.

`make run` starts one service per entry and the gateway routes to them by name; registering a
game is one line here.
"""

GAMES: dict[str, str] = {
    "connect4": "services.connect4",
    "plus4": "services.plus4",
    "coloursquare": "services.coloursquare",
}

# Fixed default ports for `make run` (0 = any free port in tests).
DEFAULT_PORTS: dict[str, int] = {
    "connect4": 50061,
    "plus4": 50062,
    "coloursquare": 50063,
}
