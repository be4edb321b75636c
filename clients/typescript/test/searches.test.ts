// Correspondence searches on every transport: a search left early (its stream aborted) stays
// queued, listMySearches shows it, cancelSearch withdraws it (idempotent); left again, it is
// paired by another player's search, and a cancel then comes too late and names the game.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test, type TestContext } from "node:test";
import { TafelClient } from "../src/index.js";
import { transportKinds, within, type TransportKind } from "./platform.js";

async function players(t: TestContext, kind: TransportKind, count: number): Promise<TafelClient[]> {
  const clients = Array.from({ length: count }, () => new TafelClient(kind.make()));
  t.after(() => clients.forEach((c) => c.close()));
  await Promise.all(clients.map((c) => c.register(`se${randomBytes(5).toString("hex")}`, "correct horse battery")));
  return clients;
}

/** A 3-day search left after its first MatchQueued (the page closed): its ticket id. */
async function queuedAndLeft(client: TafelClient): Promise<string> {
  for await (const update of client.findMatchUpdates("connect4", { daysPerMove: 3 })) {
    assert.equal(update.status.case, "queued");
    return update.status.case === "queued" ? update.status.value.ticketId : "";
  }
  throw new Error("no MatchQueued");
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

for (const kind of transportKinds()) {
  describe(`correspondence searches over ${kind.name}`, () => {
    test("a search left early is listed, cancelled once, and a paired one names its game", async (t) => {
      const [a, b] = (await players(t, kind, 2)) as [TafelClient, TafelClient];
      const ticket = await queuedAndLeft(a);
      await settle();
      const waiting = await a.listMySearches();
      assert.deepEqual(
        waiting.map((s) => [s.game, s.ticketId, s.timeControl?.daysPerMove]),
        [["connect4", ticket, 3]],
      );
      assert.deepEqual(await a.cancelSearch("connect4"), { cancelled: true, gameId: "" });
      assert.deepEqual(await a.listMySearches(), []);
      assert.deepEqual(await a.cancelSearch("connect4"), { cancelled: false, gameId: "" });

      await queuedAndLeft(a);
      await settle();
      const found = await within(b.findMatch("connect4", { daysPerMove: 3 }), 15_000, "the pairing");
      assert.deepEqual(await a.cancelSearch("connect4"), { cancelled: false, gameId: found.gameId });
    });
  });
}
