// What the app knows of a game beyond the server's views (one module per game, listed in index.ts):
// presentation only, never rules.
import { t } from "../i18n.js";
import type { games } from "../sdk.js";

export interface GameUi {
  /** In the player's language (a getter: the catalogue is read when asked). */
  title: string;
  /** Seat colours (CSS), by seat, and their names for sentences ("Red"). */
  colours: string[];
  colourNames: string[];
  /** Seconds a move the lobby offers first (games with long turns get more). */
  defaultClockS: number;
  /** The "how to play" article: goal, a turn, scoring, with small drawn examples. */
  howTo(): HTMLElement;
  /** A refused move in the player's words, or undefined to use the general wording. */
  refusal?(reason: string, move: games.GameMove | undefined): string | undefined;
  /** How a game ended (Outcome.reason) in words, where the general wording does not fit. */
  endings?: Record<string, string>;
}


/** A game's endings in words from its catalogue entries (game:games.GAME.endings.REASON). */
export function endingsOf(game: string, reasons: string[]): Record<string, string> {
  return Object.fromEntries(reasons.map((reason) => [reason, t(`game:games.${game}.endings.${reason}`)]));
}
