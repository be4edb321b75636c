// The documented bot (examples/challenge-bot.ts, docs/clients.md) as a third party runs it: its
// own process on its own account. A player's challenge to a game it does not play is declined
// with that reason; a Connect Four challenge is accepted and played to the end; the bot then
// offers a rematch, which the player accepts; in the rematch it declines a draw offer, and after
// the second game (--max-games 2) it stops by itself.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { challenges, play, TafelClient } from "../src/index.js";
import { connect4Strategy } from "../conformance/strategies.js";
import { playGame, required, transportKinds, within } from "./platform.js";

const BOT = fileURLToPath(new URL("../examples/challenge-bot.js", import.meta.url));

/** Events of `client`'s stream, kept as they come, and a way to wait for one. */
function follow(client: TafelClient, signal: AbortSignal): { ready: Promise<void>; next: <T>(what: string, pick: (e: challenges.AccountEvent) => T | undefined) => Promise<T> } {
  const seen: challenges.AccountEvent[] = [];
  let wake = (): void => undefined;
  let live = (): void => undefined;
  const ready = new Promise<void>((resolve) => (live = resolve));
  void (async () => {
    for await (const event of client.watchMyEvents({ signal, onReady: () => live() })) {
      seen.push(event);
      wake();
    }
  })().catch(() => undefined);
  const next = async <T>(what: string, pick: (e: challenges.AccountEvent) => T | undefined): Promise<T> => {
    const look = async (): Promise<T> => {
      for (let i = 0; ; ) {
        for (; i < seen.length; i++) {
          const found = pick(seen[i]!);
          if (found !== undefined) return found;
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
    };
    return within(look(), 30_000, what);
  };
  return { ready, next };
}

test("the challenge bot accepts, plays, offers a rematch, declines a draw", async (t) => {
  const kind = transportKinds()[0]!; // native gRPC: the bot's own choice
  const name = `bot${randomBytes(4).toString("hex")}`;
  const bot = spawn(process.execPath, [BOT, "--server", required("TAFEL_TEST_GATEWAY"), "--username", name, "--password", "bot password 1", "--register", "--max-games", "2"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  t.after(() => bot.kill());
  let output = "";
  bot.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = once(bot, "exit");
  await within((async () => {
    while (!output.includes("waits for challenges")) await new Promise((resolve) => setTimeout(resolve, 50));
  })(), 20_000, "the bot's start");

  const me = new TafelClient(kind.make());
  t.after(() => me.close());
  await me.register(`human${randomBytes(4).toString("hex")}`, "correct horse battery");
  const abort = new AbortController();
  t.after(() => abort.abort());
  const events = follow(me, abort.signal);
  await events.ready;

  const sameAs = (id: string) => (e: challenges.AccountEvent) => (e.kind.case === "challenge" && e.kind.value.challengeId === id && e.kind.value.status !== challenges.ChallengeStatus.PENDING ? e.kind.value : undefined);
  const refused = await me.challenge(name, "coloursquare");
  const declined = await events.next("the decline", sameAs(refused.challengeId));
  assert.equal(declined.status, challenges.ChallengeStatus.DECLINED);
  assert.equal(declined.declineReason, challenges.DeclineReason.NOT_THIS_GAME);

  const made = await me.challenge(name, "connect4", { seat: "first", perMoveS: 30 });
  const accepted = await events.next("the acceptance", sameAs(made.challengeId));
  assert.equal(accepted.status, challenges.ChallengeStatus.ACCEPTED);
  const first = accepted.gameId;
  const status = await playGame(me, first, 0, connect4Strategy);
  assert.ok(status.over);

  const offer = await events.next("the bot's rematch offer", (e) => (e.kind.case === "offer" && e.kind.value.gameId === first && e.kind.value.kind === play.OfferKind.REMATCH ? e.kind.value : undefined));
  assert.equal(offer.by?.player?.username, name);
  const second = await me.rematch(first);
  assert.equal((await me.getGame(second)).seat, 1, "seats rotate in the rematch");

  // The rematch: the bot (first now) moves; a draw offer is declined; then the player resigns.
  await within((async () => {
    while ((await me.getGame(second)).summary?.status?.toAct[0] !== 1) await new Promise((resolve) => setTimeout(resolve, 50));
  })(), 20_000, "the bot's first move in the rematch");
  await me.offerDraw(second);
  const draw = await events.next("the bot's answer to the draw", (e) => (e.kind.case === "offer" && e.kind.value.gameId === second && e.kind.value.kind === play.OfferKind.DRAW && e.kind.value.status !== play.OfferStatus.PENDING ? e.kind.value : undefined));
  assert.equal(draw.status, play.OfferStatus.DECLINED);
  await me.resign(second);

  const [code] = (await within(exited, 20_000, "the bot's exit")) as [number | null];
  assert.equal(code, 0, output);
  assert.match(output, /played 2 games/);
});
