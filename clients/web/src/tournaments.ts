// Tournaments: the list and a form to create one (#/tournaments), and one tournament's page
// (#/tournament/ID): join, leave, start, the standings, the pairings of each round and the live
// games of the round, updated by themselves from WatchTournament. A player whose game has started is
// told so at the top (their clock is running), and the game's page links back here. Players also
// see round times, a director's pause, corrections and announcements, and enter an invitation code
// when one is needed; a director gets the director's tools (directing.ts); an arena shows its time
// left, live standings with streaks and the player's pause / come back (arena.ts).
import { fromJson } from "@bufbuild/protobuf";
import { arenaClock, arenaControls, arenaEnd, arenaLength, arenaStandings, currentArenaGame, firstOpening, pairsMe } from "./arena.js";
import { chatChannel, chatPane } from "./chat.js";
import { directorPanel, type DirectorPanel } from "./directing.js";
import { clockOptions, timeControlInit } from "./clock.js";
import { h, mount } from "./dom.js";
import { nameLink, nameList, nameOf } from "./names.js";
import { reconnectingIn, untilLanded } from "./retry.js";
import { titleOf } from "./games/index.js";
import { formatDateTime, formatNumber, t as tr } from "./i18n.js";
import { versus } from "./lobby.js";
import { explain } from "./say.js";
import { games, social, tournaments, type TafelClient } from "./sdk.js";
import { timestampMs } from "./time.js";

const { TournamentFormat, TournamentState, TournamentGameState } = tournaments;

// A round's game state as a sentence part ("being played"); the data-state attribute keeps the
// enum's word for tests and styles.
const STATE_WORDS: Record<number, string> = {
  [TournamentGameState.PLAYING]: tr("tournament.gameState.playing"),
  [TournamentGameState.FINISHED]: tr("tournament.gameState.finished"),
  [TournamentGameState.BYE]: tr("tournament.gameState.bye"),
  [TournamentGameState.FORFEITED]: tr("tournament.gameState.forfeited"),
  [TournamentGameState.CORRECTED]: tr("directing.gameState.corrected"),
  [TournamentGameState.ABORTED]: tr("directing.gameState.aborted"),
};

/** An enum's name as a word for data attributes and tests ("ROUND_ROBIN" → "round robin"). */
function enumWord(name: string | undefined): string {
  return (name ?? "").toLowerCase().replaceAll("_", " ");
}

/** A format or state in the player's language ("round robin" → "Jeder gegen jeden"). */
function formatWords(format: number): string {
  const word = enumWord(TournamentFormat[format]).replaceAll(" ", "_");
  return word ? tr(`tournament.format.${word}`, { defaultValue: enumWord(TournamentFormat[format]) }) : "";
}

function stateWords(state: number): string {
  const word = enumWord(TournamentState[state]).replaceAll(" ", "_");
  return word ? tr(`tournament.state.${word}`, { defaultValue: enumWord(TournamentState[state]) }) : "";
}

export function tournamentsPage(root: HTMLElement, client: TafelClient, go: (hash: string) => void, signal: AbortSignal): void {
  const list = h("ul", { class: "tournament-list" });
  const message = h("p", { class: "message", role: "alert" });
  const game = h("select", { name: "game" });
  const format = h("select", { name: "format" }, ...[TournamentFormat.ROUND_ROBIN, TournamentFormat.SWISS, TournamentFormat.KNOCKOUT, TournamentFormat.TABLES, TournamentFormat.ARENA].map((f) => h("option", { value: f }, formatWords(f))));
  const name = h("input", { name: "name", value: tr("tournament.defaultName"), required: true });
  const rounds = h("input", { name: "rounds", type: "number", min: 0, value: 0 });
  const capacity = h("input", { name: "capacity", type: "number", min: 2, max: 16384, value: 8 });
  const starts = h("input", { name: "starts", type: "datetime-local" });
  const rated = h("input", { name: "rated", type: "checkbox" });
  // An arena lasts a fixed time instead of a number of rounds (5 minutes to 24 hours).
  const minutes = h("input", { name: "arenaMinutes", type: "number", min: 5, max: 1440, value: 30 });
  const arenaOnly = h("label", { class: "arena-only", hidden: true }, tr("arena.minutesLabel"), " ", minutes);
  const clock = h("select", { name: "clock", class: "clock-choice" }, ...clockOptions(60));
  const form = h(
    "form",
    { class: "create-tournament" },
    h("h3", {}, tr("tournament.create")),
    h("label", {}, tr("tournament.name"), " ", name),
    h("label", {}, tr("tournament.game"), " ", game),
    h("label", {}, tr("tournament.formatLabel"), " ", format),
    h("label", { class: "rounds-only" }, tr("tournament.roundsLabel"), " ", rounds),
    arenaOnly,
    h("label", {}, tr("tournament.capacity"), " ", capacity),
    h("label", {}, tr("tournament.startsLabel"), " ", starts),
    h("label", {}, tr("lobby.clock"), " ", clock),
    h("label", {}, rated, ` ${tr("tournament.ratedLabel")}`),
    h("button", { type: "submit", class: "create" }, tr("tournament.createButton")),
  );
  mount(root, h("section", { class: "tournaments" }, h("h2", {}, tr("nav.tournaments")), list, form, message));
  const fail = (error: unknown): void => {
    if (!signal.aborted) message.textContent = explain(error);
  };
  format.addEventListener("change", () => {
    const arena = Number(format.value) === TournamentFormat.ARENA;
    arenaOnly.hidden = !arena;
    (rounds.closest("label") as HTMLElement).hidden = arena;
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const arena = Number(format.value) === TournamentFormat.ARENA;
    const startsAt = starts.value ? new Date(starts.value).getTime() : undefined;
    client
      .createTournament({
        name: name.value,
        game: game.value,
        format: Number(format.value),
        rounds: Number(rounds.value),
        capacity: Number(capacity.value),
        rated: rated.checked,
        timeControl: timeControlInit(Number(clock.value)),
        startsAt: startsAt === undefined ? undefined : { seconds: BigInt(Math.floor(startsAt / 1000)), nanos: 0 },
        options: fromJson(games.GameOptionsSchema, { [game.value]: {} }),
        arenaDuration: arena ? { seconds: BigInt(Number(minutes.value) * 60), nanos: 0 } : undefined,
      })
      .then((t) => go(`#/tournament/${t.tournamentId}`), fail);
  });
  client.gameTypes().then((types) => mount(game, ...types.map((t) => h("option", { value: t.game }, titleOf(t.game)))), fail);
  client.listTournaments().then((all) => {
    mount(list, ...all.map((t) => h("li", {}, h("a", { href: `#/tournament/${t.tournamentId}`, "data-id": t.tournamentId }, t.name), ` · ${titleOf(t.game)} · ${formatWords(t.format)} · ${stateWords(t.state)} · ${tr("tournament.places", { count: t.capacity, n: formatNumber(t.playerCount || t.players.length) })}`)));
    if (all.length === 0) mount(list, h("li", {}, tr("tournament.none")));
  }, fail);
}

export function tournamentPage(root: HTMLElement, client: TafelClient, id: string, signal: AbortSignal): void {
  const title = h("h2", {}, tr("tournament.title"));
  const info = h("p", { class: "tournament-info" });
  // What a player needs to know beyond the format: entry conditions, registration, round times,
  // a director's pause or early end.
  const facts = h("ul", { class: "tournament-facts" });
  const arenaBox = h("div", { class: "arena-box", hidden: true });
  const players = h("ul", { class: "tournament-players" });
  const controls = h("div", { class: "actions" });
  const yourGame = h("p", { class: "your-game", role: "alert", hidden: true });
  const standings = h("table", { class: "standings" });
  const rounds = h("div", { class: "rounds" });
  const roundsTitle = h("h3", {}, tr("tournament.rounds"));
  // Announcements and corrections, newest first, from the tournament's events (all of them on
  // opening the page, then live); read out politely as they come.
  const news = h("ul", { class: "tournament-news", "aria-live": "polite" });
  const newsBox = h("section", { class: "news-box", hidden: true, "aria-labelledby": "news-title" }, h("h3", { id: "news-title" }, tr("directing.news")), news);
  const code = h("input", { name: "invitationCode", autocomplete: "off", maxlength: 32 });
  const codeLabel = h("label", { class: "invitation" }, tr("directing.enterCode"), " ", code);
  const directing = h("div", { class: "directing" });
  const message = h("p", { class: "message", role: "alert" });
  mount(root, h("section", { class: "tournament" }, title, info, facts, arenaBox, yourGame, newsBox, controls, message, h("h3", {}, tr("tournament.players")), players, h("h3", {}, tr("tournament.standings")), h("div", { class: "table-wrap", tabindex: 0, role: "region", "aria-label": tr("tournament.standings") }, standings), roundsTitle, rounds, directing, chatPane(client, chatChannel(social.ChatChannelKind.TOURNAMENT, id), { title: tr("tournament.chat"), about: tr("tournament.chatAbout"), readOnly: tr("tournament.chatReadOnly") }, signal)));
  const fail = (error: unknown): void => {
    if (!signal.aborted) message.textContent = explain(error);
  };
  const reconnecting = reconnectingIn(message);
  const me = client.player.playerId;
  const act = (label: string, cls: string, call: () => Promise<unknown>): HTMLButtonElement =>
    h("button", { type: "button", class: cls, onclick: () => void call().then(() => { message.textContent = ""; return refresh(); }, fail) }, label);
  let panel: DirectorPanel | undefined;
  let clockFor: number | undefined;
  let clockStop: AbortController | undefined;

  const describe = (t: tournaments.Tournament): (HTMLElement | undefined)[] => {
    const at = (stamp: { seconds: bigint; nanos: number } | undefined): string => formatDateTime(timestampMs(stamp) ?? 0);
    const entry = t.entry;
    return [
      t.paused ? h("li", { class: "paused-note" }, tr("directing.pausedNote")) : undefined,
      t.terminated ? h("li", { class: "terminated-note" }, tr("directing.terminatedNote")) : undefined,
      entry?.minRating ? h("li", {}, tr("directing.needsRating", { n: formatNumber(entry.minRating) })) : undefined,
      entry?.minRatedGames ? h("li", {}, tr("directing.needsGames", { count: entry.minRatedGames, n: formatNumber(entry.minRatedGames) })) : undefined,
      entry?.invitationRequired ? h("li", {}, tr("directing.needsCode")) : undefined,
      t.registrationOpensAt ? h("li", {}, tr("directing.registrationOpens", { when: at(t.registrationOpensAt) })) : undefined,
      t.registrationClosesAt ? h("li", {}, tr("directing.registrationCloses", { when: at(t.registrationClosesAt) })) : undefined,
      t.lateJoinUntilRound ? h("li", {}, tr("directing.lateJoinUntil", { n: t.lateJoinUntilRound })) : undefined,
      ...t.roundStartTimes.map((stamp, i) => h("li", { class: "round-time" }, tr("directing.roundStarts", { n: i + 2, when: at(stamp) }))),
      t.manualRounds ? h("li", {}, tr("directing.manualNote")) : undefined,
      t.nextRoundAt ? h("li", { class: "next-round-at" }, tr("directing.nextRoundAt", { when: at(t.nextRoundAt) })) : undefined,
      t.invitationCode ? h("li", {}, tr("directing.codeIs", { code: t.invitationCode })) : undefined,
    ];
  };

  const refresh = async (): Promise<void> => {
    const [t, table] = await Promise.all([client.getTournament(id), client.standings(id)]);
    const arena = t.format === TournamentFormat.ARENA;
    title.textContent = t.name;
    const starts = timestampMs(t.startsAt);
    // Rounds are 0 until the tournament starts (then the format and the players decide them).
    const roundsText = arena ? arenaLength(t) : t.rounds > 0 ? (t.currentRound ? tr("tournament.roundOf", { n: t.currentRound, total: t.rounds }) : tr("tournament.roundCount", { count: t.rounds })) : tr("tournament.roundsLater");
    mount(info, `${titleOf(t.game)} · ${formatWords(t.format)} · ${stateWords(t.state)} · ${roundsText}${starts ? ` · ${tr("tournament.starts", { when: formatDateTime(starts) })}` : ""}${t.rated ? ` · ${tr("tournament.rated")}` : ""} · ${tr("tournament.organisedBy")} `, nameLink(t.organiser, ""));
    info.dataset.state = enumWord(TournamentState[t.state]);
    info.dataset.paused = t.paused ? "true" : "false";
    mount(facts, ...describe(t));
    mount(players, ...t.players.map((p) => h("li", {}, nameLink(p), p.playerId === me ? ` ${tr("tournament.you")}` : "")));
    const joined = t.players.some((p) => p.playerId === me);
    const registering = t.state === TournamentState.REGISTERING;
    // Swiss late join: players may still come in while the current round is at most this one.
    const lateJoin = t.state === TournamentState.RUNNING && t.lateJoinUntilRound > 0 && t.currentRound <= t.lateJoinUntilRound;
    const canJoin = (registering || lateJoin || (arena && t.state === TournamentState.RUNNING)) && !joined;
    const mineStanding = table.standings.find((s) => s.player?.playerId === me);
    mount(
      controls,
      canJoin && t.entry?.invitationRequired ? codeLabel : undefined,
      canJoin ? act(tr("tournament.join"), "join", () => client.joinTournament(id, code.value.trim())) : undefined,
      registering && joined ? act(tr("tournament.leave"), "leave", () => client.leaveTournament(id)) : undefined,
      registering && (t.organiser?.playerId === me || t.canDirect) ? act(tr("tournament.start"), "start", () => client.startTournament(id)) : undefined,
      arena && joined ? arenaControls(client, t, mineStanding, () => void refresh(), fail) : undefined,
    );
    arenaBox.hidden = !arena;
    roundsTitle.hidden = arena;
    rounds.hidden = arena;
    const ends = arenaEnd(t);
    if (arena && clockFor !== ends) {
      clockStop?.abort();
      clockStop = new AbortController();
      signal.addEventListener("abort", () => clockStop?.abort(), { once: true });
      clockFor = ends;
      mount(arenaBox, arenaClock(ends, clockStop.signal));
    }
    if (arena) {
      arenaStandings(standings, table.standings, me);
    } else {
      mount(
        standings,
        h("tr", {}, h("th", {}, "#"), ...["player", "points", "games", "wins", "draws", "losses"].map((c) => h("th", {}, tr(`tournament.column.${c}`))), h("th", { class: "tie-break", title: tr("tournament.buchholzTitle") }, tr("tournament.buchholz")), h("th", { class: "tie-break", title: tr("tournament.sonnebornBergerTitle") }, tr("tournament.sonnebornBerger"))),
        ...table.standings.map((s) => h("tr", { class: s.player?.playerId === me ? "me" : "" }, h("td", {}, formatNumber(s.rank)), h("td", {}, nameLink(s.player, ""), s.banned ? ` ${tr("directing.banned")}` : s.withdrawn ? ` ${tr("tournament.withdrawn")}` : ""), h("td", {}, formatNumber(s.points)), h("td", {}, formatNumber(s.games)), h("td", {}, formatNumber(s.wins)), h("td", {}, formatNumber(s.draws)), h("td", {}, formatNumber(s.losses)), h("td", {}, formatNumber(s.buchholz)), h("td", {}, formatNumber(s.sonnebornBerger)))),
      );
    }
    if (t.canDirect) {
      if (panel === undefined) {
        panel = directorPanel(client, id, () => void redraw(), signal);
        mount(directing, panel.element);
      }
      await panel.update(t, table.standings);
    }
    const sections: HTMLElement[] = [];
    let playing: { round: number; gameId: string } | undefined;
    if (arena && joined) {
      const current = await currentArenaGame(client, id, me);
      if (current !== undefined) playing = { round: 0, gameId: current.gameId };
    }
    for (let n = 1; !arena && n <= t.currentRound; n++) {
      const round = (await client.tournaments.getRound({ tournamentId: id, round: n }, { headers: client.headers() })).round;
      if (round === undefined) continue;
      sections.push(
        h(
          "div",
          { class: "round", "data-round": n },
          h("h4", {}, tr(round.finished ? "tournament.roundFinished" : "tournament.round", { n })),
          h(
            "ul",
            {},
            ...round.games.map((g) => {
              const mine = g.players.some((p) => p.playerId === me);
              const state = enumWord(TournamentGameState[g.state]);
              const live = g.state === TournamentGameState.PLAYING;
              if (mine && live && g.gameId) playing = { round: n, gameId: g.gameId };
              const link = g.gameId
                ? h("a", { href: live ? `#/game/${g.gameId}/tournament/${id}` : `#/replay/${g.gameId}`, class: mine && live ? "my-game" : "game-link" }, tr(mine && live ? "tournament.playYours" : live ? "tournament.watch" : "tournament.replay"))
                : undefined;
              // A director's decision says so, with their reason, where the result is read.
              const corrected = g.state === TournamentGameState.CORRECTED && g.correctionReason ? h("span", { class: "correction" }, ` (${tr("directing.correctionReason", { reason: g.correctionReason })})`) : undefined;
              return h("li", { "data-state": state }, `${tr("tournament.board", { n: g.board })} `, ...nameList(g.players, versus()), ` · ${STATE_WORDS[g.state] ?? state}${g.points.length ? ` · ${tr("tournament.points", { points: g.points.map((p) => formatNumber(p)).join("–") })}` : ""}`, corrected, " · ", link);
            }),
          ),
        ),
      );
    }
    if (!arena) mount(rounds, ...sections);
    // Told at the top, not found in the list: the game's clock runs from the moment it starts.
    yourGame.hidden = playing === undefined;
    if (playing !== undefined) mount(yourGame, `${playing.round ? tr("tournament.yourGame", { n: playing.round }) : tr("arena.yourGame")} `, h("a", { href: `#/game/${playing.gameId}/tournament/${id}`, class: "play-now" }, tr("tournament.playNow")));
    lastPlaying = playing?.gameId;
  };
  let lastPlaying: string | undefined;
  // Asked again until it lands: a redraw lost to a dropped network would leave the page stale
  // until the tournament's next event.
  const redraw = (): Promise<void> => untilLanded(refresh, signal, reconnecting);

  /** An announcement or a correction as a line of the news box. */
  const tell = (event: tournaments.TournamentEvent): void => {
    const when = formatDateTime(timestampMs(event.at) ?? Date.now());
    let line: HTMLElement | undefined;
    if (event.kind.case === "announcement") {
      const said = event.kind.value;
      line = h("li", { class: "announcement" }, h("strong", {}, tr("directing.announcementFrom", { when })), " ", nameLink(said.director, ""), ": ", said.text);
    } else if (event.kind.case === "resultCorrected") {
      const fixed = event.kind.value;
      const game = fixed.game;
      const result = game ? `${game.players.map((p) => nameOf(p)).join(" – ")}: ${game.points.map((p) => formatNumber(p)).join("–")}` : "";
      line = h("li", { class: "correction" }, h("strong", {}, tr("directing.correctionFrom", { when })), " ", tr(fixed.round ? "directing.correctedLine" : "directing.correctedArenaLine", { round: fixed.round, board: game?.board ?? 0, result, reason: fixed.reason }));
    } else if (event.kind.case === "finished" && event.kind.value.terminated) {
      line = h("li", { class: "terminated" }, tr("directing.terminatedLine", { reason: event.kind.value.reason || "—" }));
    } else if (event.kind.case === "playerLeft" && event.kind.value.byDirector && event.kind.value.player?.playerId === me) {
      line = h("li", { class: "removed" }, tr(event.kind.value.banned ? "directing.youBanned" : "directing.youRemoved", { reason: event.kind.value.reason || "—" }));
    }
    if (line === undefined) return;
    news.prepend(line);
    newsBox.hidden = false;
  };

  void (async () => {
    try {
      await redraw();
      // Every tournament event (a join, a round, a finished game, new standings) redraws the page.
      for await (const event of client.watchTournament(id, { signal })) {
        tell(event);
        await redraw();
        // An arena pairs a free player at once: their game opens by itself while it is played.
        const paired = pairsMe(event, me);
        if (paired !== undefined && paired === lastPlaying && !signal.aborted && firstOpening(paired)) location.hash = `#/game/${paired}/tournament/${id}`;
      }
      await redraw();
    } catch (error) {
      fail(error);
    }
  })();
}
