"""The web app's language catalogues (clients/web/locales/<lang>/<namespace>.json), read
without a browser: every English sentence has its Dutch and German translation with the same
placeholders, every refusal reason of the contract has a sentence in every language, and every
t("...") key the app's code names exists in English."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.contract.test_reasons import listed

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "clients" / "web"
LOCALES = WEB / "locales"
LANGS = ("en", "nl", "de")
NAMESPACES = ("common", "reasons", "game", "board")
PLACEHOLDER = re.compile(r"\{\{\s*([\w.]+)\s*(?:,[^}]*)?\}\}")
# A literal key in the code: t("ns:key", ...) or t("key") (namespace "common"); keys built at run
# time (template literals) are the code's own business: it checks them with has().
T_CALL = re.compile(r"""\b(?:t|tr)\(\s*["']([^"'$`]+)["']""")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
PLURAL = ("_zero", "_one", "_two", "_few", "_many", "_other")


def flat(node: object, prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    if isinstance(node, dict):
        for key, value in node.items():
            out.update(flat(value, f"{prefix}{key}."))
    else:
        assert isinstance(node, str), f"{prefix[:-1]}: a catalogue's leaves are strings, not {node!r}"
        out[prefix[:-1]] = node
    return out


def catalogue(lang: str, namespace: str) -> dict[str, str]:
    path = LOCALES / lang / f"{namespace}.json"
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing"
    return flat(json.loads(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_english_sentence_is_in_dutch_and_german(namespace: str) -> None:
    english = catalogue("en", namespace)
    problems: list[str] = []
    for lang in LANGS[1:]:
        other = catalogue(lang, namespace)
        for key, sentence in english.items():
            said = other.get(key)
            if said is None or not said.strip():
                problems.append(f"{lang}/{namespace}.json lacks {key!r} ({sentence!r})")
            elif set(PLACEHOLDER.findall(said)) != set(PLACEHOLDER.findall(sentence)):
                problems.append(f"{lang}/{namespace}.json {key!r}: placeholders {said!r} vs English {sentence!r}")
        problems += [f"{lang}/{namespace}.json has {key!r}, which English lacks" for key in other.keys() - english.keys()]
    assert not problems, "\n".join(problems)


def test_every_reason_of_the_contract_has_a_sentence_in_every_language() -> None:
    reasons = set(listed())
    assert len(reasons) > 100  # the parser still reads the contract
    for lang in LANGS:
        said = catalogue(lang, "reasons")
        missing = sorted(r for r in reasons if not said.get(r, "").strip())
        assert not missing, f"{lang}/reasons.json lacks {missing}"


def test_every_key_the_code_names_is_in_the_english_catalogue() -> None:
    english = {namespace: catalogue("en", namespace) for namespace in NAMESPACES}
    missing: list[str] = []
    sources = sorted((WEB / "src").rglob("*.ts"))
    assert sources
    for source in sources:
        for key in T_CALL.findall(COMMENT.sub("", source.read_text(encoding="utf-8"))):
            namespace, _, name = key.rpartition(":")
            keys = english.get(namespace or "common")
            if keys is None:
                missing.append(f"{source.relative_to(WEB)}: t({key!r}) names no namespace of {NAMESPACES}")
            elif name not in keys and not any(f"{name}{form}" in keys for form in PLURAL):
                missing.append(f"{source.relative_to(WEB)}: t({key!r}) is not in en/{namespace or 'common'}.json")
    assert not missing, "\n".join(missing)
