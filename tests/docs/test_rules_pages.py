"""The rules pages in three languages (docs/rules/<page>.md English, .nl.md Dutch, .de.md German):
every game has all three, each opens with a line linking the other two, the three have the same
sections in the same order, and they name the same codes (refusal reasons, end reasons, options
values), so what the platform decides is said in every language. Reads files only."""

from __future__ import annotations

import re
from pathlib import Path

import grpc
import pytest

from kit.catalogue import RULES_PAGES

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = {"en": "English", "nl": "Nederlands", "de": "Deutsch"}
# gRPC status names (FAILED_PRECONDITION) are for client authors and need not be repeated.
STATUS_NAMES = {code.name for code in grpc.StatusCode}


def page_path(game: str, lang: str) -> Path:
    english = ROOT / RULES_PAGES[game]
    return english if lang == "en" else english.with_suffix(f".{lang}.md")


def headings(text: str) -> list[int]:
    """The level of every heading, in order (outside fenced code)."""
    levels, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"(#{1,6})\s", line)):
            levels.append(len(match[1]))
    return levels


def codes(text: str) -> set[str]:
    return {c for c in re.findall(r"`([A-Z][A-Z0-9_]+)`", text) if c not in STATUS_NAMES}


@pytest.mark.parametrize("game", sorted(RULES_PAGES))
def test_every_game_has_a_page_in_each_language(game: str) -> None:
    missing = [
        str(page_path(game, lang).relative_to(ROOT)) for lang in LANGUAGES if not page_path(game, lang).is_file()
    ]
    assert not missing, f"{game}: no rules page {missing}"


@pytest.mark.parametrize("game", sorted(RULES_PAGES))
def test_each_page_links_the_other_languages_at_the_top(game: str) -> None:
    for lang, name in LANGUAGES.items():
        lines = [line for line in page_path(game, lang).read_text(encoding="utf-8").splitlines() if line.strip()]
        assert lines[0].startswith("# "), (game, lang, "the page opens with its title")
        links = lines[1]
        assert f"**{name}**" in links, (game, lang, links)
        for other, other_name in LANGUAGES.items():
            if other != lang:
                assert f"[{other_name}]({page_path(game, other).name})" in links, (game, lang, other, links)


@pytest.mark.parametrize("game", sorted(RULES_PAGES))
def test_the_three_pages_have_the_same_sections(game: str) -> None:
    structure = {lang: headings(page_path(game, lang).read_text(encoding="utf-8")) for lang in LANGUAGES}
    english = structure["en"]
    assert english.count(2) >= 3, structure
    for lang, levels in structure.items():
        assert len(levels) == len(english), (
            f"{game}: {lang} has {len(levels)} headings, English {len(english)}: the three pages need the same sections"
        )
        assert levels == english, (
            f"{game}: {lang}'s sections differ from English in level or order: {levels} vs {english}"
        )


@pytest.mark.parametrize("game", sorted(RULES_PAGES))
def test_the_three_pages_name_the_same_codes(game: str) -> None:
    named = {lang: codes(page_path(game, lang).read_text(encoding="utf-8")) for lang in LANGUAGES}
    assert named["en"], game
    for lang in ("nl", "de"):
        assert named[lang] == named["en"], (
            f"{game}: {lang} lacks {sorted(named['en'] - named[lang])}, has extra {sorted(named[lang] - named['en'])}"
        )


def test_no_stray_translation_without_an_english_page() -> None:
    known = {Path(page).name for page in RULES_PAGES.values()}
    for path in (ROOT / "docs" / "rules").glob("*.md"):
        english = re.sub(r"\.(nl|de)\.md$", ".md", path.name)
        assert english in known, f"{path.name}: no game's rules page is {english}"
