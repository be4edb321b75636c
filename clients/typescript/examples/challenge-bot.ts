// A third-party bot on tafel's public API, in the TypeScript SDK (docs/clients.md, "Challenges,
// offers and the event stream"). It lives on its account's event stream: it accepts challenges to
// games it plays (and declines the others with a reason), plays each game that starts, offers a
// rematch when one ends (or accepts the one offered), and declines draws and takebacks.
//
//   node dist/examples/challenge-bot.js --server 127.0.0.1:50051 --username mybot --password '...'
//
// --server: a gateway's native gRPC address, or the web edge's URL (http://127.0.0.1:8080).
// --register: make the account first. --max-games N: stop after N games (default: run until
// Ctrl-C). In your own project, import from "@tafel/sdk" and "@tafel/sdk/node".

import { parseArgs } from "node:util";
import { challenges, createWebTransport, moves, play, TafelClient, TafelError, VersionConflict, type games } from "../src/index.js";
import { createNativeTransport } from "../src/node.js";

const GAMES = new Set(["connect4", "plus4"]);

/** A random legal move from the bot's view of the game. */
function chooseMove(view: games.GameView): games.GameMove {
  const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)]!;
  if (view.game.case === "connect4") return moves.connect4(pick(view.game.value.legalColumns));
  if (view.game.case === "plus4") {
    const move = pick(view.game.value.legalMoves);
    return moves.plus4(move.column, { bonus: move.bonus });
  }
  throw new Error(`no moves for ${view.game.case}`);
}

/** Play the bot's seat of `gameId` to the end, moving whenever the game waits for it. */
async function playGame(client: TafelClient, gameId: string, signal: AbortSignal): Promise<void> {
  let game = await client.waitForGame(gameId);
  for (;;) {
    const status = game.summary?.status;
    if (status === undefined || status.over || game.seat === undefined) return;
    if (status.toAct.includes(game.seat) && game.view !== undefined) {
      try {
        await client.submitMove(gameId, chooseMove(game.view), { expectedVersion: status.version });
      } catch (error) {
        if (!(error instanceof VersionConflict)) throw error; // taken back, or the game ended: read it again
      }
    } else {
      // Wait for the next event (a move, a takeback, the end), then read the game again.
      for await (const response of client.watchGame(gameId, { afterEventId: game.lastEventId, signal })) {
        if (response.event !== undefined) break;
      }
    }
    game = await client.getGame(gameId);
  }
}

export async function runBot(client: TafelClient, { maxGames = Infinity, signal = new AbortController().signal } = {}): Promise<number> {
  const me = client.player.playerId;
  const stop = new AbortController();
  signal.addEventListener("abort", () => stop.abort(), { once: true });
  let started = 0;
  let finished = 0;
  const answer = async (challenge: challenges.Challenge): Promise<void> => {
    if (challenge.status !== challenges.ChallengeStatus.PENDING || challenge.challenged?.playerId !== me) return;
    if (!GAMES.has(challenge.game)) {
      await client.declineChallenge(challenge.challengeId, challenges.DeclineReason.NOT_THIS_GAME);
    } else if (started < maxGames) {
      await client.acceptChallenge(challenge.challengeId);
    } else {
      await client.declineChallenge(challenge.challengeId, challenges.DeclineReason.LATER);
    }
  };
  const play_ = async (gameId: string): Promise<void> => {
    await playGame(client, gameId, stop.signal);
    finished += 1;
    console.log(`game ${gameId} over (${finished} played)`);
    if (finished >= maxGames) return stop.abort();
    try {
      await client.offerRematch(gameId);
    } catch (error) {
      // They offered first: say yes. A game without rematches (a tournament's) is left at that.
      if (error instanceof TafelError && error.reason === "OFFER_PENDING") await client.answerOffer(gameId, play.OfferKind.REMATCH, true);
      else if (!(error instanceof TafelError && error.reason === "OFFER_NOT_ALLOWED")) throw error;
    }
  };
  const tasks: Promise<void>[] = [];
  const background = (task: Promise<void>): void => {
    tasks.push(task.catch((error: unknown) => console.error("bot:", error instanceof Error ? error.message : error)));
  };
  try {
    const events = client.watchMyEvents({
      signal: stop.signal,
      // Live now: answer what was waiting before the bot started.
      onReady: () => background(client.listChallenges().then(async (pending) => void (await Promise.all(pending.incoming.map(answer))))),
    });
    for await (const event of events) {
      const what = event.kind;
      if (what.case === "challenge") background(answer(what.value));
      else if (what.case === "gameStarted" && started < maxGames) {
        started += 1;
        console.log(`game ${what.value.gameId} started (${what.value.origin})`);
        background(play_(what.value.gameId));
      } else if (what.case === "offer" && what.value.status === play.OfferStatus.PENDING && what.value.by?.player?.playerId !== me) {
        // A rematch: yes (while games are left). A draw or takeback: the bot plays on.
        const yes = what.value.kind === play.OfferKind.REMATCH && started < maxGames;
        background(client.answerOffer(what.value.gameId, what.value.kind, yes).then(() => undefined));
      }
    }
  } catch (error) {
    if (!stop.signal.aborted) throw error;
  }
  await Promise.all(tasks);
  return finished;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      server: { type: "string", default: "127.0.0.1:50051" },
      username: { type: "string" },
      password: { type: "string" },
      register: { type: "boolean", default: false },
      "max-games": { type: "string" },
    },
  });
  if (!values.username || !values.password) throw new Error("give --username and --password");
  const server = values.server ?? "";
  const client = new TafelClient(server.startsWith("http") ? createWebTransport(server) : createNativeTransport(server));
  if (values.register) await client.register(values.username, values.password);
  else await client.signIn(values.username, values.password);
  const stop = new AbortController();
  process.once("SIGINT", () => stop.abort());
  process.once("SIGTERM", () => stop.abort());
  console.log(`${client.player.username} waits for challenges`);
  const played = await runBot(client, { maxGames: values["max-games"] ? Number(values["max-games"]) : Infinity, signal: stop.signal });
  console.log(`played ${played} games`);
  client.close();
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
