// Tournaments: the list and a form to create one (#/tournaments), and one tournament's page
// (#/tournament/ID): join, leave, start, the standings, the pairings of each round and the live
// games of the round, updated by themselves from WatchTournament. A player whose game has started is
// told so at the top (their clock is running), and the game's page links back here.
import { fromJson } from "@bufbuild/protobuf";
import { chatChannel, chatPane } from "./chat.js";
import { clockOptions, timeControlInit } from "./clock.js";
import { h, mount } from "./dom.js";
import { nameLink, nameList } from "./names.js";
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
  const format = h("select", { name: "format" }, ...[TournamentFormat.ROUND_ROBIN, TournamentFormat.SWISS, TournamentFormat.KNOCKOUT, TournamentFormat.TABLES].map((f) => h("option", { value: f }, formatWords(f))));
  const name = h("input", { name: "name", value: tr("tournament.defaultName"), required: true });
  const rounds = h("input", { name: "rounds", type: "number", min: 0, value: 0 });
  const capacity = h("input", { name: "capacity", type: "number", min: 2, value: 8 });
  const starts = h("input", { name: "starts", type: "datetime-local" });
  const rated = h("input", { name: "rated", type: "checkbox" });
  const clock = h("select", { name: "clock", class: "clock-choice" }, ...clockOptions(60));
  const form = h(
    "form",
    { class: "create-tournament" },
    h("h3", {}, tr("tournament.create")),
    h("label", {}, tr("tournament.name"), " ", name),
    h("label", {}, tr("tournament.game"), " ", game),
    h("label", {}, tr("tournament.formatLabel"), " ", format),
    h("label", {}, tr("tournament.roundsLabel"), " ", rounds),
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
  form.addEventListener("submit", (e) => {
    e.preventDefault();
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
      })
      .then((t) => go(`#/tournament/${t.tournamentId}`), fail);
  });
  client.gameTypes().then((types) => mount(game, ...types.map((t) => h("option", { value: t.game }, titleOf(t.game)))), fail);
  client.listTournaments().then((all) => {
    mount(list, ...all.map((t) => h("li", {}, h("a", { href: `#/tournament/${t.tournamentId}`, "data-id": t.tournamentId }, t.name), ` · ${titleOf(t.game)} · ${formatWords(t.format)} · ${stateWords(t.state)} · ${tr("tournament.places", { count: t.capacity, n: formatNumber(t.players.length) })}`)));
    if (all.length === 0) mount(list, h("li", {}, tr("tournament.none")));
  }, fail);
}

export function tournamentPage(root: HTMLElement, client: TafelClient, id: string, signal: AbortSignal): void {
  const title = h("h2", {}, tr("tournament.title"));
  const info = h("p", { class: "tournament-info" });
  const players = h("ul", { class: "tournament-players" });
  const controls = h("div", { class: "actions" });
  const yourGame = h("p", { class: "your-game", role: "alert", hidden: true });
  const standings = h("table", { class: "standings" });
  const rounds = h("div", { class: "rounds" });
  const message = h("p", { class: "message", role: "alert" });
  mount(root, h("section", { class: "tournament" }, title, info, yourGame, controls, h("h3", {}, tr("tournament.players")), players, h("h3", {}, tr("tournament.standings")), h("div", { class: "table-wrap", tabindex: 0, role: "region", "aria-label": tr("tournament.standings") }, standings), h("h3", {}, tr("tournament.rounds")), rounds, message, chatPane(client, chatChannel(social.ChatChannelKind.TOURNAMENT, id), { title: tr("tournament.chat"), about: tr("tournament.chatAbout"), readOnly: tr("tournament.chatReadOnly") }, signal)));
  const fail = (error: unknown): void => {
    if (!signal.aborted) message.textContent = explain(error);
  };
  const reconnecting = reconnectingIn(message);
  const me = client.player.playerId;
  const act = (label: string, cls: string, call: () => Promise<unknown>): HTMLButtonElement =>
    h("button", { type: "button", class: cls, onclick: () => void call().then(() => refresh(), fail) }, label);

  const refresh = async (): Promise<void> => {
    const [t, table] = await Promise.all([client.getTournament(id), client.standings(id)]);
    title.textContent = t.name;
    const starts = timestampMs(t.startsAt);
    // Rounds are 0 until the tournament starts (then the format and the players decide them).
    const roundsText = t.rounds > 0 ? (t.currentRound ? tr("tournament.roundOf", { n: t.currentRound, total: t.rounds }) : tr("tournament.roundCount", { count: t.rounds })) : tr("tournament.roundsLater");
    mount(info, `${titleOf(t.game)} · ${formatWords(t.format)} · ${stateWords(t.state)} · ${roundsText}${starts ? ` · ${tr("tournament.starts", { when: formatDateTime(starts) })}` : ""}${t.rated ? ` · ${tr("tournament.rated")}` : ""} · ${tr("tournament.organisedBy")} `, nameLink(t.organiser, ""));
    info.dataset.state = enumWord(TournamentState[t.state]);
    mount(players, ...t.players.map((p) => h("li", {}, nameLink(p), p.playerId === me ? ` ${tr("tournament.you")}` : "")));
    const joined = t.players.some((p) => p.playerId === me);
    const registering = t.state === TournamentState.REGISTERING;
    mount(
      controls,
      registering && !joined ? act(tr("tournament.join"), "join", () => client.joinTournament(id)) : undefined,
      registering && joined ? act(tr("tournament.leave"), "leave", () => client.leaveTournament(id)) : undefined,
      registering && t.organiser?.playerId === me ? act(tr("tournament.start"), "start", () => client.startTournament(id)) : undefined,
    );
    mount(
      standings,
      h("tr", {}, h("th", {}, "#"), ...["player", "points", "games", "wins", "draws", "losses"].map((c) => h("th", {}, tr(`tournament.column.${c}`))), h("th", { class: "tie-break", title: tr("tournament.buchholzTitle") }, tr("tournament.buchholz")), h("th", { class: "tie-break", title: tr("tournament.sonnebornBergerTitle") }, tr("tournament.sonnebornBerger"))),
      ...table.standings.map((s) => h("tr", { class: s.player?.playerId === me ? "me" : "" }, h("td", {}, formatNumber(s.rank)), h("td", {}, nameLink(s.player, ""), s.withdrawn ? ` ${tr("tournament.withdrawn")}` : ""), h("td", {}, formatNumber(s.points)), h("td", {}, formatNumber(s.games)), h("td", {}, formatNumber(s.wins)), h("td", {}, formatNumber(s.draws)), h("td", {}, formatNumber(s.losses)), h("td", {}, formatNumber(s.buchholz)), h("td", {}, formatNumber(s.sonnebornBerger)))),
    );
    const sections: HTMLElement[] = [];
    let playing: { round: number; gameId: string } | undefined;
    for (let n = 1; n <= t.currentRound; n++) {
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
              return h("li", { "data-state": state }, `${tr("tournament.board", { n: g.board })} `, ...nameList(g.players, versus()), ` · ${STATE_WORDS[g.state] ?? state}${g.points.length ? ` · ${tr("tournament.points", { points: g.points.map((p) => formatNumber(p)).join("–") })}` : ""} · `, link);
            }),
          ),
        ),
      );
    }
    mount(rounds, ...sections);
    // Told at the top, not found in the list: the game's clock runs from the moment it starts.
    yourGame.hidden = playing === undefined;
    if (playing !== undefined) mount(yourGame, `${tr("tournament.yourGame", { n: playing.round })} `, h("a", { href: `#/game/${playing.gameId}/tournament/${id}`, class: "play-now" }, tr("tournament.playNow")));
  };

  void (async () => {
    // Asked again until it lands: a redraw lost to a dropped network would leave the page stale
    // until the tournament's next event.
    const redraw = (): Promise<void> => untilLanded(refresh, signal, reconnecting);
    try {
      await redraw();
      // Every tournament event (a join, a round, a finished game, new standings) redraws the page.
      for await (const event of client.watchTournament(id, { signal })) {
        void event;
        await redraw();
      }
      await redraw();
    } catch (error) {
      fail(error);
    }
  })();
}
