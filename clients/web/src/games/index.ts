// The games the app can present, one line each: title, seat colours, first clock, "how to play",
// refusals and endings in words. A game the catalogue has but this list lacks still plays, under
// its id and grey seats.
import { coloursquare } from "./coloursquare.js";
import { connect4 } from "./connect4.js";
import { plus4 } from "./plus4.js";
import type { GameUi } from "./types.js";

export type { GameUi } from "./types.js";

const GAMES: Record<string, GameUi> = { connect4, plus4, coloursquare };

export function gameUi(game: string): GameUi | undefined {
  return GAMES[game];
}

/** The game's title ("Connect Four"), or its id for a game the app does not know yet. */
export function titleOf(game: string): string {
  return GAMES[game]?.title ?? game;
}

export function coloursOf(game: string): string[] {
  return GAMES[game]?.colours ?? [];
}
