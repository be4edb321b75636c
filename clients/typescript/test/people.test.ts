// Knowing each other on every transport: a game's chat (a line each way, the watch resumed after a cut
// with every line once and in order, a line resent with its request id said once, the channels
// kept apart), and following (a followed player's presence on the event stream, in the list and
// on the profile) with one's own settings.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test, type TestContext } from "node:test";
import { presenceOf, sleep, social, TafelClient, type TafelError } from "../src/index.js";
import { Relay, transportKinds, within, type TransportKind } from "./platform.js";

async function players(t: TestContext, kind: TransportKind, count: number): Promise<TafelClient[]> {
  const clients = Array.from({ length: count }, () => new TafelClient(kind.make()));
  t.after(() => clients.forEach((c) => c.close()));
  await Promise.all(clients.map((c) => c.register(`pp${randomBytes(5).toString("hex")}`, "correct horse battery")));
  return clients;
}

/** A casual Connect Four game between a (first) and b: a's challenge, accepted. */
async function gameBetween(a: TafelClient, b: TafelClient): Promise<string> {
  const made = await a.challenge(b.player.username, "connect4", { seat: "first" });
  return (await b.acceptChallenge(made.challengeId)).gameId;
}

const refused = (reason: string) => (error: unknown) => (error as TafelError).reason === reason;

/** Waits until `items` holds `count` entries (filled by a background reader). */
async function until(items: unknown[], count: number, what: string, failed: () => unknown = () => undefined): Promise<void> {
  for (const deadline = Date.now() + 15_000; items.length < count; ) {
    if (failed() !== undefined) throw failed();
    assert.ok(Date.now() < deadline, `${what}: ${items.length} of ${count} within 15 s`);
    await sleep(20);
  }
}

for (const kind of transportKinds()) {
  describe(`chat and following over ${kind.name}`, () => {
    test("a line each way, the watch resumed after a cut, a resent line said once, the channels apart", async (t) => {
      const [a, b, c] = (await players(t, kind, 3)) as [TafelClient, TafelClient, TafelClient];
      const gameId = await gameBetween(a, b);
      const channel = { kind: "players", id: gameId } as const;
      const relay = await Relay.start(kind.address);
      t.after(() => relay.close());
      const cutOff = new TafelClient(kind.make(relay.address));
      t.after(() => cutOff.close());
      cutOff.session = a.session; // a, on a connection the test can cut

      const first = await b.sendChat(channel, "good luck");
      const seen: social.ChatMessage[] = [];
      const readies: social.ChatReady[] = [];
      let failed: unknown;
      const abort = new AbortController();
      t.after(() => abort.abort());
      void (async () => {
        try {
          for await (const message of cutOff.watchChat(channel, { signal: abort.signal, onReady: (r) => readies.push(r) })) seen.push(message);
        } catch (error) {
          if (!abort.signal.aborted) failed = error;
        }
      })();
      await until(seen, 1, "the history", () => failed);
      assert.equal(seen[0]?.messageId, first.messageId);
      assert.ok(readies[0]?.canWrite && !readies[0].chatOff);

      relay.pause(); // the watch drops and stays down while two lines are said
      const mine = await a.sendChat(channel, "you too", { requestId: "a-line-1" });
      assert.equal((await a.sendChat(channel, "you too", { requestId: "a-line-1" })).messageId, mine.messageId, "said once");
      const third = await b.sendChat(channel, "your move");
      relay.resume();
      await until(seen, 3, "the lines after the cut", () => failed);
      await sleep(200); // nothing doubled comes after them
      assert.deepEqual(seen.map((m) => m.messageId), [first.messageId, mine.messageId, third.messageId]);
      assert.ok(relay.connections >= 2, "the watch reconnected");
      assert.equal(seen[1]?.author?.username, a.player.username);

      const listed = await b.listChat(channel, { afterMessageId: first.messageId });
      assert.deepEqual(listed.messages.map((m) => m.text), ["you too", "your move"]);
      await assert.rejects(a.sendChat({ kind: "spectators", id: gameId }, "psst"), refused("CHAT_NOT_ALLOWED"));
      await assert.rejects(c.listChat(channel), refused("CHAT_CHANNEL_NOT_FOUND"));
      await c.sendChat({ kind: "spectators", id: gameId }, "nice opening");
      assert.equal((await a.listChat(channel)).messages.length, 3, "a spectator's line stays among the spectators");
    });

    test("a followed player's presence on the event stream, the list and the profile; settings", async (t) => {
      const [a, b] = (await players(t, kind, 2)) as [TafelClient, TafelClient];
      const changes: social.PresenceChanged[] = [];
      const abort = new AbortController();
      t.after(() => abort.abort());
      let live = (): void => undefined;
      const ready = new Promise<void>((resolve) => (live = resolve));
      void (async () => {
        for await (const event of a.watchMyEvents({ signal: abort.signal, onReady: () => live() })) {
          const changed = presenceOf(event);
          if (changed?.player?.username === b.player.username) changes.push(changed);
        }
      })().catch(() => undefined);
      await within(ready, 10_000, "a's event stream");
      const followed = await a.follow(b.player.username);
      assert.equal(followed.player?.username, b.player.username);

      const bStream = new AbortController();
      t.after(() => bStream.abort());
      void (async () => {
        for await (const _ of b.watchMyEvents({ signal: bStream.signal })) void _;
      })().catch(() => undefined);
      await until(changes, 1, "b online");
      const gameId = await gameBetween(a, b);
      await until(changes, 2, "b playing");
      assert.deepEqual(changes.map((c) => c.presence?.state), [social.PresenceState.ONLINE, social.PresenceState.PLAYING]);
      assert.equal(changes[1]?.presence?.gameId, gameId);
      const [listed] = await a.listFollowing();
      assert.equal(listed?.presence?.state, social.PresenceState.PLAYING);

      const profile = await a.getProfile(b.player.username);
      assert.ok(profile.followedByYou && !profile.followsYou);
      assert.equal(profile.followers, 1);

      const settings = await b.updateMySettings({ chatEnabled: false, challengePolicy: "followed" });
      assert.equal(settings.chatEnabled, false);
      assert.equal(settings.challengePolicy, social.ChallengePolicy.FOLLOWED);
      assert.equal((await b.getMySettings()).challengePolicy, social.ChallengePolicy.FOLLOWED);
      await assert.rejects(b.sendChat({ kind: "players", id: gameId }, "hello?"), refused("CHAT_OFF"));
      await a.unfollow(b.player.username);
      assert.deepEqual(await a.listFollowing(), []);
    });
  });
}
