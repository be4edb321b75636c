// "How to play" (#/howto/GAME): the game's article for players (games/*.ts, from the rule sheets,
// with drawn examples), reachable from the lobby and from inside a game; the technical rules for
// client authors stay in docs/rules/.
import { h, mount } from "./dom.js";
import { gameUi } from "./games/index.js";
import { t } from "./i18n.js";

export function howToPage(root: HTMLElement, game: string): void {
  const ui = gameUi(game);
  const back = h("p", { class: "howto-nav" }, h("a", { href: "#/", class: "back" }, t("howto.back")));
  if (ui === undefined) {
    mount(root, h("section", { class: "howto" }, h("h2", {}, t("howto.title")), h("p", { class: "message", role: "alert" }, t("howto.noGame")), back));
    return;
  }
  mount(root, h("article", { class: "howto", "data-game": game }, h("h2", {}, t("howto.titleOf", { game: ui.title })), ui.howTo(), back));
  window.scrollTo(0, 0);
}
