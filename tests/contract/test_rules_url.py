"""rules_url: each game's page in the source tree, or under the operator's published docs."""

from __future__ import annotations

from pathlib import Path

from kit.catalogue import GAMES, RULES_PAGES, rules_url

ROOT = Path(__file__).resolve().parents[2]


def test_every_game_has_a_rules_page_in_the_tree() -> None:
    assert set(RULES_PAGES) == set(GAMES)
    for game in GAMES:
        assert (ROOT / rules_url(game)).is_file()


def test_a_base_url_publishes_the_pages_under_it() -> None:
    assert rules_url("plus4", "https://docs.example.org/tafel/") == "https://docs.example.org/tafel/rules/plus-4.md"
    assert rules_url("nosuchgame", "https://docs.example.org") == ""
