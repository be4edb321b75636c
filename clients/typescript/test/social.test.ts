// Meeting at the board on every transport: the account's event stream (live, and resumed after a cut with
// nothing lost or twice), challenges (declined with a reason, accepted into a game seated as
// asked, cancelled, an open one taken), offers in a game (a draw agreed, a takeback, an abort)
// and a rematch both players accept.

import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { challenges, IllegalMove, moves, play, sleep, TafelClient, type TafelError } from "../src/index.js";
import { randomBytes } from "node:crypto";
import { Relay, transportKinds, within, type TransportKind } from "./platform.js";

/** A client's event stream, read in the background from the moment `open` returns (it is live). */
class Inbox {
  readonly events: challenges.AccountEvent[] = [];
  private readonly abort = new AbortController();
  private wake: () => void = () => undefined;
  failed: unknown;

  private constructor(readonly client: TafelClient) {}

  static async open(t: TestContext, client: TafelClient, afterEventId = ""): Promise<Inbox> {
    const inbox = new Inbox(client);
    t.after(() => inbox.abort.abort());
    let live = (): void => undefined;
    const ready = new Promise<void>((resolve) => (live = resolve));
    void (async () => {
      try {
        for await (const event of client.watchMyEvents({ afterEventId, signal: inbox.abort.signal, onReady: () => live() })) {
          inbox.events.push(event);
          inbox.wake();
        }
      } catch (error) {
        if (!inbox.abort.signal.aborted) inbox.failed = error;
        inbox.wake();
      }
    })();
    await within(ready, 10_000, "the event stream's ready");
    return inbox;
  }

  challenges(status?: challenges.ChallengeStatus): challenges.Challenge[] {
    return this.events.flatMap((e) => (e.kind.case === "challenge" && (status === undefined || e.kind.value.status === status) ? [e.kind.value] : []));
  }

  started(): challenges.GameStarted[] {
    return this.events.flatMap((e) => (e.kind.case === "gameStarted" ? [e.kind.value] : []));
  }

  offers(kind: play.OfferKind, status?: play.OfferStatus): play.Offer[] {
    return this.events.flatMap((e) => (e.kind.case === "offer" && e.kind.value.kind === kind && (status === undefined || e.kind.value.status === status) ? [e.kind.value] : []));
  }

  /** Waits until `found()` gives something, and returns it. */
  async until<T>(what: string, found: () => T[], ms = 15_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      if (this.failed !== undefined) throw this.failed;
      const [first] = found();
      if (first !== undefined) return first;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what}: not on the event stream within ${ms} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}

/** `count` registered players (a challenge names an account: a guest cannot be challenged). */
async function players(t: TestContext, kind: TransportKind, count: number): Promise<TafelClient[]> {
  const clients = Array.from({ length: count }, () => new TafelClient(kind.make()));
  t.after(() => clients.forEach((c) => c.close()));
  await Promise.all(clients.map((c) => c.register(`ch${randomBytes(5).toString("hex")}`, "correct horse battery")));
  return clients;
}

const refused = (reason: string) => (error: unknown) => (error as TafelError).reason === reason;

/** Two players at a casual Connect Four game made by a's challenge; [a, b] and a's seat. */
async function seated(t: TestContext, kind: TransportKind): Promise<{ a: TafelClient; b: TafelClient; gameId: string; inboxes: [Inbox, Inbox] }> {
  const [a, b] = (await players(t, kind, 2)) as [TafelClient, TafelClient];
  const inboxes: [Inbox, Inbox] = [await Inbox.open(t, a), await Inbox.open(t, b)];
  const made = await a.challenge(b.player.username, "connect4", { seat: "first" });
  const incoming = await inboxes[1].until("the challenge", () => inboxes[1].challenges(challenges.ChallengeStatus.PENDING));
  const accepted = await b.acceptChallenge(incoming.challengeId);
  assert.equal(accepted.challengeId, made.challengeId);
  return { a, b, gameId: accepted.gameId, inboxes };
}

/** The seat `client` holds in `gameId`. */
async function seatOf(client: TafelClient, gameId: string): Promise<number> {
  const seat = (await client.waitForGame(gameId)).seat;
  assert.ok(seat !== undefined, "the player holds no seat in the game");
  return seat;
}

for (const kind of transportKinds()) {
  describe(`challenges and offers over ${kind.name}`, () => {
    test("a challenge declined with a reason, one accepted into a game seated as asked, one cancelled, an open one taken", async (t) => {
      const [a, b, c] = (await players(t, kind, 3)) as [TafelClient, TafelClient, TafelClient];
      const [ai, bi] = [await Inbox.open(t, a), await Inbox.open(t, b)];
      const { ChallengeStatus, DeclineReason } = challenges;

      const first = await a.challenge(b.player.username, "connect4", { perMoveS: 30, seat: "second" });
      assert.equal(first.status, ChallengeStatus.PENDING);
      assert.equal(first.challenged?.playerId, b.player.playerId);
      await assert.rejects(a.challenge(b.player.username, "plus4"), refused("CHALLENGE_PENDING"));
      const incoming = await bi.until("the challenge to b", () => bi.challenges(ChallengeStatus.PENDING));
      assert.equal(incoming.challengeId, first.challengeId);
      assert.deepEqual((await b.listChallenges()).incoming.map((x) => x.challengeId), [first.challengeId]);
      assert.deepEqual((await a.listChallenges()).outgoing.map((x) => x.challengeId), [first.challengeId]);

      const declined = await b.declineChallenge(first.challengeId, DeclineReason.TOO_FAST);
      assert.equal(declined.status, ChallengeStatus.DECLINED);
      const told = await ai.until("the decline", () => ai.challenges(ChallengeStatus.DECLINED));
      assert.equal(told.declineReason, DeclineReason.TOO_FAST);
      await assert.rejects(b.acceptChallenge(first.challengeId), (e) => e instanceof IllegalMove && e.reason === "CHALLENGE_NOT_PENDING");

      const second = await a.challenge(b.player.username, "connect4", { seat: "second" });
      await bi.until("the second challenge", () => bi.challenges(ChallengeStatus.PENDING).filter((x) => x.challengeId === second.challengeId));
      const accepted = await b.acceptChallenge(second.challengeId);
      assert.equal(accepted.status, ChallengeStatus.ACCEPTED);
      assert.ok(accepted.gameId);
      for (const inbox of [ai, bi]) {
        const started = await inbox.until("the game's start", () => inbox.started());
        assert.equal(started.gameId, accepted.gameId);
        assert.equal(started.origin, `challenge:${second.challengeId}`);
      }
      assert.equal(await seatOf(a, accepted.gameId), 1, "a asked for the second seat");
      assert.equal((await b.acceptChallenge(second.challengeId)).gameId, accepted.gameId, "accepting again answers the same");

      const third = await a.challenge(c.player.username, "plus4");
      await assert.rejects(c.cancelChallenge(third.challengeId), refused("NOT_CHALLENGER"));
      assert.equal((await a.cancelChallenge(third.challengeId)).status, ChallengeStatus.CANCELLED);
      await ai.until("the cancel", () => ai.challenges(ChallengeStatus.CANCELLED));

      const open = await c.openChallenge("plus4", { expiresInS: 60 });
      assert.ok(open.open && open.challenged === undefined);
      assert.ok((await b.listOpenChallenges("plus4")).some((x) => x.challengeId === open.challengeId));
      const taken = await b.acceptChallenge(open.challengeId);
      assert.equal(taken.challenged?.playerId, b.player.playerId);
      assert.ok(!(await a.listOpenChallenges("plus4")).some((x) => x.challengeId === open.challengeId), "taken, it leaves the list");
      await assert.rejects(a.acceptChallenge(open.challengeId), refused("CHALLENGE_NOT_PENDING"));
    });

    test("the event stream resumes after a cut: every event once, in order", async (t) => {
      const [a, b] = (await players(t, kind, 2)) as [TafelClient, TafelClient];
      const relay = await Relay.start(kind.address);
      t.after(() => relay.close());
      const cutOff = new TafelClient(kind.make(relay.address));
      t.after(() => cutOff.close());
      cutOff.session = b.session; // b, on a connection the test can cut
      let from = "";
      const seen: string[] = [];
      const abort = new AbortController();
      t.after(() => abort.abort());
      let live = (): void => undefined;
      const ready = new Promise<void>((resolve) => (live = resolve));
      const reading = (async () => {
        for await (const event of cutOff.watchMyEvents({ signal: abort.signal, onReady: (id) => ((from = id), live()) })) {
          seen.push(event.eventId);
          if (seen.length === 6) return;
        }
      })();
      reading.catch(() => undefined); // awaited below; a failure before that is the test's own
      await within(ready, 10_000, "ready");
      const made = await a.challenge(b.player.username, "connect4");
      for (const deadline = Date.now() + 10_000; seen.length === 0; ) {
        assert.ok(Date.now() < deadline, "the first event did not come");
        await sleep(20);
      }
      relay.pause(); // the connection drops and stays down while ...
      await a.cancelChallenge(made.challengeId); // ... five more events happen
      for (let i = 0; i < 2; i++) await a.cancelChallenge((await a.challenge(b.player.username, "connect4")).challengeId);
      relay.resume();
      await within(reading, 30_000, "the events after the cut");
      assert.ok(relay.cuts >= 1 && relay.connections >= 2, `the stream reconnected (${relay.connections} connections)`);
      // The same events, read afresh from where the watch began: nothing lost, nothing twice.
      const all: string[] = [];
      for await (const event of b.watchMyEvents({ afterEventId: from, signal: AbortSignal.timeout(10_000) })) {
        all.push(event.eventId);
        if (all.length === 6) break;
      }
      assert.deepEqual(seen, all);
      assert.equal(new Set(seen).size, 6);
      await assert.rejects(
        (async () => {
          for await (const _ of b.watchMyEvents({ afterEventId: "99999999999999-0" })) break;
        })(),
        refused("EVENT_ID_OUT_OF_RANGE"),
      );
    });

    test("abort before both moved; a takeback, a draw agreed; a rematch both accept", async (t) => {
      const first = await seated(t, kind);
      const { a, b } = first;
      assert.equal(await seatOf(a, first.gameId), 0);
      await a.submitMove(first.gameId, moves.connect4(3), { expectedVersion: 0n });
      const aborted = await b.abortGame(first.gameId); // b has not moved yet
      assert.equal(aborted.status?.outcome?.reason, "ABORTED");
      assert.ok(aborted.status?.over);

      const second = await seated(t, kind);
      const [ai, bi] = second.inboxes;
      const game = second.gameId;
      await second.a.submitMove(game, moves.connect4(3), { expectedVersion: 0n });
      await second.b.submitMove(game, moves.connect4(4), { expectedVersion: 1n });
      await assert.rejects(second.a.abortGame(game), refused("TOO_LATE_TO_ABORT"));
      await assert.rejects(second.a.offerRematch(game), refused("OFFER_NOT_ALLOWED"));

      const asked = await second.a.askTakeback(game);
      assert.equal(asked.status, play.OfferStatus.PENDING);
      await assert.rejects(second.a.askTakeback(game), refused("OFFER_PENDING"));
      await bi.until("the takeback request", () => bi.offers(play.OfferKind.TAKEBACK, play.OfferStatus.PENDING));
      await assert.rejects(second.a.answerOffer(game, play.OfferKind.TAKEBACK, true), refused("OWN_OFFER"));
      const back = await second.b.answerOffer(game, play.OfferKind.TAKEBACK, true);
      assert.equal(back.status, play.OfferStatus.ACCEPTED);
      const after = await second.a.getGame(game);
      assert.ok(after.summary?.status?.toAct.includes(0), "a's move is taken back: a moves again");
      const board = after.view?.game.case === "connect4" ? after.view.game.value : undefined;
      assert.equal(board?.moves, "", "both moves are gone: the board is empty again");

      await second.a.offerDraw(game);
      await bi.until("the draw offer", () => bi.offers(play.OfferKind.DRAW, play.OfferStatus.PENDING));
      assert.equal((await second.b.answerOffer(game, play.OfferKind.DRAW, true)).status, play.OfferStatus.ACCEPTED);
      const ended = (await second.a.getGame(game)).summary?.status;
      assert.ok(ended?.over && ended.outcome?.draw);
      assert.equal(ended.outcome?.reason, "DRAW_AGREED");
      await ai.until("the draw accepted", () => ai.offers(play.OfferKind.DRAW, play.OfferStatus.ACCEPTED));

      const [next, again] = await within(Promise.all([second.a.rematch(game), second.b.rematch(game)]), 30_000, "the rematch");
      assert.equal(next, again);
      assert.equal(await seatOf(second.a, next), 1, "seats rotate");
      for (const inbox of [ai, bi]) {
        const started = await inbox.until("the rematch's start", () => inbox.started().filter((s) => s.gameId === next));
        assert.equal(started.origin, `rematch:${game}`);
      }
      const record = await second.a.getRecord(game);
      assert.deepEqual(
        record.offers.map((o) => [o.kind, o.status]),
        [
          [play.OfferKind.TAKEBACK, play.OfferStatus.ACCEPTED],
          [play.OfferKind.DRAW, play.OfferStatus.ACCEPTED],
          [play.OfferKind.REMATCH, play.OfferStatus.ACCEPTED],
        ],
      );
    });
  });
}
