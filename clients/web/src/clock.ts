// The time a move may take, chosen in the lobby and remembered per game (localStorage): the usual
// choices, and a gentler first choice for games with long turns (games/*.ts defaultClockS). A day
// or more a move is correspondence (TimeControl.daysPerMove): its clock reads in days and hours.
import { h } from "./dom.js";
import { gameUi } from "./games/index.js";
import { formatDuration, t } from "./i18n.js";
import { DAYS_PER_MOVE } from "./sdk.js";

const DAY_S = 86_400;

/** Seconds a move; from a day on, the correspondence controls the platform offers. */
export const CLOCKS = [15, 30, 60, 300, ...DAYS_PER_MOVE.map((d) => d * DAY_S)];

export function clockLabel(seconds: number): string {
  // "1 Tag pro Zug (Fernpartie)", "5 minuten per zet": the span in the player's units and words.
  if (seconds >= DAY_S) return t("clock.correspondence", { time: formatDuration(seconds * 1000) });
  return t("clock.perMove", { time: formatDuration(seconds * 1000) });
}

/** A chosen clock as the SDK's options: whole days a move are correspondence. */
export function timeControlOf(seconds: number): { perMoveS?: number; daysPerMove?: number } {
  return seconds >= DAY_S && seconds % DAY_S === 0 ? { daysPerMove: seconds / DAY_S } : { perMoveS: seconds };
}

/** A chosen clock as a TimeControl to put in a request (the tournament form). */
export function timeControlInit(seconds: number): { perMove?: { seconds: bigint; nanos: number }; daysPerMove?: number } {
  const { perMoveS, daysPerMove } = timeControlOf(seconds);
  return daysPerMove !== undefined ? { daysPerMove } : { perMove: { seconds: BigInt(Math.round(perMoveS ?? 60)), nanos: 0 } };
}

/** A game's time control in seconds a move (days a move counted in seconds). */
export function controlSeconds(control: { perMove?: { seconds: bigint; nanos: number }; daysPerMove: number } | undefined): number {
  if (control === undefined) return 0;
  if (control.daysPerMove > 0) return control.daysPerMove * DAY_S;
  return control.perMove ? Number(control.perMove.seconds) + control.perMove.nanos / 1e9 : 0;
}

/** A clock face: "0:42", "12:05"; from an hour on "5 h 12 min", from a day on "2 d 5 h" (the
 * units in the player's language). */
export function clockText(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  if (total >= DAY_S) return t("clock.daysHours", { days: Math.floor(total / DAY_S), hours: Math.floor((total % DAY_S) / 3600) });
  if (total >= 3600) return t("clock.hoursMinutes", { hours: Math.floor(total / 3600), minutes: Math.floor((total % 3600) / 60) });
  return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, "0")}`;
}

/** The same time in words for screen readers ("2 days, 5 hours"). */
export function clockWords(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  return formatDuration(total >= 3600 ? Math.floor(total / 60) * 60_000 : total * 1000);
}

const key = (game: string): string => `tafel.clock.${game}`;

export function chosenClock(game: string): number {
  const stored = Number(localStorage.getItem(key(game)));
  return CLOCKS.includes(stored) ? stored : (gameUi(game)?.defaultClockS ?? 60);
}

/** The clock options: the live ones, then the correspondence ones in a group of their own. */
export function clockOptions(chosen: number): HTMLElement[] {
  const option = (s: number): HTMLOptionElement => h("option", { value: s, selected: s === chosen }, clockLabel(s));
  return [...CLOCKS.filter((s) => s < DAY_S).map(option), h("optgroup", { label: t("clock.correspondenceGroup") }, ...CLOCKS.filter((s) => s >= DAY_S).map(option))];
}

/** The clock select for a game card; a change is remembered for the next visit. */
export function clockSelect(game: string): HTMLSelectElement {
  const select = h("select", { name: "clock", class: "clock-choice" }, ...clockOptions(chosenClock(game)));
  select.addEventListener("change", () => localStorage.setItem(key(game), select.value));
  return select;
}
