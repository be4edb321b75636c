// Notices on every transport: a challenge to a 3-day game arrives as a notice on the account's
// event stream, is listed, read (every stream of the account told the count) and cleared; the
// game counts in days; the notice settings change and read back; a vacation starts and ends and
// shows on the game; an address is set (pending) and a bad confirmation token refused.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test, type TestContext } from "node:test";
import { challenges, notices, TafelClient, type TafelError } from "../src/index.js";
import { transportKinds, within, type TransportKind } from "./platform.js";

const { NotificationKind } = notices;

async function players(t: TestContext, kind: TransportKind, count: number): Promise<TafelClient[]> {
  const clients = Array.from({ length: count }, () => new TafelClient(kind.make()));
  t.after(() => clients.forEach((c) => c.close()));
  await Promise.all(clients.map((c) => c.register(`no${randomBytes(5).toString("hex")}`, "correct horse battery")));
  return clients;
}

/** The account's events read in the background from the moment it is live. */
async function stream(t: TestContext, client: TafelClient): Promise<(what: string, wanted: (e: challenges.AccountEvent) => boolean) => Promise<challenges.AccountEvent>> {
  const seen: challenges.AccountEvent[] = [];
  const abort = new AbortController();
  t.after(() => abort.abort());
  let live = (): void => undefined;
  const ready = new Promise<void>((resolve) => (live = resolve));
  void (async () => {
    for await (const event of client.watchMyEvents({ signal: abort.signal, onReady: () => live() })) seen.push(event);
  })().catch(() => undefined);
  await within(ready, 10_000, "the event stream's ready");
  return async (what, wanted) => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const index = seen.findIndex(wanted);
      if (index >= 0) return seen.splice(0, index + 1)[index]!;
      if (Date.now() > deadline) throw new Error(`no ${what} on the event stream`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
}

const refused = (reason: string) => (error: unknown) => (error as TafelError).reason === reason;

for (const kind of transportKinds()) {
  describe(`notices, vacations and e-mail over ${kind.name}`, () => {
    test("a 3-day challenge's notice live, read on one client and every stream told, cleared; the game in days", async (t) => {
      const [a, b] = (await players(t, kind, 2)) as [TafelClient, TafelClient];
      const otherTab = new TafelClient(kind.make());
      t.after(() => otherTab.close());
      otherTab.session = b.session;
      const [tabOne, tabTwo] = [await stream(t, b), await stream(t, otherTab)];

      const made = await a.challenge(b.player.username, "connect4", { daysPerMove: 3, seat: "first" });
      assert.equal(made.timeControl?.daysPerMove, 3);
      let id = "";
      for (const tab of [tabOne, tabTwo]) {
        const event = await tab("a notice", (e) => e.kind.case === "notification");
        assert.ok(event.kind.case === "notification");
        assert.equal(event.kind.value.kind, NotificationKind.CHALLENGE_RECEIVED);
        assert.equal(event.kind.value.challengeId, made.challengeId);
        id = event.kind.value.notificationId;
      }
      const listed = await b.listNotifications({ unreadOnly: true });
      assert.equal(listed.unread, 1);
      assert.deepEqual(listed.notifications.map((n) => n.notificationId), [id]);

      assert.equal(await b.markNotificationsRead([id]), 0);
      for (const tab of [tabOne, tabTwo]) {
        const event = await tab("the inbox change", (e) => e.kind.case === "inbox");
        assert.ok(event.kind.case === "inbox");
        assert.equal(event.kind.value.unread, 0);
        assert.deepEqual(event.kind.value.readIds, [id]);
      }
      assert.equal(await b.clearNotifications([], { all: true }), 0);
      assert.equal((await b.listNotifications()).notifications.length, 0);

      const gameId = (await b.acceptChallenge(made.challengeId)).gameId;
      const summary = (await a.waitForGame(gameId)).summary!;
      assert.equal(summary.timeControl?.daysPerMove, 3);
      assert.equal(Number(summary.timeControl?.perMove?.seconds), 3 * 86_400);
      const left = Number(summary.turnDeadline!.seconds) - Date.now() / 1000;
      assert.ok(left > 3 * 86_400 - 120 && left <= 3 * 86_400 + 5, `the deadline is ${left} s away`);

      // B's vacation shows on the game; ended, it is gone.
      const away = await b.startVacation(48);
      assert.ok(away.active && away.endsAt !== undefined);
      assert.ok(Number(away.allowanceLeft!.seconds) < Number(away.allowance!.seconds));
      assert.equal((await a.getGame(gameId)).summary!.vacationSeats.length, 1);
      assert.equal((await b.endVacation()).active, false);
      assert.equal((await a.getGame(gameId)).summary!.vacationSeats.length, 0);
    });

    test("notice settings kept, a bad time zone refused; an address pending, a bad token refused", async (t) => {
      const [c] = (await players(t, kind, 1)) as [TafelClient];
      const changed = await c.updateNotificationSettings({
        inbox: { [NotificationKind.OPPONENT_MOVED]: false },
        email: { [NotificationKind.YOUR_TURN]: true },
        quietHours: { startMinute: 22 * 60, endMinute: 7 * 60 },
        timeZone: "Europe/Berlin",
        emailDigest: true,
        digestHour: 7,
      });
      const read = await c.notificationSettings();
      assert.equal(read.timeZone, "Europe/Berlin");
      assert.equal(read.digestHour, 7);
      assert.deepEqual([read.quietHours?.enabled, read.quietHours?.startMinute, read.quietHours?.endMinute], [true, 1320, 420]);
      assert.equal(read.preferences.find((p) => p.kind === NotificationKind.OPPONENT_MOVED)?.inbox, false);
      assert.equal(read.preferences.find((p) => p.kind === NotificationKind.YOUR_TURN)?.email, true);
      assert.equal(changed.preferences.length, read.preferences.length);
      await assert.rejects(c.updateNotificationSettings({ timeZone: "Mars/Olympus" }), refused("BAD_TIME_ZONE"));

      const mailbox = `${c.player.username}@example.org`;
      const pending = await c.setEmail(mailbox, "de");
      assert.ok(!pending.confirmed && [pending.address, pending.pendingAddress].includes(mailbox));
      assert.equal((await c.getEmail()).confirmed, false);
      const stranger = new TafelClient(kind.make());
      t.after(() => stranger.close());
      await assert.rejects(stranger.confirmEmail("not-a-token"), refused("BAD_EMAIL_TOKEN"));
    });
  });
}
