// The app's languages: English, Dutch and German, with i18next. The catalogues are JSON files a
// translator edits (clients/web/locales/<lang>/<namespace>.json), bundled into the app by esbuild, so
// i18next starts synchronously when this module is first imported: the first page is drawn in the
// player's language, with no flash of English.
//   t("common:lobby.title"), t("game:moves", { count: 3 })   (plurals: key_one / key_other)
// The language: the one chosen with the switcher (localStorage), else the first of the browser's
// languages that we have, else English. Dates, times and numbers go through Intl in that language.
import i18next from "i18next";
import deBoard from "../locales/de/board.json";
import deCommon from "../locales/de/common.json";
import deGame from "../locales/de/game.json";
import deReasons from "../locales/de/reasons.json";
import enBoard from "../locales/en/board.json";
import enCommon from "../locales/en/common.json";
import enGame from "../locales/en/game.json";
import enReasons from "../locales/en/reasons.json";
import nlBoard from "../locales/nl/board.json";
import nlCommon from "../locales/nl/common.json";
import nlGame from "../locales/nl/game.json";
import nlReasons from "../locales/nl/reasons.json";

export type Lang = "en" | "nl" | "de";
export const LANGS: readonly Lang[] = ["en", "nl", "de"];
/** Each language's name in itself, for the switcher's titles. */
export const LANG_NAMES: Record<Lang, string> = { en: "English", nl: "Nederlands", de: "Deutsch" };

const STORE = "tafel.lang";

function isLang(value: string | null | undefined): value is Lang {
  return value !== null && value !== undefined && (LANGS as readonly string[]).includes(value);
}

function remembered(): string | null {
  try {
    return localStorage.getItem(STORE);
  } catch {
    return null; // storage refused (privacy settings): the browser's languages decide
  }
}

function detect(): Lang {
  const stored = remembered();
  if (isLang(stored)) return stored;
  const asked = navigator.languages?.length ? navigator.languages : [navigator.language];
  for (const tag of asked) {
    const primary = (tag ?? "").toLowerCase().split("-")[0];
    if (isLang(primary)) return primary;
  }
  return "en";
}

const current: Lang = detect();

void i18next.init({
  lng: current,
  fallbackLng: "en",
  supportedLngs: [...LANGS],
  ns: ["common", "reasons", "game", "board"],
  defaultNS: "common",
  resources: {
    en: { common: enCommon, reasons: enReasons, game: enGame, board: enBoard },
    nl: { common: nlCommon, reasons: nlReasons, game: nlGame, board: nlBoard },
    de: { common: deCommon, reasons: deReasons, game: deGame, board: deBoard },
  },
  initAsync: false, // resources are bundled: t() works as soon as this module has run
  interpolation: { escapeValue: false }, // the DOM builders set text, never HTML
  returnNull: false,
});
document.documentElement.lang = current;

/** A sentence from a catalogue: t("common:lobby.title"), t("game:moves", { count }). */
export function t(key: string, options?: Record<string, unknown>): string {
  return i18next.t(key, options as never) as unknown as string;
}

/** Whether a catalogue has this key (in the language or English): for optional wordings. */
export function has(key: string): boolean {
  return i18next.exists(key);
}

/** The language the app speaks now. */
export function lang(): Lang {
  return current;
}

/** Switch language: remembered in this browser, then the page reloads in it. */
export function setLang(l: Lang): void {
  try {
    localStorage.setItem(STORE, l);
  } catch {
    // storage refused: the reload below still asks the browser's languages
  }
  location.reload();
}

/** 1234.5 → "1,234.5" / "1.234,5". */
export function formatNumber(n: number | bigint, options?: Intl.NumberFormatOptions): string {
  return new Intl.NumberFormat(current, options).format(n);
}

type When = Date | number;
const asDate = (when: When): Date => (typeof when === "number" ? new Date(when) : when);

/** The day: "12 Jun 2026" / "12 jun 2026" / "12.06.2026" (style as asked). */
export function formatDate(when: When, options: Intl.DateTimeFormatOptions = { dateStyle: "medium" }): string {
  return new Intl.DateTimeFormat(current, options).format(asDate(when));
}

/** The time of day: "7:02 AM" / "07:02". */
export function formatTime(when: When, options: Intl.DateTimeFormatOptions = { timeStyle: "short" }): string {
  return new Intl.DateTimeFormat(current, options).format(asDate(when));
}

/** Day and time: "12 Jun 2026, 07:02". */
export function formatDateTime(when: When, options: Intl.DateTimeFormatOptions = { dateStyle: "medium", timeStyle: "short" }): string {
  return new Intl.DateTimeFormat(current, options).format(asDate(when));
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 86_400_000],
  ["month", 30 * 86_400_000],
  ["week", 7 * 86_400_000],
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", 60_000],
  ["second", 1000],
];

/** A moment from now in words: "3 minutes ago", "in 2 hours", "vor 3 Minuten", "over 2 uur". */
export function formatRelative(when: When, now: number = Date.now()): string {
  const diff = asDate(when).getTime() - now;
  const format = new Intl.RelativeTimeFormat(current, { numeric: "auto" });
  for (const [unit, ms] of UNITS) {
    if (Math.abs(diff) >= ms || unit === "second") return format.format(Math.round(diff / ms), unit);
  }
  return format.format(0, "second");
}

/** A span of time in its largest units: "2 days 3 hours", "2 Tage, 3 Stunden", "5 minuten". `parts`
 * limits how many units are said (largest first); under a minute it says seconds. */
export function formatDuration(ms: number, parts = 2): string {
  const units: [Intl.NumberFormatOptions["unit"], number][] = [
    ["day", 86_400_000],
    ["hour", 3_600_000],
    ["minute", 60_000],
    ["second", 1000],
  ];
  let left = Math.max(0, Math.round(ms / 1000) * 1000);
  const said: string[] = [];
  let first = -1; // the largest unit said; only `parts` units from it on count
  units.forEach(([unit, size], i) => {
    const n = Math.floor(left / size);
    left -= n * size;
    if (n > 0 && first < 0) first = i;
    if (n > 0 && i - first < parts) said.push(formatNumber(n, { style: "unit", unit, unitDisplay: "long" }));
  });
  if (said.length === 0) said.push(formatNumber(0, { style: "unit", unit: "second", unitDisplay: "long" }));
  return formatList(said, "unit");
}

/** "a, b and c" / "a, b en c" / "a, b und c"; type "disjunction" for "or". */
export function formatList(items: string[], type: "conjunction" | "disjunction" | "unit" = "conjunction"): string {
  return new Intl.ListFormat(current, { style: "long", type }).format(items);
}

/** The EN / NL / DE switcher for the header; the current language is pressed. */
export function langSwitcher(): HTMLElement {
  const nav = document.createElement("nav");
  nav.className = "lang-switch";
  nav.setAttribute("aria-label", t("common:lang.switch"));
  for (const l of LANGS) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = `lang lang-${l}`;
    button.lang = l;
    button.textContent = l.toUpperCase();
    button.title = LANG_NAMES[l];
    // The name holds the visible "NL" too (axe's label-content-name-mismatch: speech control users
    // say what they see).
    button.setAttribute("aria-label", `${l.toUpperCase()} – ${LANG_NAMES[l]}`);
    button.setAttribute("aria-pressed", String(l === current));
    button.addEventListener("click", () => {
      if (l !== current) setLang(l);
    });
    nav.append(button);
  }
  return nav;
}
