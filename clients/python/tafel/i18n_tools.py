"""The translators' and maintainers' commands for the terminal's message catalogues (Babel):

    python -m tafel.i18n_tools extract      # the template tafel/locale/tafel.pot from the code
    python -m tafel.i18n_tools update       # extract, then merge it into every language's .po
    python -m tafel.i18n_tools check        # what a language lacks (untranslated, fuzzy, missing)
    python -m tafel.i18n_tools init fr      # start a new language's .po from the template

The sources are the SDK's person-facing modules and the terminal client (not the staff's
terminal, tafel/cli/moderation.py, which speaks English); the keywords are Babel's own
(_, gettext, ngettext, N_ ...). tests/clients/test_i18n_catalogue.py runs `check` and compares
the committed template with a fresh extraction."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_file
from babel.messages.pofile import read_po, write_po

from tafel.i18n import DEFAULT, DOMAIN, LANGUAGES, LOCALE_DIR, catalogue_path

PACKAGE = Path(__file__).resolve().parent
TEMPLATE = LOCALE_DIR / f"{DOMAIN}.pot"
# The modules whose words a player reads (the staff's terminal is English only).
EXCLUDED = {"cli/moderation.py"}
SDK_MODULES = ("i18n.py", "refusals.py", "errors.py", "names.py")


def sources() -> Iterator[Path]:
    for name in SDK_MODULES:
        yield PACKAGE / name
    for path in sorted([*(PACKAGE / "cli").glob("*.py"), *(PACKAGE / "by_game").glob("*.py")]):
        if str(path.relative_to(PACKAGE)) not in EXCLUDED:
            yield path


def extract() -> Catalog:
    """Every message the code marks, with where it is (relative to the package)."""
    catalog = Catalog(project="tafel", domain=DOMAIN, charset="utf-8", fuzzy=False)
    for path in sources():
        for lineno, message, comments, context in extract_from_file(
            "python", str(path), keywords=DEFAULT_KEYWORDS, comment_tags=("Translators:",)
        ):
            where = str(path.relative_to(PACKAGE))
            catalog.add(message, None, [(where, lineno)], auto_comments=comments, context=context)
    return catalog


def msgids(catalog: Catalog) -> set[str | tuple[str, ...]]:
    return {message.id if isinstance(message.id, str) else tuple(message.id) for message in catalog if message.id}


def read(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, locale=locale, domain=DOMAIN)


def write(path: Path, catalog: Catalog) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as file:
        write_po(file, catalog, width=100, sort_output=False, omit_header=False)


def update() -> None:
    template = extract()
    write(TEMPLATE, template)
    for lang in LANGUAGES:
        if lang == DEFAULT:
            continue
        path = catalogue_path(lang)
        catalog = read(path, lang)
        catalog.update(template, update_header_comment=False)
        write(path, catalog)


def missing(lang: str) -> list[str]:
    """The template's messages `lang` does not translate (absent, empty or fuzzy)."""
    catalog = read(catalogue_path(lang), lang)
    out = []
    for message in read(TEMPLATE):
        if not message.id:
            continue
        found = catalog.get(message.id)
        strings = found.string if found is not None else None
        texts = list(strings) if isinstance(strings, (list, tuple)) else [strings]
        if found is None or found.fuzzy or not all(texts):
            out.append(message.id if isinstance(message.id, str) else message.id[0])
    return out


def init(lang: str) -> None:
    template = read(TEMPLATE)
    catalog = Catalog(locale=lang, domain=DOMAIN, project="tafel", charset="utf-8")
    for message in template:
        if message.id:
            catalog.add(message.id, None, message.locations, auto_comments=message.auto_comments)
    write(catalogue_path(lang), catalog)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    command = args[0] if args else "check"
    if command == "extract":
        write(TEMPLATE, extract())
    elif command == "update":
        update()
    elif command == "init" and len(args) == 2:
        init(args[1])
    elif command == "check":
        lacking = {lang: missing(lang) for lang in LANGUAGES if lang != DEFAULT}
        for lang, ids in lacking.items():
            for msgid in ids:
                print(f"{lang}: {msgid}")
        return 1 if any(lacking.values()) else 0
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
