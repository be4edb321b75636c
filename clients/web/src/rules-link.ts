// The link to a game's rules page in the player's language. The pages are docs/rules/ rendered by
// rules.mjs into dist/rules/ and served beside the app: <page>.html in English, <page>.nl.html and
// <page>.de.html, with index.json listing the languages each page has. The page's name is the base
// name of the game's rulesUrl in the catalogue ("docs/rules/connect-four.md" -> "connect-four"),
// so a game added to the catalogue with its pages needs nothing here.
//   rulesLink(client, "connect4")  or  rulesLink(client, gameType)   (also on the game page)
import { h } from "./dom.js";
import { lang, t, type Lang } from "./i18n.js";
import type { play, TafelClient } from "./sdk.js";

/** "docs/rules/connect-four.md" (or a URL ending so) -> "connect-four"; undefined for none. */
export function rulesPage(rulesUrl: string): string | undefined {
  const base = rulesUrl.split(/[?#]/)[0]?.split("/").pop() ?? "";
  const page = base.replace(/(\.(nl|de))?\.(md|html)$/, "");
  return /^[\w-]+$/.test(page) ? page : undefined;
}

/** The page's address in a language: relative to the app's own page, which the rules sit beside. */
export function rulesHref(page: string, l: Lang = lang()): string {
  return l === "en" ? `rules/${page}.html` : `rules/${page}.${l}.html`;
}

let languages: Promise<Record<string, string[]>> | undefined;
let catalogue: Promise<play.GameType[]> | undefined;

/** index.json, read once: { "connect-four": ["en", "nl", "de"], ... }; {} when it cannot be read. */
function listed(): Promise<Record<string, string[]>> {
  languages ??= fetch("rules/index.json")
    .then((r) => (r.ok ? (r.json() as Promise<Record<string, string[]>>) : {}))
    .catch(() => ({}));
  return languages;
}

/** "Rules" / "Spelregels" / "Spielregeln", leading to the game's page in the player's language (in
 * English where that language's page is missing). Hidden until the game's page is known (the
 * catalogue is read once when only the game's name is given; it needs no sign-in). */
export function rulesLink(client: TafelClient, game: string | play.GameType, options: { newTab?: boolean } = {}): HTMLAnchorElement {
  return linked(client, game, options).link;
}

/** The link after a separator (" · "), both hidden while there is no page to link: a line of links
 * never ends in a dangling separator. The two stay siblings in the caller's line (no wrapper), so
 * the link is still a link inside a sentence there. */
export function rulesLinkAfter(client: TafelClient, game: string | play.GameType, separator: string, options: { newTab?: boolean } = {}): DocumentFragment {
  const { link, wrap } = linked(client, game, options, separator);
  const both = document.createDocumentFragment();
  both.append(wrap, link);
  return both;
}

function linked(client: TafelClient, game: string | play.GameType, options: { newTab?: boolean }, separator = ""): { link: HTMLAnchorElement; wrap: HTMLElement } {
  const name = typeof game === "string" ? game : game.game;
  const link = h("a", { class: "rules-link", hidden: true, "data-game": name }, t("rules.link"));
  const wrap = h("span", { class: "rules-link-sep", hidden: true }, separator);
  if (options.newTab) {
    link.target = "_blank";
    link.rel = "noopener";
  }
  const type =
    typeof game === "string"
      ? (catalogue ??= client.gameTypes().catch((error: unknown) => {
          catalogue = undefined; // asked again next time
          throw error;
        })).then((types) => types.find((x) => x.game === game))
      : Promise.resolve(game);
  void type
    .then((found) => {
      const page = rulesPage(found?.rulesUrl ?? "");
      if (page === undefined) return;
      const show = (l: Lang): void => {
        link.href = rulesHref(page, l);
        link.hreflang = l;
        link.hidden = false;
        wrap.hidden = false;
      };
      show(lang());
      // A language whose page is missing falls back to English (index.json says which exist).
      void listed().then((have) => {
        const langs = have[page];
        if (langs !== undefined && !langs.includes(lang())) show("en");
      });
    })
    .catch(() => undefined); // no catalogue: no link, the page works on
  return { link, wrap };
}
