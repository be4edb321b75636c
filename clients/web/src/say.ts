// Everything the app says about a failure, in a player's words: never a status code, an enum name
// or a seat number. A game's own refusals come from its module (games/); the server's message is
// the last resort, capitalised as a sentence.
import { gameUi } from "./games/index.js";
import { Code, TafelError, type games } from "./sdk.js";

/** "1 seat", "2 seats"; `many` for irregular plurals ("dice"). */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** "a, b and c". */
export function andList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

function sentence(text: string): string {
  const t = text.trim();
  if (t === "") return t;
  return `${t[0]!.toUpperCase()}${t.slice(1)}${/[.!?]$/.test(t) ? "" : "."}`;
}

const OFFLINE: ReadonlySet<Code> = new Set([Code.Unavailable, Code.Unknown, Code.DeadlineExceeded, Code.Internal, Code.Canceled]);

/** Any failure of a call, in words. */
export function explain(error: unknown): string {
  if (error instanceof TafelError) {
    if (error.code === Code.ResourceExhausted) return "Too many requests at once: wait a moment and try again.";
    if (OFFLINE.has(error.code) && (error.reason === "" || error.reason === "UNKNOWN" || /fetch|network/i.test(error.detail))) {
      return "The server is not answering. Check your connection and try again in a moment.";
    }
    return sentence(error.detail);
  }
  if (error instanceof TypeError) return "The server is not answering. Check your connection and try again in a moment.";
  return sentence(error instanceof Error ? error.message : String(error));
}

/** A refused move in words: the game's wording, else the general one, else the server's message. */
export function refusal(game: string, error: TafelError, move: games.GameMove | undefined, waitingFor: string[]): string {
  const own = gameUi(game)?.refusal?.(error.reason, move);
  if (own !== undefined) return own;
  switch (error.reason) {
    case "NOT_YOUR_TURN":
      return waitingFor.length > 0 ? `It is not your turn yet: waiting for ${andList(waitingFor)}.` : "It is not your turn yet.";
    case "VERSION_MISMATCH":
      return "The game moved on before your move arrived: here is the board as it is now.";
    case "GAME_OVER":
      return "The game is over: no more moves.";
    default:
      return explain(error);
  }
}

/** How a game ended, for "How it ended: …". */
export function ending(game: string, reason: string): string {
  const own = gameUi(game)?.endings?.[reason];
  if (own !== undefined) return own;
  const general: Record<string, string> = {
    RESIGNED: "a player resigned",
    TIMEOUT: "a player ran out of time",
    DRAW_AGREED: "the players agreed on a draw",
    ABORTED: "aborted before every player had moved, so it counts for nobody",
  };
  return general[reason] ?? reason.toLowerCase().replaceAll("_", " ");
}

/** How a game ended, told from its events where the reason alone misleads (issue 43.8): players who
 * resigned or ran out of time and left the others to play on are named first, and Colour Square's
 * "colour square" is said only with the player who called it. */
export function endingStory(game: string, reason: string, events: games.GameEvent[], names: string[]): string {
  const who = (seat: number): string => names[seat] ?? `Player ${seat + 1}`;
  const left: string[] = [];
  let caller: number | undefined;
  for (const e of events) {
    if (e.kind.case === "resigned") left.push(`${who(e.kind.value.seat)} resigned`);
    else if (e.kind.case === "timedOut" && e.kind.value.removed) left.push(`${who(e.kind.value.seat)} ran out of time`);
    else if (e.kind.case === "coloursquare" && e.kind.value.kind.case === "colourSquareCalled") caller = e.kind.value.kind.value.seat;
  }
  const called = reason === "COLOUR_SQUARE" ? (caller !== undefined ? `${who(caller)} called colour square` : "the game was played out") : ending(game, reason);
  if (reason === "RESIGNED" || reason === "TIMEOUT") return left.length > 0 ? andList(left) : ending(game, reason);
  if (left.length === 0) return called;
  return `${andList(left)}, then ${called}`;
}
