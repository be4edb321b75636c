"""Offers between the players of a game: a draw, a takeback, a rematch; and aborting a game that has
barely begun. The agreement is the platform's (kept beside the game, told on the players' event
streams); what it does to the game is a rules action (gateway/actions.py)."""
