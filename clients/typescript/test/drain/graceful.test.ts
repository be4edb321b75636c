// A gateway stopped gracefully mid-game (SIGTERM, as in a rolling deploy) must look to the SDK
// like any drop: each Play stream, told `reconnect` and ended with OK, reopens on the other
// gateway of its transport and resumes; no submit hangs, every move is applied once, and a
// spectator's watch sees every event once. Started by tests/clients/test_typescript_sdk.py:
//   TAFEL_TEST_GATEWAYS   both gateways' native addresses, "127.0.0.1:A,127.0.0.1:B"
//   TAFEL_TEST_STOP_PID   the process id of the first one (the one the clients start on)

import assert from "node:assert/strict";
import { test } from "node:test";
import { TafelClient, type games } from "../../src/index.js";
import { createNativeTransport } from "../../src/node.js";
import { eventIdsAfter, playOnStream, required, within } from "../platform.js";
import { connect4Strategy } from "../../conformance/strategies.js";

const gateways = required("TAFEL_TEST_GATEWAYS").split(",");
const stopPid = Number(required("TAFEL_TEST_STOP_PID"));

test("a gateway stopped gracefully mid-game: Play streams move to the other one, 0 hung submits", async (t) => {
  assert.equal(gateways.length, 2);
  // Over both gateways, the first one first: every connection starts on the one that stops.
  const clients = Array.from({ length: 3 }, () => new TafelClient(createNativeTransport(gateways)));
  t.after(() => clients.forEach((c) => c.close()));
  const [a, b, spectator] = clients as [TafelClient, TafelClient, TafelClient];
  await Promise.all(clients.map((c) => c.signInAsGuest()));
  const matches = await within(Promise.all([a.findMatch("connect4"), b.findMatch("connect4")]), 30_000, "matchmaking");
  const gameId = matches[0].gameId;
  const seen: games.GameEvent[] = [];
  const watched = (async () => {
    for await (const event of spectator.watch(gameId)) seen.push(event);
  })();
  const streams = [a.playStream(), b.playStream()] as const;
  t.after(() => streams.forEach((s) => s.close()));

  let stopped = false;
  const stop = (version: bigint): void => {
    if (version >= 4n && !stopped) {
      stopped = true; // with this move in flight
      process.kill(stopPid, "SIGTERM");
    }
  };
  const plays = await Promise.all(
    [a, b].map((client, i) =>
      playOnStream(client, streams[i]!, gameId, matches[i]!.seat, connect4Strategy, { onSubmit: stop, answerMs: 30_000 }),
    ),
  );
  assert.ok(stopped, "the game ended before the gateway was stopped");
  assert.equal(plays[0]!.status.over, true);
  assert.equal(plays[0]!.status.version, plays[1]!.status.version);
  for (const stream of streams) assert.ok(stream.reconnects >= 1, `a stream never moved: ${stream.reconnects} reconnects`);

  const record = await b.getRecord(gameId);
  assert.equal(BigInt(record.actions.length), plays[0]!.status.version); // each move applied once
  await within(watched, 30_000, "the spectator's watch");
  const all = await eventIdsAfter(b, gameId, "");
  assert.deepEqual(seen.map((e) => e.eventId), all); // the whole game, once each, through the stop
  assert.equal(seen.at(-1)?.kind.case, "ended");
  for (const play of plays) {
    // Each stream's events after its first view, in order, once each, across the move.
    const after = await eventIdsAfter(b, gameId, play.from);
    assert.deepEqual(play.delivered, after.slice(0, play.delivered.length));
  }
});
