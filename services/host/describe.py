"""What a rules service says about its game (DescribeGame): name, seats, options with their
ranges, rules page, and how the platform rates it (rating pools, solo personal bests).

Everything the gateway knows of a game comes from this answer, so a new game is a new rules
service and a line in kit/catalogue.py; `load_game` is how tests and tools reach a catalogued game's
rules without a server.
"""

from __future__ import annotations

import importlib
from typing import Any

from tafel.rules.v1 import rules_pb2
from tafel_rules.game import Rules

from services.host.codec import GameCodec, GameEnvelope


def describe_game(
    rules: Rules[Any, Any, Any, Any, Any], codec: GameCodec[Any, Any, Any, Any, Any], rules_url: str = ""
) -> rules_pb2.DescribeGameResponse:
    response = rules_pb2.DescribeGameResponse(
        game=rules.name,
        title=rules.title,
        min_seats=rules.min_seats,
        max_seats=rules.max_seats,
        default_options=GameEnvelope(codec).options_to_union(rules.default_options()),
        rules_url=rules_url,
    )
    for spec in rules.option_specs():
        option = response.options.add(name=spec.name, description=spec.description, max_seats=spec.max_seats)
        if spec.choices:
            option.choice.choices.extend(spec.choices)
            option.choice.default_value = str(spec.default)
        else:
            option.integer.minimum = spec.minimum or 0
            option.integer.maximum = spec.maximum or 0
            option.integer.default_value = int(spec.default)
    for pool in rules.rating_pools:
        response.rating_pools.add(name=pool.name, title=pool.title, min_seats=pool.min_seats, max_seats=pool.max_seats)
    if rules.personal_bests is not None:
        response.personal_bests.name = rules.personal_bests.name
        response.personal_bests.board_option = rules.personal_bests.board_option
    return response


def load_game(package: str) -> tuple[Rules[Any, Any, Any, Any, Any], GameCodec[Any, Any, Any, Any, Any]]:
    """The RULES and CODEC of a rules service package (kit.catalogue.GAMES' values, services.<game>):
    the game's pure rules are `tafel_rules.<game>` with RULES, its service package has a `codec`
    module with CODEC."""
    rules = importlib.import_module(f"tafel_rules.{package.rpartition('.')[2]}").RULES
    codec = importlib.import_module(f"{package}.codec").CODEC
    return rules, codec
