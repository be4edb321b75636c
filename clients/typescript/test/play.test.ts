// The bidirectional Play stream (native gRPC only: browsers cannot open one): a whole Connect Four
// game with moves and events on one stream per player; a refusal carries its reason.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IllegalMove, moves, Unavailable, type games, type PlayStream, type TafelClient } from "../src/index.js";
import { guests, transportKinds } from "./platform.js";
import { connect4Strategy } from "../conformance/strategies.js";

async function playOnStream(client: TafelClient, stream: PlayStream, gameId: string, seat: number): Promise<games.GameStatus> {
  const watching = await stream.watch(gameId);
  let status = watching.summary?.status;
  let view = watching.view;
  assert.ok(status && view);
  while (!status.over) {
    if (status.toAct.includes(seat)) {
      const answer = await stream.submitMove(gameId, connect4Strategy(view, status.version), { expectedVersion: status.version });
      assert.ok(answer.status);
      status = answer.status;
      continue;
    }
    const delivery = await stream.nextEvent();
    assert.equal(delivery.gameId, gameId);
    if (delivery.status !== undefined && delivery.status.version >= status.version) status = delivery.status;
    if (!status.over && status.toAct.includes(seat)) view = (await client.getGame(gameId)).view ?? view;
  }
  return status;
}

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

      const statuses = await Promise.all(players.map((p, i) => playOnStream(p, streams[i]!, gameId, matches[i]!.seat)));
      assert.equal(statuses[0]?.over, true);
      assert.equal(statuses[0]?.outcome?.ranks.length, 2);
      assert.equal(statuses[0]?.version, statuses[1]?.version);

      streams[0]!.close();
      await streams[0]!.done;
      await assert.rejects(streams[0]!.watch(gameId), Unavailable);
    });
  });
}
