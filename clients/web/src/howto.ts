// "How to play" (#/howto/GAME): the game's article for players (games/*.ts, from the rule sheets,
// with drawn examples), reachable from the lobby and from inside a game; at its foot the link to the
// full rules page (docs/rules/, in the player's language).
import { h, mount } from "./dom.js";
import { gameUi } from "./games/index.js";
import { t } from "./i18n.js";
import { rulesLinkAfter } from "./rules-link.js";
import type { TafelClient } from "./sdk.js";

export function howToPage(root: HTMLElement, game: string, client: TafelClient): void {
  const ui = gameUi(game);
  const lobby = h("a", { href: "#/", class: "back" }, t("howto.back"));
  if (ui === undefined) {
    mount(root, h("section", { class: "howto" }, h("h2", {}, t("howto.title")), h("p", { class: "message", role: "alert" }, t("howto.noGame")), h("p", { class: "howto-nav" }, lobby)));
    return;
  }
  mount(root, h("article", { class: "howto", "data-game": game }, h("h2", {}, t("howto.titleOf", { game: ui.title })), ui.howTo(), h("p", { class: "howto-nav" }, lobby, rulesLinkAfter(client, game, " · "))));
  window.scrollTo(0, 0);
}
