// What every board drawer gets from the game page: who sits where and a way to send a move. A
// board only draws the server's view; legality and results come from the server.
import type { games } from "../sdk.js";

export interface BoardContext {
  /** The viewer's seat; undefined for a spectator. */
  seat: number | undefined;
  names: string[];
  /** Seat colours (CSS colours), by seat. */
  colours: string[];
  /** The game waits on the viewer now. */
  myTurn: boolean;
  submit(move: games.GameMove): void;
  /** The last move event of the game (from the watch), for marking it; undefined before one. */
  lastEvent: games.GameEvent | undefined;
}

export interface Board {
  /** The drawing (and any controls) for this view. */
  element: Element;
  /** Keyboard focus goes here when the page draws a new view. */
  focus?: () => void;
}
