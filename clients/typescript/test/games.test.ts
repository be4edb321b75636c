// Whole games through the SDK, on every transport: Connect Four via matchmaking, Plus 4 via a
// private room, a 3-seat Colour Square game to the end.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { options, play, type TafelClient } from "../src/index.js";
import { guests, playGame, transportKinds } from "./platform.js";
import { colourSquareStrategy, connect4Strategy, plus4Strategy } from "../conformance/strategies.js";

for (const kind of transportKinds()) {
  describe(`whole games over ${kind.name}`, () => {
    test("two players matchmake and play Connect Four to the end", async (t) => {
      const players = await guests(t, kind, 2);
      const matches = await Promise.all(players.map((p) => p.findMatch("connect4", { options: options.connect4() })));
      const [a, b] = matches;
      assert.ok(a && b);
      assert.equal(a.gameId, b.gameId);
      assert.deepEqual([a.seat, b.seat].sort(), [0, 1]);
      const statuses = await Promise.all(
        players.map((p, i) => playGame(p, a.gameId, matches[i]?.seat ?? -1, connect4Strategy)),
      );
      for (const status of statuses) {
        assert.equal(status.over, true);
        assert.equal(status.outcome?.ranks.length, 2);
      }
      const record = await players[0]!.getRecord(a.gameId);
      assert.equal(record.game, "connect4");
      assert.deepEqual(record.players.map((p) => p.player?.playerId).sort(), players.map((p) => p.player.playerId).sort());
      assert.equal(BigInt(record.actions.length), statuses[0]!.version);
      // Its positions for a replay: views[v] after version v, from the empty board to the last drop.
      const replay = await players[1]!.getReplay(a.gameId);
      assert.deepEqual(replay.record, record);
      assert.equal(replay.views.length, record.actions.length + 1);
      const boards = replay.views.map((v) => (v.game.case === "connect4" ? v.game.value.moves : undefined));
      assert.equal(boards[0], "");
      assert.equal(boards.at(-1)?.length, record.actions.filter((x) => x.action.case === "move").length);
      // A watch from the start replays the whole game: created first, ended last, in order.
      const events = [];
      for await (const event of players[1]!.watch(a.gameId)) events.push(event);
      assert.equal(events[0]?.kind.case, "created");
      assert.equal(events.at(-1)?.kind.case, "ended");
      assert.equal(events.filter((e) => e.kind.case === "connect4").length, record.actions.length);
    });

    test("a private room plays Plus 4 to the end", async (t) => {
      const [host, guest] = (await guests(t, kind, 2)) as [TafelClient, TafelClient];
      const room = await host.createRoom("plus4", { seats: 2, options: options.plus4() });
      assert.equal(room.state, play.RoomState.OPEN);
      assert.equal(room.players.length, 1);
      const watching = host.waitRoomStarted(room.code);
      const joined = await guest.joinRoom(room.code);
      assert.equal(joined.code, room.code);
      const started = await watching;
      assert.ok(started.gameId);
      const seats = await Promise.all([host, guest].map(async (c) => (await c.waitForGame(started.gameId)).seat));
      assert.deepEqual([...seats].sort(), [0, 1]);
      const statuses = await Promise.all([host, guest].map((c, i) => playGame(c, started.gameId, seats[i]!, plus4Strategy)));
      assert.equal(statuses[0]?.over, true);
      assert.equal(statuses[0]?.outcome?.ranks.length, 2);
      assert.ok(statuses[0]?.outcome?.reason);
    });

    test("three players play Colour Square to the end", async (t) => {
      const players = (await guests(t, kind, 3)) as [TafelClient, TafelClient, TafelClient];
      const [host, ...others] = players;
      const room = await host.createRoom("coloursquare", { seats: 3, perMoveS: 30 });
      const watching = host.waitRoomStarted(room.code);
      for (const other of others) await other.joinRoom(room.code);
      const started = await watching;
      const seats = await Promise.all(players.map(async (c) => (await c.waitForGame(started.gameId)).seat));
      assert.deepEqual([...seats].sort(), [0, 1, 2]);
      const statuses = await Promise.all(players.map((c, i) => playGame(c, started.gameId, seats[i]!, colourSquareStrategy)));
      const outcome = statuses[0]?.outcome;
      assert.equal(statuses[0]?.over, true);
      assert.equal(outcome?.ranks.length, 3);
      assert.equal(outcome?.scores.length, 3);
      const view = (await host.getGame(started.gameId)).view;
      assert.equal(view?.game.case, "coloursquare");
    });
  });
}
