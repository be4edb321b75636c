"""Vacations: a yearly allowance of whole hours during which a player's correspondence clocks stand
still (model: the allowance and the clock arithmetic; store: Redis, lua/vacation/; service:
VacationService). What a vacation does to games is gateway/correspondence.py's."""
