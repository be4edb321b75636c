// The bidirectional Play stream (native gRPC only: browsers cannot open one): a whole Connect Four
// game with moves and events on one stream per player; a refusal carries its reason; a stream
// whose connection is cut mid-game (a move in flight) reopens by itself and goes on.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IllegalMove, moves, TafelClient, Unavailable } from "../src/index.js";
import { createNativeTransport } from "../src/node.js";
import { eventIdsAfter, guests, playOnStream, Relay, transportKinds } from "./platform.js";
import { connect4Strategy } from "../conformance/strategies.js";

const native = transportKinds().filter((kind) => kind.name === "native gRPC");

for (const kind of native) {
  describe(`play stream over ${kind.name}`, () => {
    test("two players play Connect Four on their Play streams", async (t) => {
      const players = (await guests(t, kind, 2)) as [TafelClient, TafelClient];
      const matches = await Promise.all(players.map((p) => p.findMatch("connect4")));
      const gameId = matches[0]!.gameId;
      const streams = players.map((p) => p.playStream());
      t.after(() => streams.forEach((s) => s.close()));

      const mover = matches[0]!.seat === 0 ? 0 : 1;
      await streams[mover]!.watch(gameId);
      await assert.rejects(streams[mover]!.submitMove(gameId, moves.connect4(9), { expectedVersion: 0n }), (error) => {
        assert.ok(error instanceof IllegalMove, `${error}`);
        assert.equal(error.reason, "COLUMN_OUT_OF_RANGE");
        return true;
      });

      const plays = await Promise.all(players.map((p, i) => playOnStream(p, streams[i]!, gameId, matches[i]!.seat, connect4Strategy)));
      assert.equal(plays[0]?.status.over, true);
      assert.equal(plays[0]?.status.outcome?.ranks.length, 2);
      assert.equal(plays[0]?.status.version, plays[1]?.status.version);

      streams[0]!.close();
      await streams[0]!.done;
      await assert.rejects(streams[0]!.watch(gameId), Unavailable);
    });

    test("a Play stream cut mid-game with a move in flight reopens: every move applied once, no event lost or repeated", async (t) => {
      const relay = await Relay.start(kind.address);
      t.after(() => relay.close());
      const [host, guest] = (await guests(t, kind, 2)) as [TafelClient, TafelClient];
      // The guest talks through the relay (same session): its connection is the one cut.
      const cut = new TafelClient(createNativeTransport(relay.address));
      t.after(() => cut.close());
      const matches = await Promise.all([host.findMatch("connect4"), guest.findMatch("connect4")]);
      const gameId = matches[0].gameId;
      cut.session = guest.session;
      const streams = [host.playStream(), cut.playStream()] as const;
      t.after(() => streams.forEach((s) => s.close()));

      const plays = await Promise.all([
        playOnStream(host, streams[0], gameId, matches[0].seat, connect4Strategy),
        playOnStream(cut, streams[1], gameId, matches[1].seat, connect4Strategy, {
          // Cut twice: once with the guest's move just sent, once while it waits for the host.
          onSubmit: (version) => {
            if (version >= 2n && relay.cuts === 0) relay.cut();
            else if (version >= 6n && relay.cuts === 1) setImmediate(() => relay.cut());
          },
        }),
      ]);
      assert.equal(relay.cuts, 2);
      assert.ok(streams[1].reconnects >= 2, `reconnects: ${streams[1].reconnects}`);
      assert.equal(plays[0].status.over, true);
      assert.equal(plays[0].status.version, plays[1].status.version);
      // Each move applied once: the record holds exactly as many moves as versions went by.
      const record = await host.getRecord(gameId);
      assert.equal(BigInt(record.actions.length), plays[0].status.version);
      // What the cut stream delivered is the game's events after its first view, in order, once
      // each (it may stop reading before the last ones: its own winning move ends its loop).
      const all = await eventIdsAfter(host, gameId, plays[1].from);
      assert.ok(plays[1].delivered.length > 0);
      assert.deepEqual(plays[1].delivered, all.slice(0, plays[1].delivered.length));
    });
  });
}
