// A game's options in a player's words: the catalogue (ListGameTypes) names each option
// and its choices as the server spells them ("mode", "MODE_FIRST_LINE") with a description written
// for developers; the page shows the words of game:options.GAME.OPTION in the player's language
// (label, help, values). An option or choice the app does not know yet shows the server's name
// made readable ("max_rounds" → "Max rounds"), never the developer's description.
import { formatNumber, has, t } from "../i18n.js";

/** "max_rounds" / "maxRounds" → "max_rounds" (the catalogue's spelling; JSON options are camelCase). */
function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** "MODE_FIRST_LINE" → "first line"; "max_rounds" → "max rounds"; "A" stays "A" (a sheet's side). */
export function humanise(name: string): string {
  const enumName = name.includes("_") && name === name.toUpperCase();
  return enumName ? name.replace(/^[A-Z]+_/, "").toLowerCase().replaceAll("_", " ") : snake(name).replaceAll("_", " ");
}

function capitalised(text: string): string {
  return text === "" ? text : `${text[0]!.toUpperCase()}${text.slice(1)}`;
}

const key = (game: string, option: string, part: string): string => `game:options.${game}.${snake(option)}.${part}`;

/** The option's label ("Round limit"). */
export function optionLabel(game: string, option: string): string {
  const k = key(game, option, "label");
  return has(k) ? t(k) : capitalised(humanise(option));
}

/** A sentence saying what the option does, or "" for an option the app does not know. */
export function optionHelp(game: string, option: string): string {
  const k = key(game, option, "help");
  return has(k) ? t(k) : "";
}

/** A choice of a choice option ("first line wins"). */
export function choiceLabel(game: string, option: string, value: string): string {
  const k = key(game, option, `values.${value}`);
  return has(k) ? t(k) : humanise(value);
}

/** "(solo only)", "(up to 4 players only)", or "" for an option every table has. */
export function optionSeats(maxSeats: number): string {
  if (maxSeats <= 0) return "";
  return maxSeats === 1 ? t("game:options.solo") : t("game:options.upTo", { count: maxSeats });
}

/** "Game: first line wins, Target: 3" from options as JSON ({ mode: "MODE_FIRST_LINE", target: 3 }). */
export function optionsSummary(game: string, values: Record<string, unknown>): string {
  return Object.entries(values)
    .map(([name, value]) => t("game:options.pair", { label: optionLabel(game, name), value: typeof value === "string" ? choiceLabel(game, name, value) : typeof value === "number" ? formatNumber(value) : String(value) }))
    .join(", ");
}
