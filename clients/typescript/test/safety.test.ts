// The player-side calls of a player's safety on every transport: the caller's role, block and mute (listed,
// lifted), a report filed once per request id, the standing, and an account's life (change the
// password: other sessions revoked; export; delete: the name no longer signs in).

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import {
  IllegalMove,
  InvalidArgument,
  PermissionDenied,
  play,
  safety,
  TafelClient,
  Unauthenticated,
} from "../src/index.js";
import { transportKinds, type TransportKind } from "./platform.js";

const PASSWORD = "correct horse battery";

async function registered(t: { after: (fn: () => void) => void }, kind: TransportKind, prefix: string): Promise<TafelClient> {
  const client = new TafelClient(kind.make());
  t.after(() => client.close());
  await client.register(`${prefix}${randomBytes(5).toString("hex")}`, PASSWORD);
  return client;
}

for (const kind of transportKinds()) {
  describe(`safety and account life over ${kind.name}`, () => {
    test("role, block, mute, report once, standing", async (t) => {
      const a = await registered(t, kind, "sa");
      const b = await registered(t, kind, "sb");
      const them = b.player.username;
      assert.equal(await a.myRole(), play.Role.PLAYER);

      assert.equal((await a.blockPlayer(them)).username, them);
      assert.equal((await a.mutePlayer(them)).playerId, b.player.playerId);
      let listed = await a.listBlocked();
      assert.deepEqual(listed.blocked.map((p) => p.username), [them]);
      assert.deepEqual(listed.muted.map((p) => p.username), [them]);
      await a.unblockPlayer(them);
      await a.unmutePlayer(them);
      listed = await a.listBlocked();
      assert.equal(listed.blocked.length + listed.muted.length, 0);
      await assert.rejects(a.blockPlayer(a.player.username), (e) => e instanceof InvalidArgument && e.reason === "SELF_NOT_ALLOWED");

      const requestId = `ts-report-${randomBytes(4).toString("hex")}`;
      const first = await a.report(them, safety.ReportReason.ABUSE, { details: "called me names", requestId });
      assert.ok(first.length > 0);
      assert.equal(await a.report(them, safety.ReportReason.ABUSE, { details: "called me names", requestId }), first);
      await assert.rejects(a.report(them, safety.ReportReason.UNSPECIFIED), (e) => e instanceof InvalidArgument && e.reason === "BAD_REPORT_REASON");

      const standing = await b.myStanding();
      assert.equal(standing.warnings.length + standing.sanctions.length, 0);
    });

    test("change password, export, delete", async (t) => {
      const a = await registered(t, kind, "sl");
      const name = a.player.username;
      const other = new TafelClient(kind.make()); // a second session of the same account
      t.after(() => other.close());
      await other.signIn(name, PASSWORD);

      await assert.rejects(a.changePassword("not the password", "a new one at last"), (e) => e instanceof PermissionDenied && e.reason === "WRONG_PASSWORD");
      const fresh = await a.changePassword(PASSWORD, "a new one at last");
      assert.equal(fresh.player?.username, name);
      await a.listBlocked(); // this client carries on with its fresh session
      await assert.rejects(other.listBlocked(), Unauthenticated); // every other session revoked
      await assert.rejects(other.signIn(name, PASSWORD), Unauthenticated);
      await other.signIn(name, "a new one at last");

      const exported = JSON.parse(await a.exportMyData()) as unknown;
      assert.ok(JSON.stringify(exported).includes(name), "the export names the account");

      await assert.rejects(a.deleteAccount("not the password"), (e) => e instanceof PermissionDenied && e.reason === "WRONG_PASSWORD");
      await a.deleteAccount("a new one at last");
      assert.equal(a.session, undefined);
      await assert.rejects(other.listBlocked(), Unauthenticated);
      const stranger = new TafelClient(kind.make());
      t.after(() => stranger.close());
      await assert.rejects(stranger.signIn(name, "a new one at last"), Unauthenticated);

      const guest = new TafelClient(kind.make());
      t.after(() => guest.close());
      await guest.signInAsGuest();
      await assert.rejects(guest.changePassword("whatever it was", "whatever it is"), (e) => e instanceof IllegalMove && e.reason === "GUEST_ACCOUNT");
    });
  });
}
