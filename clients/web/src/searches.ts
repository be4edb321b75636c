// "Your open correspondence searches" in the lobby: a search for a days-long game outlives
// the page that started it (LobbyService.ListMySearches), for a week at most; each has a cancel
// button (CancelSearch). Shown only while there is one. A search paired while the player was away
// starts its game, which then shows under My games (and comes as a notice).
import { clockLabel, controlSeconds } from "./clock.js";
import { h, mount } from "./dom.js";
import { titleOf } from "./games/index.js";
import { formatDateTime, t } from "./i18n.js";
import { explain } from "./say.js";
import type { TafelClient, play } from "./sdk.js";
import { timestampMs } from "./time.js";

/** The section; `refresh()` reads the list again (after a search starts or is left). */
export function searchesSection(client: TafelClient, signal: AbortSignal): { section: HTMLElement; refresh: () => void } {
  const list = h("ul", { class: "searches" });
  const status = h("p", { class: "message", role: "alert" });
  const section = h("section", { class: "open-searches", hidden: true, "aria-labelledby": "open-searches-title" }, h("h2", { id: "open-searches-title" }, t("lobby.searches")), status, list);

  const line = (search: play.WaitingSearch): HTMLElement => {
    const game = titleOf(search.game);
    const cancel = h("button", { type: "button", class: "cancel-search", "aria-label": t("lobby.cancelSearchOf", { game }) }, t("lobby.cancelSearch"));
    cancel.addEventListener("click", () => {
      cancel.disabled = true;
      status.textContent = "";
      client.cancelSearch(search.game).then((answer) => {
        // Paired meanwhile: the game started (not undone); it is listed under My games.
        if (!answer.cancelled && answer.gameId) status.textContent = t("lobby.searchPaired", { game });
        refresh();
      }, (error: unknown) => {
        cancel.disabled = false;
        if (!signal.aborted) status.textContent = explain(error);
      });
    });
    const since = formatDateTime(timestampMs(search.queuedAt) ?? 0);
    const until = formatDateTime(timestampMs(search.expiresAt) ?? 0);
    return h("li", { "data-game": search.game }, h("span", { class: "what" }, `${game} · ${clockLabel(controlSeconds(search.timeControl))}`), " ", h("span", { class: "when" }, t("lobby.searchSince", { since, until })), " ", cancel);
  };

  const refresh = (): void => {
    client.listMySearches().then((searches) => {
      if (signal.aborted) return;
      section.hidden = searches.length === 0 && !status.textContent;
      mount(list, ...searches.map(line));
    }, (error: unknown) => {
      if (!signal.aborted) status.textContent = explain(error);
    });
  };
  refresh();
  return { section, refresh };
}
