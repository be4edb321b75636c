// The TypeScript SDK's client for tafel-conformance (docs/clients.md, "The conformance kit"),
// a port of clients/python/tafel/conformance/reference_client.py:
//
//   node dist/conformance/client.js --server HOST:PORT --token TOKEN --game GAME --room CODE [--resign]
//   node dist/conformance/client.js --server HOST:PORT --token TOKEN --game GAME --watch GAME_ID
//
// --room: join, play the seat the room gives to the end with legal moves, exit 0 (--resign: resign
// at the first turn). --watch: print every event as a JSON line {"event_id": ...} from the first to
// GameEnded, resuming after a cut connection with nothing lost or twice, exit 0. What makes it
// pass is the SDK: one request id per move for every attempt, refusals answered by reading the game
// again, waiting on the watch stream (not polling), watches resuming from the last id printed.

import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { IllegalMove, play, TafelClient, Unavailable, VersionConflict } from "../src/index.js";
import { createNativeTransport } from "../src/node.js";
import { strategyFor } from "./strategies.js";

async function waitForChange(client: TafelClient, gameId: string, seat: number, after: string): Promise<void> {
  for await (const response of client.watchGame(gameId, { afterEventId: after })) {
    const status = response.status;
    if (status === undefined) return; // a server that leaves status off: read the game instead
    if (response.event?.kind.case === "ended" || status.over || status.toAct.includes(seat)) return;
  }
}

async function playRoom(client: TafelClient, game: string, code: string, resign: boolean): Promise<number> {
  const choose = strategyFor(game);
  await client.joinRoom(code);
  const room = await client.waitRoomStarted(code);
  let current = await client.waitForGame(room.gameId);
  const seat = current.seat;
  if (seat === undefined) throw new Error("the room's game has no seat for this player");
  for (;;) {
    const status = current.summary?.status;
    if (status === undefined || current.view === undefined) throw new Error("GetGame answered without a status or view");
    if (status.over) return 0;
    if (status.toAct.includes(seat)) {
      if (resign) {
        await client.resign(room.gameId);
        return 0;
      }
      try {
        await client.submitMove(room.gameId, choose(current.view, status.version), { expectedVersion: status.version });
      } catch (error) {
        // The game moved on under us (a round resolved, a clock ran out): read it again.
        if (!(error instanceof VersionConflict || error instanceof IllegalMove)) throw error;
      }
    } else {
      await waitForChange(client, room.gameId, seat, current.lastEventId);
    }
    current = await client.getGame(room.gameId);
  }
}

async function watch(client: TafelClient, gameId: string): Promise<number> {
  for await (const event of client.watch(gameId)) {
    process.stdout.write(`${JSON.stringify({ event_id: event.eventId })}\n`);
    if (event.kind.case === "ended") return 0;
  }
  return 1;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      server: { type: "string" },
      token: { type: "string" },
      game: { type: "string" },
      room: { type: "string" },
      watch: { type: "string" },
      resign: { type: "boolean", default: false },
    },
  });
  if (!values.server || !values.token || !values.game || !(values.room || values.watch)) {
    process.stderr.write("usage: client.js --server HOST:PORT --token TOKEN --game GAME (--room CODE [--resign] | --watch GAME_ID)\n");
    return 64;
  }
  const client = new TafelClient(createNativeTransport(values.server));
  client.session = create(play.SessionSchema, { token: values.token });
  try {
    return values.watch ? await watch(client, values.watch) : await playRoom(client, values.game, values.room ?? "", values.resign ?? false);
  } catch (error) {
    if (error instanceof Unavailable) {
      process.stderr.write(`gave up: ${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    client.close();
  }
}

process.exitCode = await main();
