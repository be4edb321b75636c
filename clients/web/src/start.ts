// Starting a game the way the lobby offers it (a bot, a match, solo), kept as a plan so the result
// screen can offer "Play again" with the same game, options, table size and clock.
import { fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { timeControlOf } from "./clock.js";
import { games, type TafelClient } from "./sdk.js";

export interface Plan {
  game: string;
  how: "bot" | "match" | "solo";
  level?: number;
  options: JsonValue;
  seats: number;
  /** Seconds a move; whole days a move are a correspondence game (clock.ts timeControlOf). */
  perMoveS: number;
}

const KEY = "tafel.last-plan";

export function optionsJson(options: games.GameOptions): JsonValue {
  return toJson(games.GameOptionsSchema, options);
}

/** Start what `plan` says; resolves with the game's id once it exists. A match waits for an
 * opponent until `signal` aborts. */
export async function startGame(client: TafelClient, plan: Plan, signal: AbortSignal): Promise<string> {
  const options = fromJson(games.GameOptionsSchema, plan.options);
  let gameId = "";
  if (plan.how === "match") {
    for await (const update of client.findMatchUpdates(plan.game, { options, minSeats: plan.seats, maxSeats: plan.seats, ...timeControlOf(plan.perMoveS), signal })) {
      if (update.status.case === "matched") gameId = update.status.value.gameId;
    }
  } else {
    const created = await client.createRoom(plan.game, { options, seats: plan.how === "solo" ? 1 : plan.seats, ...timeControlOf(plan.perMoveS) });
    // A bot a free seat (Colour Square: up to five), each a request of its own the pools serve.
    if (plan.how === "bot") for (let seat = 1; seat < plan.seats; seat++) await client.requestBot(created.code, plan.level ?? 1);
    gameId = created.gameId || (await client.waitRoomStarted(created.code, signal)).gameId;
  }
  localStorage.setItem(KEY, JSON.stringify({ gameId, plan }));
  return gameId;
}

/** The plan that started `gameId` in this browser, if it was started here. */
export function planOf(gameId: string): Plan | undefined {
  try {
    const stored = JSON.parse(localStorage.getItem(KEY) ?? "null") as { gameId: string; plan: Plan } | null;
    return stored?.gameId === gameId ? stored.plan : undefined;
  } catch {
    return undefined;
  }
}
