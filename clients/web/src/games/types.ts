// What the app knows of a game beyond the server's views (one module per game, listed in index.ts):
// presentation only, never rules. The pages ask these modules and never test a game's name, so a
// new game is one module here and a line in index.ts (docs/new-game.md).
import type { Board, BoardContext } from "../boards/board.js";
import { t } from "../i18n.js";
import type { games } from "../sdk.js";

/** `View`: the game's own View (GameView's field for it); `Pick`: what a page keeps between draws
 * of one game (a chosen column, dice picked); `Event`: the game's own Event (GameEvent's field).
 * Methods, not function properties: the registry holds every game's module under one type. */
export interface GameUi<View = unknown, Pick = unknown, Event = unknown> {
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
  /** A fresh `Pick` for a page (nothing chosen yet). */
  newPick(): Pick;
  /** The board for `view`; `redraw` draws the page again (a pick that changes the board). */
  board(view: View, ctx: BoardContext, pick: Pick, redraw: () => void): Board;
  /** A move was accepted: forget what was picked for it. */
  moved?(pick: Pick): void;
  /** One of the game's own events as a sentence for the move list; "" for one that says nothing. */
  sentence(event: Event, who: (seat: number) => string): string;
  /** For an ending a player calls (Outcome.reason `reason`): who called it, from an event. */
  calledEnding?: { reason: string; caller(event: Event): number | undefined };
}


/** A game's endings in words from its catalogue entries (game:games.GAME.endings.REASON). */
export function endingsOf(game: string, reasons: string[]): Record<string, string> {
  return Object.fromEntries(reasons.map((reason) => [reason, t(`game:games.${game}.endings.${reason}`)]));
}
