"""Every game in the catalogue (kit/catalogue.py) runs the conformance suite and describes itself
so the gateway needs no code of its own for it: a new game is checked by being listed, it cannot
skip these. The configurations come from the game's own description: default options at every
seat count, then each choice of every choice option and both ends of every integer range (at the
fewest seats the option allows). Game-specific conformance runs (long games, odd boards) stay in
each game's tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tafel_rules.game import InvalidOptions, OptionSpec, Rules

from kit.catalogue import GAMES, RULES_PAGES
from services.host import conformance
from services.host.describe import describe_game, load_game

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = sorted(GAMES.items())


def variants(rules: Rules[Any, Any, Any, Any, Any], codec: Any) -> list[tuple[str, Any, int]]:
    """(label, options, seats): every value the description offers, each at the fewest seats it
    may be played at, with the other options at their defaults."""
    out: list[tuple[str, Any, int]] = []
    default = codec.options_to_proto(rules.default_options())
    for spec in rules.option_specs():
        for value in values_of(spec):
            message = type(default)()
            message.CopyFrom(default)
            field = message.DESCRIPTOR.fields_by_name[spec.name]
            if field.enum_type is not None:
                setattr(message, spec.name, field.enum_type.values_by_name[str(value)].number)
            else:
                setattr(message, spec.name, value)
            out.append((f"{spec.name}={value}", codec.options_from_proto(message), rules.min_seats))
    return out


def values_of(spec: OptionSpec) -> list[int | str]:
    if spec.choices:
        return list(spec.choices)
    assert spec.minimum is not None and spec.maximum is not None, f"{spec.name}: an integer option needs a range"
    return [spec.minimum, spec.maximum]


@pytest.mark.parametrize(("game", "package"), CATALOGUE)
def test_every_seat_count_plays_by_the_rules(game: str, package: str) -> None:
    rules, codec = load_game(package)
    assert rules.name == game, f"kit/catalogue.py lists {package} as {game}, its rules call it {rules.name}"
    for seats in range(rules.min_seats, rules.max_seats + 1):
        conformance.run_suite(rules, codec, rules.default_options(), seats, seeds=range(2))


@pytest.mark.parametrize(("game", "package"), CATALOGUE)
def test_every_described_option_value_plays_by_the_rules(game: str, package: str) -> None:
    rules, codec = load_game(package)
    played = 0
    for label, options, seats in variants(rules, codec):
        try:
            rules.check_options(options, seats)
        except InvalidOptions as refused:
            pytest.fail(f"{game} describes {label} but refuses it at {seats} seats: {refused}")
        conformance.run_suite(rules, codec, options, seats, seeds=range(2))
        played += 1
    assert played == sum(len(values_of(spec)) for spec in rules.option_specs())


def test_the_descriptions_say_all_the_gateway_needs() -> None:
    """Seat ranges, rating pools and personal-best boards as the gateway reads them
    (gateway/ratings/pools.py): pool names unique across the catalogue, each pool within the
    game's seats and no two of a game overlapping, boards named by a choice option of a game
    that may be played solo; every game has its rules page."""
    seen: dict[str, str] = {}
    for game, package in CATALOGUE:
        rules, codec = load_game(package)
        description = describe_game(rules, codec)
        assert description.game == game and description.title
        assert 1 <= description.min_seats <= description.max_seats
        assert (ROOT / RULES_PAGES[game]).is_file(), f"{game} has no rules page"
        covered: set[int] = set()
        for pool in description.rating_pools:
            assert pool.name not in seen, f"pool {pool.name} of {game} is also {seen.get(pool.name)}'s"
            seen[pool.name] = game
            assert max(2, description.min_seats) <= pool.min_seats <= pool.max_seats <= description.max_seats
            seats = set(range(pool.min_seats, pool.max_seats + 1))
            assert not seats & covered, f"{game}: pool {pool.name} overlaps another pool's seats"
            covered |= seats
        if description.HasField("personal_bests"):
            bests = description.personal_bests
            assert bests.name not in seen, f"boards {bests.name} of {game} clash with {seen.get(bests.name)}"
            seen[bests.name] = game
            assert description.min_seats == 1, f"{game} keeps solo bests but cannot be played solo"
            options = {spec.name: spec for spec in description.options}
            assert options[bests.board_option].WhichOneof("values") == "choice"
