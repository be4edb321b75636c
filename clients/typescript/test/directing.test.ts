// Directing tournaments on every transport: a director runs a Swiss with an invitation code (refused without
// it), edits it (only the settings given), bans a player, corrects a result, announces once per
// request id, reads the audit log, ends it early (a resend answered as the first) and exports it as
// whole files from the streamed chunks; an arena's player pauses and comes back.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test, type TestContext } from "node:test";
import { TafelClient, tournaments, type TafelError } from "../src/index.js";
import { transportKinds, type TransportKind } from "./platform.js";

const { TournamentFormat, TournamentGameState, TournamentState } = tournaments;

async function players(t: TestContext, kind: TransportKind, count: number): Promise<TafelClient[]> {
  const clients = Array.from({ length: count }, () => new TafelClient(kind.make()));
  t.after(() => clients.forEach((c) => c.close()));
  await Promise.all(clients.map((c) => c.register(`td${randomBytes(5).toString("hex")}`, "correct horse battery")));
  return clients;
}

const refused = (reason: string) => (error: unknown) => (error as TafelError).reason === reason;

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await probe();
    if (answer) return answer;
    if (Date.now() > deadline) throw new Error(`waited in vain for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

for (const kind of transportKinds()) {
  describe(`tournament directing over ${kind.name}`, () => {
    test("a Swiss directed: code, edit, ban, correction, announcement, audit, early end, export", async (t) => {
      const [org, ann, bob, cas] = (await players(t, kind, 4)) as [TafelClient, TafelClient, TafelClient, TafelClient];
      const created = await org.createTournament({
        name: "Club night",
        game: "connect4",
        format: TournamentFormat.SWISS,
        rounds: 2,
        entry: { invitationRequired: true },
        invitationCode: "club-2026",
        manualRounds: true,
      });
      const id = created.tournamentId;
      assert.equal(created.canDirect, true);
      await assert.rejects(ann.joinTournament(id), refused("BAD_INVITATION_CODE"));
      for (const p of [ann, bob, cas]) await p.joinTournament(id, "club-2026");

      const edited = await org.updateTournament(id, { name: "Club night (Friday)", capacity: 6 });
      assert.deepEqual([edited.name, edited.capacity, edited.rounds], ["Club night (Friday)", 6, 2]);
      await assert.rejects(ann.updateTournament(id, { name: "Mine" }), refused("NOT_ORGANISER"));
      await org.removePlayer(id, cas.player.playerId, { ban: true, reason: "two accounts" });
      await assert.rejects(cas.joinTournament(id, "club-2026"), refused("BANNED_FROM_TOURNAMENT"));

      await org.startTournament(id);
      const round = await until("round 1", async () => (await org.tournamentRound(id, 1).catch(() => undefined)));
      const game = round.games.find((g) => g.gameId);
      assert.ok(game);
      const ranks = game.players.map((p) => (p.playerId === ann.player.playerId ? 1 : 2));
      const corrected = await org.correctResult(id, { round: 1, board: game.board }, ranks, "a disputed flag");
      assert.equal(corrected.game?.state, TournamentGameState.CORRECTED);
      assert.equal(corrected.game?.correctionReason, "a disputed flag");
      assert.equal((await ann.standings(id)).standings[0]?.player?.playerId, ann.player.playerId);

      const requestId = `ann${randomBytes(4).toString("hex")}`;
      assert.equal(await org.announce(id, "Round 2 after the break.", { requestId }), 2);
      assert.equal(await org.announce(id, "Round 2 after the break.", { requestId }), 2);
      const actions = (await org.tournamentAudit(id)).map((e) => e.action);
      for (const action of ["UpdateTournament", "RemovePlayer", "CorrectResult", "Announce"]) assert.ok(actions.includes(action), actions.join());

      const ended = await org.terminateTournament(id, "the hall closes");
      assert.equal(ended.state, TournamentState.FINISHED);
      assert.equal((await org.terminateTournament(id, "the hall closes")).terminated, true); // resent: as the first

      const files = await bob.exportTournament(id, "csv");
      assert.deepEqual(files.map((f) => f.name.split("-").at(-1)).sort(), ["games.csv", "pairings.csv", "standings.csv"]);
      const standings = files.find((f) => f.name.endsWith("standings.csv"));
      assert.ok(standings && new TextDecoder().decode(standings.data).includes(ann.player.username));
      const json = await bob.exportTournament(id, "json", ["standings"]);
      assert.equal(json.length, 1);
      assert.ok(JSON.parse(new TextDecoder().decode(json[0]!.data)));
    });

    test("an arena's player pauses and comes back", async (t) => {
      const [org, ann, bob] = (await players(t, kind, 3)) as [TafelClient, TafelClient, TafelClient];
      const arena = await org.createTournament({ name: "Lunch arena", game: "connect4", format: TournamentFormat.ARENA, arenaDuration: { seconds: 300n, nanos: 0 } });
      const id = arena.tournamentId;
      await ann.joinTournament(id);
      await bob.joinTournament(id);
      await assert.rejects(ann.pauseArenaPlay(id, true), refused("NOT_RUNNING")); // not before it starts
      const started = await org.startTournament(id);
      assert.ok(started.endsAt);
      await ann.pauseArenaPlay(id, true);
      const mine = async (paused: boolean) => (await org.standings(id)).standings.find((s) => s.player?.playerId === ann.player.playerId && s.paused === paused);
      await until("ann paused", () => mine(true));
      await ann.pauseArenaPlay(id, false);
      await until("ann back", () => mine(false));
      await org.terminateTournament(id, "lunch is over");
    });
  });
}
