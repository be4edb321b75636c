// The lobby: every game of the catalogue (ListGameTypes) with its options, a clock and the ways to
// start one: find a match (wait shown, cancel), a private room with an invite link, a bot of level
// 1-3 (at a larger table, a bot in every other seat), solo; "how to play" for each; the live games (watch) and my games (replay). Options are
// built from the catalogue's specs, never hard-coded.
import { fromJson } from "@bufbuild/protobuf";
import { openChallengesSection } from "./challenges.js";
import { chosenClock, clockSelect, clockText, timeControlOf } from "./clock.js";
import { h, mount } from "./dom.js";
import { friendsBox } from "./friends.js";
import { nameList, nameOf } from "./names.js";
import { titleOf } from "./games/index.js";
import { choiceLabel, optionHelp, optionLabel, optionSeats } from "./games/options.js";
import { formatDateTime, t } from "./i18n.js";
import { explain } from "./say.js";
import { games, type TafelClient, type play } from "./sdk.js";
import { rulesLinkAfter } from "./rules-link.js";
import { searchesSection } from "./searches.js";
import { optionsJson, startGame, type Plan } from "./start.js";
import { timestampMs } from "./time.js";

function optionsFor(type: play.GameType, form: HTMLFormElement, seats: number): games.GameOptions {
  const values: Record<string, string | number> = {};
  for (const spec of type.options) {
    if (spec.maxSeats > 0 && seats > spec.maxSeats) continue; // e.g. a solo-only target
    const input = form.elements.namedItem(spec.name) as HTMLInputElement | HTMLSelectElement | null;
    if (input === null) continue;
    values[spec.name] = spec.values.case === "integer" ? Number(input.value) : input.value;
  }
  return fromJson(games.GameOptionsSchema, { [type.game]: values });
}

function optionInputs(type: play.GameType): HTMLElement[] {
  return type.options.map((spec) => {
    let input: HTMLElement;
    if (spec.values.case === "choice") {
      const c = spec.values.value;
      input = h("select", { name: spec.name }, ...c.choices.map((choice) => h("option", { value: choice, selected: choice === c.defaultValue }, choiceLabel(type.game, spec.name, choice))));
    } else {
      const r = spec.values.value;
      input = h("input", { type: "number", name: spec.name, min: Number(r?.minimum ?? 0), max: Number(r?.maximum ?? 0), value: Number(r?.defaultValue ?? 0) });
    }
    // The option's words from the game's catalogue (games/options.ts), never the server's English
    // description (written for developers).
    const only = optionSeats(spec.maxSeats);
    const help = optionHelp(type.game, spec.name);
    return h("label", { title: help || undefined }, `${optionLabel(type.game, spec.name)}${only ? ` ${only}` : ""} `, input, help ? h("small", { class: "hint" }, help) : undefined);
  });
}

/** "Connect Four: Jörg de Vries vs Bot (level 2)". */
export function gameLine(game: string, players: play.SeatedPlayer[]): string {
  return `${titleOf(game)}: ${players.map((p) => nameOf(p.player, t("name.seat", { n: p.seat + 1 }))).join(versus())}`;
}

/** " vs " between players' names, in the player's language. */
export function versus(): string {
  return ` ${t("lobby.vs")} `;
}

export function lobbyPage(root: HTMLElement, client: TafelClient, go: (hash: string) => void, signal: AbortSignal): void {
  const status = h("p", { class: "message", role: "alert" });
  const list = h("div", { class: "games" }, t("lobby.loadingGames"));
  const live = h("ul", { class: "live" });
  const mine = h("ul", { class: "mine" });
  const searches = searchesSection(client, signal);
  mount(root, h("section", { class: "lobby" }, friendsBox(client, signal), h("h2", {}, t("lobby.play")), status, list, searches.section, openChallengesSection(client, go, signal), h("h2", {}, t("lobby.live")), live, h("h2", {}, t("lobby.mine")), mine));

  const fail = (error: unknown): void => {
    if (!signal.aborted) status.textContent = explain(error);
  };

  const card = (type: play.GameType): HTMLElement => {
    const least = Math.max(type.minSeats, 2);
    const seats = h("select", { name: "seats" }, ...Array.from({ length: type.maxSeats - least + 1 }, (_, i) => h("option", { value: least + i }, t("lobby.players", { count: least + i }))));
    const clock = clockSelect(type.game);
    const form = h(
      "form",
      { class: "game-card", "data-game": type.game },
      h("h3", {}, titleOf(type.game)),
      h("p", {}, type.minSeats === type.maxSeats ? t("lobby.players", { count: type.minSeats }) : t("lobby.playersRange", { min: type.minSeats, max: type.maxSeats }), " · ", h("a", { href: `#/howto/${type.game}`, class: "howto-link" }, t("lobby.howTo")), rulesLinkAfter(client, type, " · ")),
      ...optionInputs(type),
      type.maxSeats > least ? h("label", {}, t("lobby.table"), " ", seats) : undefined,
      h("label", {}, t("lobby.clock"), " ", clock),
    );
    form.addEventListener("submit", (e) => e.preventDefault());
    const count = (): number => Number(seats.value || least);
    const plan = (how: Plan["how"], level?: number): Plan => {
      const n = how === "solo" ? 1 : count();
      return { game: type.game, how, level, options: optionsJson(optionsFor(type, form, n)), seats: n, perMoveS: Number(clock.value) || chosenClock(type.game) };
    };
    const button = (label: string, action: () => Promise<void>, cls: string): HTMLButtonElement => {
      const b = h("button", { type: "button", class: cls }, label);
      b.addEventListener("click", () => {
        status.textContent = "";
        action().catch(fail);
      });
      return b;
    };
    const wait = h("p", { class: "wait", hidden: true });
    const find = button(t("lobby.find"), async () => {
      const abort = new AbortController();
      signal.addEventListener("abort", () => abort.abort());
      const cancel = h("button", { type: "button", class: "cancel" }, t("lobby.cancel"));
      // A days-long search outlives this page (leaving keeps it queued): Cancel withdraws it.
      const days = timeControlOf(plan("match").perMoveS).daysPerMove !== undefined;
      cancel.addEventListener("click", () => {
        abort.abort();
        if (days) client.cancelSearch(type.game).then(searches.refresh, fail);
      });
      const started = Date.now();
      const tick = setInterval(() => (wait.firstChild!.textContent = `${t("lobby.looking", { seconds: Math.round((Date.now() - started) / 1000) })} `), 500);
      mount(wait, h("span", {}, `${t("lobby.looking", { seconds: 0 })} `), cancel, days ? h("small", { class: "hint" }, t("lobby.searchWaits")) : undefined);
      wait.hidden = false;
      if (days) setTimeout(searches.refresh, 500);
      try {
        const gameId = await startGame(client, plan("match"), abort.signal);
        if (gameId) go(`#/game/${gameId}`);
      } catch (error) {
        if (!abort.signal.aborted) throw error;
      } finally {
        clearInterval(tick);
        wait.hidden = true;
      }
    }, "find");
    const room = button(t("lobby.room"), async () => {
      const n = count();
      const created = await client.createRoom(type.game, { options: optionsFor(type, form, n), seats: n, ...timeControlOf(Number(clock.value)) });
      go(`#/room/${created.code}`);
    }, "room");
    const bots = [1, 2, 3].map((level) => button(t("lobby.bot", { level }), async () => go(`#/game/${await startGame(client, plan("bot", level), signal)}`), `bot bot-${level}`));
    // "Play 3 bots (level 1)" at a table of four: the table size says how many.
    seats.addEventListener("change", () => bots.forEach((b, i) => (b.textContent = count() > 2 ? t("lobby.bots", { count: count() - 1, level: i + 1 }) : t("lobby.bot", { level: i + 1 }))));
    const solo = type.minSeats === 1 ? button(t("lobby.solo"), async () => go(`#/game/${await startGame(client, plan("solo"), signal)}`), "solo") : undefined;
    form.append(h("div", { class: "actions" }, find, room, ...(type.maxSeats >= 2 ? bots : []), solo), wait);
    return form;
  };

  client.gameTypes().then((types) => mount(list, ...types.map(card)), fail);
  client.listLiveGames().then((response) => {
    // The game's title leads to it; each name to its player's profile.
    mount(live, ...response.games.map((g) => h("li", {}, h("a", { href: `#/game/${g.gameId}`, class: "watch", title: t("lobby.watch", { game: gameLine(g.game, g.players) }) }, titleOf(g.game)), ": ", ...nameList(g.players.map((p) => p.player), versus()))));
    if (response.games.length === 0) mount(live, h("li", {}, t("lobby.noLive")));
  }, fail);
  // A days-long game says whose move it is and the time left ("your move, 2 d 5 h left").
  const waiting = (g: play.GameSummary): string => {
    const deadline = timestampMs(g.turnDeadline);
    if (g.status?.over || !g.timeControl?.daysPerMove || deadline === undefined) return "";
    const mine = g.players.filter((p) => p.player?.playerId === client.player.playerId).map((p) => p.seat);
    const left = t("lobby.timeLeft", { time: clockText(deadline - Date.now()) });
    return ` · ${g.status?.toAct.some((seat) => mine.includes(seat)) ? t("lobby.yourMove", { left }) : left}`;
  };
  client.listMyGames().then((response) => {
    if (response.games.length === 0) return mount(mine, h("li", {}, t("lobby.noMine")));
    mount(
      mine,
      ...response.games.map((g) =>
        h("li", {}, h("a", { href: g.status?.over ? `#/replay/${g.gameId}` : `#/game/${g.gameId}`, title: gameLine(g.game, g.players) }, titleOf(g.game)), ": ", ...nameList(g.players.map((p) => p.player), versus()), ` · ${t(g.status?.over ? "lobby.finished" : "lobby.inPlay")}${waiting(g)} · ${formatDateTime(timestampMs(g.createdAt) ?? 0)}`),
      ),
    );
  }, fail);
}
