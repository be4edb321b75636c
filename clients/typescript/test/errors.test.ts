// Refusals surface as typed errors carrying the server's ErrorInfo reason, on every transport;
// a retried move with the same request id gets the first answer again.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Interceptor } from "@connectrpc/connect";
import {
  Code,
  ConnectError,
  IllegalMove,
  InvalidArgument,
  moves,
  type play,
  PermissionDenied,
  TafelClient,
  Unauthenticated,
  VersionConflict,
} from "../src/index.js";
import { guests, transportKinds } from "./platform.js";

for (const kind of transportKinds()) {
  describe(`refusals over ${kind.name}`, () => {
    test("an illegal move, a stranger's seat, a stale version and no token each say why", async (t) => {
      const [a, b] = (await guests(t, kind, 2)) as [TafelClient, TafelClient];
      const matches = await Promise.all([a.findMatch("connect4"), b.findMatch("connect4")]);
      const gameId = matches[0]!.gameId;
      const [mover, other] = matches[0]!.seat === 0 ? [a, b] : [b, a];

      await assert.rejects(mover.submitMove(gameId, moves.connect4(9), { expectedVersion: 0n }), (error) => {
        assert.ok(error instanceof IllegalMove, `${error}`);
        assert.equal(error.reason, "COLUMN_OUT_OF_RANGE");
        assert.equal(error.code, Code.FailedPrecondition);
        assert.ok(error.detail.length > 0);
        return true;
      });
      await assert.rejects(other.submitMove(gameId, moves.connect4(3), { expectedVersion: 0n, seat: 0 }), PermissionDenied);

      // The same request id twice: applied once, the same answer both times.
      const requestId = `ts-retry-${kind.name.replace(/\W/g, "")}`;
      const first = await mover.submitMove(gameId, moves.connect4(3), { expectedVersion: 0n, requestId });
      const again = await mover.submitMove(gameId, moves.connect4(3), { expectedVersion: 0n, requestId });
      assert.equal(first.version, 1n);
      assert.deepEqual(again, first);
      assert.equal((await other.getGame(gameId)).summary?.status?.version, 1n);

      await assert.rejects(other.submitMove(gameId, moves.connect4(3), { expectedVersion: 0n }), VersionConflict);
      await assert.rejects(a.findMatch("chess"), (error) => error instanceof InvalidArgument && error.reason !== "");
      const stranger = new TafelClient(kind.make());
      t.after(() => stranger.close());
      await assert.rejects(stranger.listMyGames(), (error) => error instanceof Unauthenticated && error.reason !== "");
      const resigned = await mover.resign(gameId);
      assert.equal(resigned.status?.over, true);
    });

    test("a move whose answer is lost is retried with the same request id and applied once", async (t) => {
      // The first SubmitMove reaches the server and is applied, then its answer is "lost" (the
      // interceptor throws UNAVAILABLE instead): the SDK retries by itself, and only the same
      // request id gets the first answer back; a new id would be ABORTED (the version moved on).
      const sent: string[] = [];
      const loseFirstAnswer: Interceptor = (next) => async (request) => {
        const response = await next(request);
        if (request.method.name === "SubmitMove" && !request.stream) {
          sent.push((request.message as play.SubmitMoveRequest).requestId);
          if (sent.length === 1) throw new ConnectError("answer lost on the way", Code.Unavailable);
        }
        return response;
      };
      const flaky = new TafelClient(kind.make(undefined, [loseFirstAnswer]));
      t.after(() => flaky.close());
      const [other] = (await guests(t, kind, 1)) as [TafelClient];
      await flaky.signInAsGuest();
      const matches = await Promise.all([flaky.findMatch("connect4"), other.findMatch("connect4")]);
      const gameId = matches[0]!.gameId;
      if (matches[0]!.seat !== 0) {
        await other.submitMove(gameId, moves.connect4(0), { expectedVersion: 0n });
      }
      const before = (await flaky.getGame(gameId)).summary!.status!.version;
      const answer = await flaky.submitMove(gameId, moves.connect4(3), { expectedVersion: before });
      assert.equal(sent.length, 2);
      assert.equal(sent[0], sent[1]);
      assert.equal(answer.version, before + 1n);
      assert.equal((await other.getGame(gameId)).summary?.status?.version, before + 1n);
    });

    test("a refreshed token works; a signed-out one is refused SESSION_REVOKED", async (t) => {
      const [client] = (await guests(t, kind, 1)) as [TafelClient];
      const me = await client.me();
      const first = client.session;
      const refreshed = await client.refreshSession();
      assert.notEqual(refreshed.token, first?.token);
      assert.equal((await client.me()).playerId, me.playerId);
      const current = client.session;
      await client.signOut();
      assert.equal(client.session, undefined);
      client.session = current; // a client that kept the revoked token
      await assert.rejects(client.me(), (error) => error instanceof Unauthenticated && error.reason === "SESSION_REVOKED");
    });
  });
}
