"""The languages of the words the SDK and the terminal client show a person: English, Dutch and
German, with gettext (the standard library) for messages and plurals and Babel for numbers, dates
and times in the player's locale.

The message catalogues are the translators' own files, tafel/locale/{nl,de}/LC_MESSAGES/tafel.po
(the template: tafel/locale/tafel.pot), and they are read as they are, at run time: Babel parses
the .po and compiles it in memory. The source tree has no build step (the venv reaches it through a
.pth path entry) and a wheel carries the .po as package data, so both run the same files, and no
compiled .mo can go stale beside an edited .po. Parsing costs a few tens of milliseconds once per
run, for the language in use only (English needs no catalogue: the msgids are English).

The language: `--lang` (remembered in the terminal's config file), else the one remembered, else
LANGUAGE / LC_ALL / LC_MESSAGES / LANG as gettext reads them; a language tafel does not speak
(or C/POSIX) is English."""

from __future__ import annotations

import gettext
import io
import json
import os
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from functools import cache
from pathlib import Path

DOMAIN = "tafel"
LANGUAGES = ("en", "nl", "de")
DEFAULT = "en"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
# The Babel locale of each language: English keeps the ISO-like dates it always showed.
_LOCALES = {"en": "en", "nl": "nl_NL", "de": "de_DE"}

_translations: gettext.NullTranslations = gettext.NullTranslations()
_language = DEFAULT


def _(message: str) -> str:
    """`message` (English, the msgid) in the language in use."""
    return _translations.gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The form for `count` (Dutch and German: one and other, as English; the .po says so)."""
    return _translations.ngettext(singular, plural, count)


def N_(message: str) -> str:
    """Marks a message for the catalogue where it is defined (a table made at import, before the
    language is known); `_()` translates it where it is shown."""
    return message


def language() -> str:
    return _language


def normalise(tag: str | None) -> str | None:
    """ "de_DE.UTF-8", "nl-BE", "NL" -> "de", "nl", "nl"; a language tafel lacks -> "en"; nothing
    (unset, C, POSIX) -> None, so the next source is asked."""
    if not tag:
        return None
    code = tag.split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    if not code or code in ("c", "posix"):
        return None
    return code if code in LANGUAGES else DEFAULT


def from_environment(environ: Mapping[str, str] | None = None) -> str | None:
    """The language the environment asks for, in gettext's order (LANGUAGE may list several,
    colon-separated: the first tafel speaks wins); None when it says nothing."""
    env = os.environ if environ is None else environ
    listed = [tag for tag in env.get("LANGUAGE", "").split(":") if tag]
    for tag in listed:
        code = normalise(tag)
        if code in LANGUAGES and code != DEFAULT:
            return code
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        code = normalise(env.get(name))
        if code is not None:
            return code
    return normalise(listed[0]) if listed else None


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    """The terminal's own settings: $TAFEL_CONFIG, else $XDG_CONFIG_HOME/tafel/config.json, else
    ~/.config/tafel/config.json (the terminal keeps no session on disk: it signs in each run)."""
    env = os.environ if environ is None else environ
    if env.get("TAFEL_CONFIG"):
        return Path(env["TAFEL_CONFIG"])
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "tafel" / "config.json"


def _read_config(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remembered(environ: Mapping[str, str] | None = None) -> str | None:
    lang = _read_config(config_path(environ)).get("lang")
    return lang if isinstance(lang, str) and lang in LANGUAGES else None


def remember(lang: str, environ: Mapping[str, str] | None = None) -> None:
    """Keeps `lang` for the next runs; a config that cannot be written only loses the memory."""
    path = config_path(environ)
    data = _read_config(path)
    data["lang"] = lang
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    except OSError:
        pass


def choose(asked: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The language of this run: `asked` (--lang; remembered), else the remembered one, else the
    environment's, else English."""
    if asked:
        lang = normalise(asked) or DEFAULT
        remember(lang, environ)
        return lang
    return remembered(environ) or from_environment(environ) or DEFAULT


def catalogue_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def translations(lang: str) -> gettext.NullTranslations:
    """The language's catalogue, read from its .po and compiled in memory (English: none)."""
    if lang == DEFAULT or lang not in LANGUAGES:
        return gettext.NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    try:
        with catalogue_path(lang).open("rb") as po:
            catalog = read_po(po, locale=lang, domain=DOMAIN)
    except FileNotFoundError:  # a language listed before its catalogue exists: English
        return gettext.NullTranslations()
    compiled = io.BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def use(lang: str) -> str:
    """Shows every later message in `lang` (English for one tafel does not speak)."""
    global _translations, _language
    _language = lang if lang in LANGUAGES else DEFAULT
    _translations = translations(_language)
    return _language


def use_from(asked: str | None, environ: Mapping[str, str] | None = None) -> str:
    return use(choose(asked, environ))


# -- numbers, dates and times (Babel) -------------------------------------------------------------


def _locale() -> str:
    return _LOCALES[_language]


def number(value: float | int | Decimal) -> str:
    """ "1,234.5" / "1.234,5" / "1.234,5" (en / nl / de)."""
    from babel.numbers import format_decimal

    return format_decimal(value, locale=_locale())


def date_time(moment: datetime, *, zone: bool = False) -> str:
    """An aware `moment` in this machine's time zone, as the locale writes a date and a time:
    "2025-05-01 14:02" (English, as tafel always wrote it), "1 mei 2025 14:02", "01.05.2025, 14:02";
    `zone` adds the zone's abbreviation ("... CEST") for a line that stands alone."""
    from babel.dates import format_datetime

    local = moment.astimezone()
    if _language == DEFAULT:
        text = format_datetime(local, "yyyy-MM-dd HH:mm", locale="en")
    else:
        from babel import Locale
        from babel.dates import format_date, format_time

        locale = Locale.parse(_locale())
        pattern = str(locale.datetime_formats["medium"])
        day = format_date(local, "medium", locale=locale)
        text = pattern.replace("{1}", day).replace("{0}", format_time(local, "HH:mm", locale=locale))
    return f"{text} {local.strftime('%Z')}".rstrip() if zone else text


def clock_time(moment: datetime) -> str:
    """ "14:02" in this machine's time zone (a chat line's time): the same in the three languages."""
    from babel.dates import format_time

    return format_time(moment.astimezone(), "HH:mm", locale=_locale())
