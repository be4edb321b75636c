"""The `tafel` terminal client: play, watch, list games, run bots."""
