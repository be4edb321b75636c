// The lobby: every game of the catalogue (ListGameTypes) with its options, and the ways to start
// one: find a match (wait shown, cancel), a private room with an invite link, a bot of level 1-3,
// solo. Options are built from the catalogue's specs, never hard-coded.
import { fromJson } from "@bufbuild/protobuf";
import { h, mount } from "./dom.js";
import { TafelError, games, type TafelClient, type play } from "./sdk.js";
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
      input = h("select", { name: spec.name }, ...c.choices.map((choice) => h("option", { value: choice, selected: choice === c.defaultValue }, choice.includes("_") ? choice.replace(/^[A-Z]+_/, "").toLowerCase().replaceAll("_", " ") : choice)));
    } else {
      const r = spec.values.value;
      input = h("input", { type: "number", name: spec.name, min: Number(r?.minimum ?? 0), max: Number(r?.maximum ?? 0), value: Number(r?.defaultValue ?? 0) });
    }
    const only = spec.maxSeats > 0 ? ` (${spec.maxSeats === 1 ? "solo" : `up to ${spec.maxSeats} players`} only)` : "";
    return h("label", { title: spec.description }, `${spec.name.replaceAll("_", " ")}${only} `, input, h("small", { class: "hint" }, spec.description));
  });
}

export function lobbyPage(root: HTMLElement, client: TafelClient, go: (hash: string) => void, signal: AbortSignal): void {
  const status = h("p", { class: "message", role: "alert" });
  const list = h("div", { class: "games" }, "Loading the games…");
  const live = h("ul", { class: "live" });
  const mine = h("ul", { class: "mine" });
  mount(root, h("section", { class: "lobby" }, h("h2", {}, "Play"), status, list, h("h2", {}, "Live games"), live, h("h2", {}, "My games"), mine));

  const fail = (error: unknown): void => {
    status.textContent = error instanceof TafelError ? error.detail : String(error);
  };

  const card = (type: play.GameType): HTMLElement => {
    const seats = h("select", { name: "seats" }, ...Array.from({ length: type.maxSeats - Math.max(type.minSeats, 2) + 1 }, (_, i) => h("option", { value: Math.max(type.minSeats, 2) + i }, `${Math.max(type.minSeats, 2) + i} players`)));
    const form = h("form", { class: "game-card", "data-game": type.game }, h("h3", {}, type.title), h("p", {}, `${type.minSeats === type.maxSeats ? type.minSeats : `${type.minSeats}–${type.maxSeats}`} players · `, h("a", { href: type.rulesUrl, target: "_blank" }, "rules")), ...optionInputs(type), h("label", {}, "Table ", seats));
    form.addEventListener("submit", (e) => e.preventDefault());
    const count = (): number => Number(seats.value);
    const button = (label: string, action: () => Promise<void>, cls: string): HTMLButtonElement => {
      const b = h("button", { type: "button", class: cls }, label);
      b.addEventListener("click", () => {
        status.textContent = "";
        action().catch(fail);
      });
      return b;
    };
    const wait = h("p", { class: "wait", hidden: true });
    const find = button("Find a match", async () => {
      const abort = new AbortController();
      signal.addEventListener("abort", () => abort.abort());
      const cancel = h("button", { type: "button", class: "cancel" }, "Cancel");
      cancel.addEventListener("click", () => abort.abort());
      const started = Date.now();
      const tick = setInterval(() => (wait.firstChild!.textContent = `Looking for opponents… ${Math.round((Date.now() - started) / 1000)} s `), 500);
      mount(wait, h("span", {}, "Looking for opponents… 0 s "), cancel);
      wait.hidden = false;
      try {
        const n = count();
        for await (const update of client.findMatchUpdates(type.game, { options: optionsFor(type, form, n), minSeats: n, maxSeats: n, signal: abort.signal })) {
          if (update.status.case === "matched") go(`#/game/${update.status.value.gameId}`);
        }
      } catch (error) {
        if (!abort.signal.aborted) throw error;
      } finally {
        clearInterval(tick);
        wait.hidden = true;
      }
    }, "find");
    const room = button("Create a private room", async () => {
      const created = await client.createRoom(type.game, { options: optionsFor(type, form, count()), seats: count() });
      go(`#/room/${created.code}`);
    }, "room");
    const bots = [1, 2, 3].map((level) =>
      button(`Play a bot (level ${level})`, async () => {
        const created = await client.createRoom(type.game, { options: optionsFor(type, form, 2), seats: 2 });
        await client.requestBot(created.code, level);
        const started = await client.waitRoomStarted(created.code, signal);
        go(`#/game/${started.gameId}`);
      }, `bot bot-${level}`),
    );
    const solo =
      type.minSeats === 1
        ? button("Play solo", async () => {
            const created = await client.createRoom(type.game, { options: optionsFor(type, form, 1), seats: 1 });
            const started = created.gameId ? created : await client.waitRoomStarted(created.code, signal);
            go(`#/game/${started.gameId}`);
          }, "solo")
        : undefined;
    form.append(h("div", { class: "actions" }, find, room, ...(type.maxSeats >= 2 ? bots : []), solo), wait);
    return form;
  };

  client.gameTypes().then((types) => mount(list, ...types.map(card)), fail);
  client.listLiveGames().then((response) => {
    mount(live, ...response.games.map((g) => h("li", {}, h("a", { href: `#/game/${g.gameId}`, class: "watch" }, `${g.game}: ${g.players.map((p) => p.player?.username).join(" vs ")}`))));
    if (response.games.length === 0) mount(live, h("li", {}, "No live games right now."));
  }, fail);
  client.listMyGames().then((response) => {
    if (response.games.length === 0) return mount(mine, h("li", {}, "No games yet."));
    mount(
      mine,
      ...response.games.map((g) =>
        h("li", {}, h("a", { href: g.status?.over ? `#/replay/${g.gameId}` : `#/game/${g.gameId}` }, `${g.game}: ${g.players.map((p) => p.player?.username).join(" vs ")} · ${g.status?.over ? "finished" : "in play"} · ${new Date(timestampMs(g.createdAt) ?? 0).toLocaleString()}`)),
      ),
    );
  }, fail);
}
