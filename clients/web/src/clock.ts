// The time a move may take, chosen in the lobby and remembered per game (localStorage): the usual
// choices, and a gentler first choice for games with long turns (games/*.ts defaultClockS).
import { h } from "./dom.js";
import { gameUi } from "./games/index.js";
import { formatDuration, t } from "./i18n.js";

/** Seconds a move; a day a move is the correspondence pace. */
export const CLOCKS = [15, 30, 60, 300, 86_400];

export function clockLabel(seconds: number): string {
  // "1 Tag pro Zug (Fernpartie)", "5 minuten per zet": the span in the player's units and words.
  if (seconds >= 86_400) return t("clock.correspondence", { time: formatDuration(seconds * 1000) });
  return t("clock.perMove", { time: formatDuration(seconds * 1000) });
}

const key = (game: string): string => `tafel.clock.${game}`;

export function chosenClock(game: string): number {
  const stored = Number(localStorage.getItem(key(game)));
  return CLOCKS.includes(stored) ? stored : (gameUi(game)?.defaultClockS ?? 60);
}

/** The clock select for a game card; a change is remembered for the next visit. */
export function clockSelect(game: string): HTMLSelectElement {
  const chosen = chosenClock(game);
  const select = h("select", { name: "clock", class: "clock-choice" }, ...CLOCKS.map((s) => h("option", { value: s, selected: s === chosen }, clockLabel(s))));
  select.addEventListener("change", () => localStorage.setItem(key(game), select.value));
  return select;
}
