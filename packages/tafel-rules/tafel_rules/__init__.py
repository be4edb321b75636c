"""tafel_rules: the pure rules of tafel's games, one implementation shared by the rules services
(services/<game>, which wrap them in a codec and a gRPC server) and the Python SDK's bots (which
search with them).

Pure: frozen states, listable legal moves, seeded chance kept in the state; the standard library
only — no I/O, gRPC, Redis or generated code (tests/test_layers.py). `game` is the contract
(`Rules`) every game implements; `connect4`, `plus4` and `coloursquare` are the games, each
with its `RULES` at `tafel_rules.<game>`.
"""
