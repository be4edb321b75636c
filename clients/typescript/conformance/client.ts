// The TypeScript SDK's client for tafel-conformance (docs/clients.md, "The conformance kit"),
// a port of clients/python/tafel/conformance/reference_client.py:
//
//   node dist/conformance/client.js --server HOST:PORT --token TOKEN --game GAME --room CODE [--resign]
//   node dist/conformance/client.js --server HOST:PORT --token TOKEN --game GAME --watch GAME_ID
//   node dist/conformance/client.js --server HOST:PORT --token TOKEN --game GAME --events [--count N]
//        [--decline REASON] [--draw accept|decline] [--rematch] [--follow NAME]
//   node dist/conformance/client.js --server HOST:PORT --token TOKEN --game GAME --chat GAME_ID [--say TEXT] [--count N]
//   node dist/conformance/client.js --server HOST:PORT --token TOKEN --game GAME --tournament ID [--code CODE] [--count N]
//
// --room: join, play the seat the room gives to the end with legal moves, exit 0 (--resign: resign
// at the first turn). --watch: print every event as a JSON line {"event_id": ...} from the first to
// GameEnded, resuming after a cut connection with nothing lost or twice, exit 0. --events: follow
// the account's event stream, printing each event as a JSON line {"event_id": ..., "kind": ...},
// resuming after a cut from the last id printed; accept each challenge to it (--decline REASON,
// e.g. too_slow: decline it so), play every game that starts for it, answer a draw offer as --draw
// says (default decline), decline takebacks, accept a rematch only with --rematch (and then offer
// one after each game but the last); exit 0 once N games (--count, default 1) have ended, or with
// --decline once its stream has shown N challenges declined. --follow NAME: follow that player once
// the stream is live; a presence event's line also has "username", "state" (online, playing,
// offline) and "game_id"; exit 0 once N presence changes of theirs are printed. --chat: watch the
// game's players' channel, printing each line as {"message_id", "author", "text"}, resuming after a
// cut from the last id printed; once live, say TEXT (--say); exit 0 once N lines by others are
// printed. --tournament: join (with --code, the invitation code), follow the tournament's events
// from the start, printing each as {"event_id", "kind"} and resuming after a cut from the last id
// printed, and play every game a round or the arena pairs it in as soon as it is paired; exit 0
// when the tournament is over, or after N games (--count; 0 = until the end). What makes it
// pass is the SDK: one request id per move for every attempt, refusals answered by reading the game
// again, waiting on the watch stream (not polling), watches resuming from the last id printed.

import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { AlreadyExists, challenges, IllegalMove, play, presenceOf, social, TafelClient, Unavailable, VersionConflict } from "../src/index.js";
import { createNativeTransport } from "../src/node.js";
import { strategyFor } from "./strategies.js";

async function waitForChange(client: TafelClient, gameId: string, seat: number, after: string): Promise<void> {
  for await (const response of client.watchGame(gameId, { afterEventId: after })) {
    const status = response.status;
    if (status === undefined) return; // a server that leaves status off: read the game instead
    if (response.event?.kind.case === "ended" || status.over || status.toAct.includes(seat)) return;
  }
}

async function playRoom(client: TafelClient, game: string, code: string, resign: boolean): Promise<number> {
  await client.joinRoom(code);
  const room = await client.waitRoomStarted(code);
  return playToTheEnd(client, game, room.gameId, resign);
}

/** Play this player's seat of `gameId` with legal moves until the game is over. */
async function playToTheEnd(client: TafelClient, game: string, gameId: string, resign = false): Promise<number> {
  const choose = strategyFor(game);
  const room = { gameId };
  let current = await client.waitForGame(room.gameId);
  const seat = current.seat;
  if (seat === undefined) throw new Error("the game has no seat for this player");
  for (;;) {
    const status = current.summary?.status;
    if (status === undefined || current.view === undefined) throw new Error("GetGame answered without a status or view");
    if (status.over) return 0;
    if (status.toAct.includes(seat)) {
      if (resign) {
        await client.resign(room.gameId);
        return 0;
      }
      try {
        await client.submitMove(room.gameId, choose(current.view, status.version), { expectedVersion: status.version });
      } catch (error) {
        // The game moved on under us (a round resolved, a clock ran out): read it again.
        if (!(error instanceof VersionConflict || error instanceof IllegalMove)) throw error;
      }
    } else {
      await waitForChange(client, room.gameId, seat, current.lastEventId);
    }
    current = await client.getGame(room.gameId);
  }
}

/** --tournament: a player that joins and plays every game it is paired in (see the top). */
async function playTournament(client: TafelClient, game: string, tournamentId: string, code: string, count: number): Promise<number> {
  const me = (await client.me()).playerId;
  await client.joinTournament(tournamentId, code);
  let played = 0;
  // The SDK's feed resumes after a cut from the last event it gave (nothing lost or twice).
  for await (const event of client.watchTournament(tournamentId)) {
    const kind = event.kind.case;
    process.stdout.write(`${JSON.stringify({ event_id: event.eventId, kind: kind === undefined ? null : kind.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) })}\n`);
    const paired = kind === "roundStarted" ? (event.kind.value.round?.games ?? []) : kind === "arenaGameStarted" && event.kind.value.game ? [event.kind.value.game] : [];
    for (const g of paired) {
      if (g.gameId && g.players.some((p) => p.playerId === me)) {
        await playToTheEnd(client, game, g.gameId);
        played += 1;
        if (count && played >= count) return 0;
      }
    }
    if (kind === "finished" || kind === "cancelled") return 0;
  }
  return 0;
}

async function watch(client: TafelClient, gameId: string): Promise<number> {
  for await (const event of client.watch(gameId)) {
    process.stdout.write(`${JSON.stringify({ event_id: event.eventId })}\n`);
    if (event.kind.case === "ended") return 0;
  }
  return 1;
}

interface EventOptions {
  count: number;
  decline: string;
  draw: "accept" | "decline";
  rematch: boolean;
  follow: string;
}

const STATES: Partial<Record<social.PresenceState, string>> = {
  [social.PresenceState.ONLINE]: "online",
  [social.PresenceState.PLAYING]: "playing",
  [social.PresenceState.OFFLINE]: "offline",
};

/** --chat: the game's players' channel, printed line by line (see the top of this file). */
async function chat(client: TafelClient, gameId: string, say: string, count: number): Promise<number> {
  const me = (await client.me()).playerId;
  const channel = { kind: "players", id: gameId } as const;
  let live = (): void => undefined;
  const ready = new Promise<void>((resolve) => (live = resolve));
  const stop = new AbortController();
  let heard = 0;
  const reading = (async (): Promise<number> => {
    for await (const message of client.watchChat(channel, { signal: stop.signal, onReady: () => live() })) {
      process.stdout.write(`${JSON.stringify({ message_id: message.messageId, author: message.author?.username ?? "", text: message.text })}\n`);
      if (message.author?.playerId !== me && ++heard >= count) return 0;
    }
    return 1;
  })();
  try {
    await Promise.race([ready, reading]);
    if (say) await client.sendChat(channel, say);
    return await reading;
  } finally {
    stop.abort();
    reading.catch(() => undefined);
  }
}

/** --events: a player that lives on its account's event stream (see the top of this file). */
async function follow(client: TafelClient, game: string, options: EventOptions): Promise<number> {
  const me = (await client.me()).playerId;
  const reason = options.decline ? challenges.DeclineReason[options.decline.toUpperCase().replace(/[- ]/g, "_") as keyof typeof challenges.DeclineReason] : undefined;
  if (options.decline && reason === undefined) throw new Error(`no decline reason ${options.decline}`);
  let played = 0;
  let declined = 0;
  let presences = 0;
  let finished = (): void => undefined;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const stop = new AbortController();
  // Answers one at a time, and the exit waits for the one under way: a draw accepted ends the
  // game, whose end may be seen before the answer's reply.
  let answering = Promise.resolve();
  const serially = (task: () => Promise<void>): Promise<void> => (answering = answering.then(task, task));
  const moot = (error: unknown): void => {
    if (!(error instanceof IllegalMove)) throw error; // answered meanwhile (cancelled, expired, moved)
  };
  const games: Promise<void>[] = [];
  const playOne = async (gameId: string): Promise<void> => {
    await playToTheEnd(client, game, gameId);
    played += 1;
    if (played >= options.count) return finished();
    if (!options.rematch) return;
    try {
      await client.offerRematch(gameId);
    } catch (error) {
      if (error instanceof AlreadyExists) await client.answerOffer(gameId, play.OfferKind.REMATCH, true); // they offered first
      else process.stderr.write(`no rematch: ${String(error)}\n`);
    }
  };
  const onEvent = async (event: challenges.AccountEvent): Promise<void> => {
    const what = event.kind;
    if (what.case === "challenge") {
      const c = what.value;
      if (c.challenged?.playerId !== me || c.open) return;
      if (c.status === challenges.ChallengeStatus.PENDING) {
        await (reason !== undefined ? client.declineChallenge(c.challengeId, reason) : client.acceptChallenge(c.challengeId)).catch(moot);
      } else if (c.status === challenges.ChallengeStatus.DECLINED) {
        declined += 1;
        if (reason !== undefined && declined >= options.count) finished();
      }
    } else if (what.case === "gameStarted") {
      if (what.value.players.some((p) => p.player?.playerId === me)) {
        games.push(playOne(what.value.gameId).catch((error: unknown) => void process.stderr.write(`game ${what.value.gameId}: ${String(error)}\n`)));
      }
    } else if (what.case === "offer" && what.value.status === play.OfferStatus.PENDING && what.value.by?.player?.playerId !== me) {
      const offer = what.value;
      const accept = offer.kind === play.OfferKind.DRAW ? options.draw === "accept" : offer.kind === play.OfferKind.REMATCH && options.rematch;
      await client.answerOffer(offer.gameId, offer.kind, accept).then(() => undefined, moot);
    }
  };
  const KIND: Record<string, string> = { challenge: "challenge", gameStarted: "game_started", offer: "offer", presence: "presence" };
  // With --follow, the player is followed once the stream is live: no change of theirs is missed.
  let live = (): void => undefined;
  const ready = new Promise<void>((resolve) => (live = resolve));
  const reading = (async (): Promise<number> => {
    for await (const event of client.watchMyEvents({ signal: stop.signal, onReady: () => live() })) {
      const changed = presenceOf(event);
      const line: Record<string, string | null> = { event_id: event.eventId, kind: KIND[event.kind.case ?? ""] ?? null };
      if (changed !== undefined) {
        line.username = changed.player?.username ?? "";
        line.state = STATES[changed.presence?.state ?? social.PresenceState.UNSPECIFIED] ?? "unknown";
        line.game_id = changed.presence?.gameId ?? "";
      }
      process.stdout.write(`${JSON.stringify(line)}\n`);
      if (changed !== undefined && changed.player?.username === options.follow && ++presences >= options.count) finished();
      await serially(() => onEvent(event));
    }
    return 1;
  })();
  try {
    if (options.follow) {
      await Promise.race([ready, reading]);
      await client.follow(options.follow);
    }
    const code = await Promise.race([reading, done.then(() => 0)]);
    await answering;
    return code;
  } finally {
    stop.abort();
    reading.catch(() => undefined);
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      server: { type: "string" },
      token: { type: "string" },
      game: { type: "string" },
      room: { type: "string" },
      watch: { type: "string" },
      resign: { type: "boolean", default: false },
      events: { type: "boolean", default: false },
      count: { type: "string", default: "1" },
      decline: { type: "string", default: "" },
      draw: { type: "string", default: "decline" },
      rematch: { type: "boolean", default: false },
      follow: { type: "string", default: "" },
      chat: { type: "string" },
      say: { type: "string", default: "" },
      tournament: { type: "string" },
      code: { type: "string", default: "" },
    },
  });
  if (!values.server || !values.token || !values.game || !(values.room || values.watch || values.events || values.chat || values.tournament) || !["accept", "decline"].includes(values.draw ?? "")) {
    process.stderr.write(
      "usage: client.js --server HOST:PORT --token TOKEN --game GAME (--room CODE [--resign] | --watch GAME_ID |\n" +
        "       --events [--count N] [--decline REASON] [--draw accept|decline] [--rematch] [--follow NAME] |\n" +
        "       --chat GAME_ID [--say TEXT] [--count N] | --tournament ID [--code CODE] [--count N])\n",
    );
    return 64;
  }
  const client = new TafelClient(createNativeTransport(values.server));
  client.session = create(play.SessionSchema, { token: values.token });
  try {
    if (values.events) {
      const options = { count: Number(values.count), decline: values.decline ?? "", draw: values.draw as "accept" | "decline", rematch: values.rematch ?? false, follow: values.follow ?? "" };
      return await follow(client, values.game, options);
    }
    if (values.chat) return await chat(client, values.chat, values.say ?? "", Number(values.count));
    if (values.tournament) return await playTournament(client, values.game, values.tournament, values.code ?? "", Number(values.count));
    return values.watch ? await watch(client, values.watch) : await playRoom(client, values.game, values.room ?? "", values.resign ?? false);
  } catch (error) {
    if (error instanceof Unavailable) {
      process.stderr.write(`gave up: ${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    client.close();
  }
}

process.exitCode = await main();
