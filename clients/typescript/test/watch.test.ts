// A watch survives a dropped connection: the SDK resumes from the last event it handed out, so
// the caller sees every event once, in order, including those made while it was cut off.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { moves, TafelClient } from "../src/index.js";
import { guests, Relay, transportKinds } from "./platform.js";

for (const kind of transportKinds()) {
  describe(`watching over ${kind.name}`, () => {
    test("a watch resumes after a dropped connection with no gap and no duplicate", async (t) => {
      const [a, b] = (await guests(t, kind, 2)) as [TafelClient, TafelClient];
      const matches = await Promise.all([a.findMatch("connect4"), b.findMatch("connect4")]);
      const gameId = matches[0]!.gameId;
      const bySeat = matches[0]!.seat === 0 ? [a, b] : [b, a];
      const play = async (columns: number[], from: number): Promise<void> => {
        for (const [i, column] of columns.entries()) {
          const version = from + i;
          await bySeat[version % 2]!.submitMove(gameId, moves.connect4(column), { expectedVersion: BigInt(version) });
        }
      };
      await play([3, 3, 2, 2], 0);

      const relay = await Relay.start(kind.address);
      t.after(() => relay.close());
      const spectator = new TafelClient(kind.make(relay.address));
      t.after(() => spectator.close());
      await spectator.signInAsGuest();
      const seen: string[] = [];
      for await (const event of spectator.watch(gameId)) {
        seen.push(event.eventId);
        if (event.eventId === "2-1") {
          relay.cut(); // the connection drops mid-stream ...
          await play([1, 1, 0], 4); // ... and the game goes on (seat 0 wins along the bottom row)
        }
      }
      assert.equal(relay.cuts, 1);
      assert.ok(relay.connections >= 2, `the watch reconnected (${relay.connections} connections)`);
      assert.deepEqual(seen, ["0-1", "1-1", "2-1", "3-1", "4-1", "5-1", "6-1", "7-1", "7-2"]);
    });

    test("a search resent after a dropped connection gets its match", async (t) => {
      const relay = await Relay.start(kind.address);
      t.after(() => relay.close());
      const seeker = new TafelClient(kind.make(relay.address));
      t.after(() => seeker.close());
      await seeker.signInAsGuest();
      const [rival] = (await guests(t, kind, 1)) as [TafelClient];
      const tickets: string[] = [];
      let matched: { gameId: string; ticketId: string } | undefined;
      let rivalMatch: Promise<{ gameId: string }> | undefined;
      for await (const update of seeker.findMatchUpdates("plus4")) {
        if (update.status.case === "queued") {
          tickets.push(update.status.value.ticketId);
          if (tickets.length === 1) {
            relay.cut(); // the search's connection drops while it waits in the queue ...
            rivalMatch = rival.findMatch("plus4"); // ... and an opponent turns up meanwhile
          }
        } else if (update.status.case === "matched") {
          matched = update.status.value;
        }
      }
      assert.ok(matched && rivalMatch);
      assert.equal((await rivalMatch).gameId, matched.gameId);
      assert.ok(relay.connections >= 2, `the search reconnected (${relay.connections} connections)`);
    });
  });
}
