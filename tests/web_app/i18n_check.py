"""English left on a page shown in Dutch or German, for the browser tests: the page's
visible text is walked against the English catalogue's sentences (clients/web/locales/en/*.json).
A piece of an English sentence (the text between its {{placeholders}}) counts when it is long
enough to mean something (two words, or one of six letters or more) and the language's own
catalogue never uses it (names such as "Buchholz" or "Lobby" are the same in every language)."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from playwright.sync_api import Page

LOCALES = Path(__file__).resolve().parents[2] / "clients" / "web" / "locales"
PLACEHOLDER = re.compile(r"\{\{[^}]*\}\}")
EDGES = " \t\n·:;,.!?()[]\"'…\u2013-→←"  # \u2013: the en dash


def _leaves(node: object) -> list[str]:
    if isinstance(node, dict):
        return [leaf for value in node.values() for leaf in _leaves(value)]
    return [node] if isinstance(node, str) else []


@cache
def sentences(lang: str) -> tuple[str, ...]:
    return tuple(leaf for path in sorted((LOCALES / lang).glob("*.json")) for leaf in _leaves(json.loads(path.read_text("utf-8"))))


@cache
def english_pieces(lang: str) -> tuple[str, ...]:
    """The pieces of English that must not appear on a page in `lang`."""
    own = "\n".join(sentences(lang))
    pieces: set[str] = set()
    for sentence in sentences("en"):
        for part in PLACEHOLDER.split(sentence):
            piece = part.strip(EDGES)
            words = piece.split()
            if len(words) >= 2 or (len(words) == 1 and len(piece) >= 6 and piece.isalpha()):
                if piece not in own:
                    pieces.add(piece)
    return tuple(sorted(pieces, key=len, reverse=True))


def english_left(text: str, lang: str) -> list[str]:
    """The English pieces found in `text` (a page's visible text in `lang`)."""
    found = []
    for piece in english_pieces(lang):
        if re.search(rf"(?<!\w){re.escape(piece)}(?!\w)", text):
            found.append(piece)
    return found


def assert_no_english(page: Page, lang: str, ignore: tuple[str, ...] = ()) -> None:
    """Fails with the English pieces on `page`, minus `ignore` (player names, user content)."""
    text = page.evaluate("() => document.body.innerText")
    for skip in ignore:
        text = text.replace(skip, " ")
    left = english_left(text, lang)
    assert not left, f"English left on {page.url} in {lang}: {left}\n--- page text ---\n{text}"


def assert_fits(page: Page) -> None:
    """Nothing wider than the viewport (long German words included)."""
    over = page.evaluate(
        """() => {
          const width = document.documentElement.clientWidth;
          return [...document.querySelectorAll('body *')]
            .filter((e) => e.getBoundingClientRect().right > width + 1 && getComputedStyle(e).position !== 'fixed')
            .filter((e) => !e.closest('.table-wrap'))
            .slice(0, 5).map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${e.textContent.slice(0, 40)}`);
        }"""
    )
    assert not over, f"wider than the screen on {page.url}: {over}"
