"""The terminal client's languages, checked without a platform: every refusal reason of
the contract (protos/tafel/games/v1/reasons.proto) has a sentence, every message of the catalogue a
Dutch and a German translation with the same placeholders, the committed template matches what the
code marks today, and a refusal reaches a Dutch or German player in their language, not the
server's English."""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import grpc
import pytest
from tafel import i18n
from tafel.cli.catalogue import rules_in_language
from tafel.cli.describe import ENDINGS, outcome_text
from tafel.cli.shared import sentence
from tafel.errors import error_for
from tafel.games.v1 import games_pb2
from tafel.i18n_tools import TEMPLATE, extract, missing, msgids, read, sources
from tafel.refusals import REFUSALS

from tests.contract.test_reasons import LIST, listed

LANGUAGES = [lang for lang in i18n.LANGUAGES if lang != i18n.DEFAULT]
ENTRY = re.compile(r"^//   ([A-Z][A-Z0-9_]*) \(([A-Za-z_, ]+)\): ")


@pytest.fixture
def speak() -> Iterator[object]:
    """Switches the language for one test, and back to English after it."""
    yield i18n.use
    i18n.use(i18n.DEFAULT)


def where() -> dict[str, set[str]]:
    """Reason -> where it travels (gRPC codes, outcome, cancelled, reconnect), from the contract."""
    out: dict[str, set[str]] = {}
    for line in LIST.read_text().splitlines():
        match = ENTRY.match(line)
        if match:
            out[match.group(1)] = {part.strip() for part in match.group(2).split(",")}
    return out


def test_every_reason_in_the_contract_has_a_sentence() -> None:
    places = where()
    assert set(places) == set(listed())  # the same parser's view of the list
    lacking = []
    for reason, travels in places.items():
        if travels == {"outcome"}:
            if reason not in ENDINGS:
                lacking.append(f"{reason} (how a game ended: tafel/cli/describe.py ENDINGS)")
        elif reason not in REFUSALS:
            lacking.append(f"{reason} (a refusal: tafel/refusals.py REFUSALS)")
    assert not lacking, "reasons without words:\n" + "\n".join(lacking)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_reason_is_translated(lang: str) -> None:
    catalog = read(i18n.catalogue_path(lang), lang)
    untranslated = [
        reason
        for reason, text in {**REFUSALS, **ENDINGS}.items()
        if (found := catalog.get(text)) is None or not found.string or found.fuzzy
    ]
    assert not untranslated, f"{lang} lacks the words for: {', '.join(untranslated)}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_message_is_translated_with_its_placeholders(lang: str) -> None:
    assert not missing(lang), f"{lang} lacks (python -m tafel.i18n_tools check):\n" + "\n".join(missing(lang))
    fields = string.Formatter()

    def names(text: str) -> set[str]:
        return {name for _, name, _, _ in fields.parse(text) if name is not None}

    wrong = []
    for message in read(i18n.catalogue_path(lang), lang):
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        texts = message.string if isinstance(message.string, tuple) else (message.string,)
        expected = set().union(*(names(i) for i in ids))
        for text in texts:
            # A plural form may leave out {n} ("één" for one); no form may name what the code lacks.
            if names(text) - expected or (len(ids) == 1 and names(text) != expected):
                wrong.append(f"{ids[0]!r} -> {text!r}")
    assert not wrong, f"{lang}: placeholders differ:\n" + "\n".join(wrong)


def test_the_template_is_what_the_code_marks_today() -> None:
    """A string wrapped in _() since the template was made (or one removed) fails here: run
    `python -m tafel.i18n_tools update` and translate what it adds."""
    fresh, committed = msgids(extract()), msgids(read(TEMPLATE))
    assert fresh == committed, (
        f"not in the template: {sorted(map(str, fresh - committed))}; gone from the code: {sorted(map(str, committed - fresh))}"
    )


def test_no_message_is_marked_inside_an_f_string() -> None:
    """Babel's extractor does not look inside f-strings (before Python 3.12): a `{_("...")}` there
    would be shown untranslated and missing from the template without the test above noticing."""
    hidden = [
        f"{path.name}:{number}"
        for path in sources()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\{(_|ngettext)\(", line)
    ]
    assert not hidden, hidden


def test_a_refusal_in_dutch_and_german_is_chosen_by_its_code(speak) -> None:  # type: ignore[no-untyped-def]
    full = error_for(grpc.StatusCode.FAILED_PRECONDITION, "COLUMN_FULL", "column 3 is full")
    assert sentence(full) == "column 3 is full"  # English: the server's own words
    speak("nl")
    assert sentence(full) == "die kolom is vol"
    speak("de")
    assert sentence(full) == "diese Spalte ist voll"
    # The metadata's facts come along in words: a mute's end in the locale's format.
    muted = error_for(
        grpc.StatusCode.PERMISSION_DENIED,
        "CHAT_MUTED",
        "muted until 2030-05-01T12:00:00Z",
        {"until": "2030-05-01T12:00:00Z"},
    )
    assert sentence(muted).startswith("du bist im Chat stummgeschaltet bis ") and "2030" in sentence(muted)
    assert "muted" not in sentence(muted)
    # A reason a newer server sends and this client lacks: a general refusal with its code, in Dutch.
    speak("nl")
    unknown = error_for(grpc.StatusCode.FAILED_PRECONDITION, "SOMETHING_NEW", "a brand new refusal")
    assert sentence(unknown) == "de spelserver weigerde dit (SOMETHING_NEW)"


def test_outcomes_plurals_and_dates_in_each_language(speak) -> None:  # type: ignore[no-untyped-def]
    won = games_pb2.Outcome(reason="FOUR_IN_A_ROW", winners=[0])
    speak("nl")
    assert outcome_text(won, ["jij", "Bot (niveau 1)"]) == "je hebt gewonnen (vier op een rij)"
    assert i18n.ngettext("{n} disc", "{n} discs", 1).format(n=1) == "1 schijf"
    assert i18n.ngettext("{n} disc", "{n} discs", 3).format(n=3) == "3 schijven"
    assert i18n.number(1234.5) == "1.234,5"
    speak("de")
    assert (
        outcome_text(won, ["Bot (Stufe 1)", "du"])
        == "du hast verloren, Bot (Stufe 1) hat gewonnen (vier in einer Reihe)"
    )
    assert i18n.date_time(datetime(2026, 6, 12, 7, 2, tzinfo=UTC)).startswith(
        ("12.06.2026", "11.06.2026", "13.06.2026")
    )
    speak("en")
    assert i18n.number(1234.5) == "1,234.5"


def test_the_language_is_chosen_and_remembered(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {"TAFEL_CONFIG": str(tmp_path / "config.json"), "LANG": "de_DE.UTF-8"}
    assert i18n.choose(None, env) == "de"  # from LANG
    assert i18n.choose(None, {**env, "LC_ALL": "nl_BE.UTF-8"}) == "nl"  # LC_ALL before LANG
    assert i18n.choose(None, {**env, "LANG": "fr_FR.UTF-8"}) == "en"  # a language tafel lacks
    assert i18n.choose(None, {**env, "LANG": "C.UTF-8"}) == "en"
    assert i18n.choose("nl", env) == "nl"  # --lang wins, and is remembered ...
    assert i18n.choose(None, env) == "nl"  # ... over LANG in later runs
    assert i18n.choose("xx", env) == "en"  # an unknown --lang: English, remembered as such
    assert i18n.choose(None, env) == "en"


def test_the_rules_link_is_the_page_in_the_players_language() -> None:
    repo = Path(__file__).resolve().parents[2]
    for page in sorted((repo / "docs" / "rules").glob("*.md")):
        if page.name.endswith((".nl.md", ".de.md")):
            continue
        url = f"docs/rules/{page.name}"
        assert rules_in_language(url, "en") == url
        for lang in ("nl", "de"):
            assert (repo / rules_in_language(url, lang)).is_file(), (page.name, lang)
