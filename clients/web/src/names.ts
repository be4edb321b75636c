// A player's name on a page, in one place: every list, seat, table, chat line and friend shows a
// name through nameLink, so every name leads to the player's profile (#/player/USERNAME). The text
// is the SDK's playerName (a bot as "Bot (level N)", else the display name, else the username);
// bots and guests have no profile, so their names stay plain text.
import { h } from "./dom.js";
import { t } from "./i18n.js";
import type { play } from "./sdk.js";

type Shown = Pick<play.Player, "username" | "displayName" | "bot" | "botLevel" | "guest">;

/** A player's name in words: the shown name, else the login name; a bot as "Bot (level 2)" in the
 * player's language; `fallback` for nobody. (The SDK's playerName says bots in English.) */
export function nameOf(player: Pick<play.Player, "username" | "displayName" | "bot" | "botLevel"> | undefined, fallback = t("common:name.someone")): string {
  if (player === undefined) return fallback;
  if (player.bot) return player.botLevel ? t("common:name.botLevel", { level: player.botLevel }) : t("common:name.bot");
  return player.displayName || player.username || fallback;
}

/** The name as a link to the profile (an account), or as plain text (a bot, a guest, nobody).
 * `label` replaces the shown text ("Ben (you)"); `fallback` names a seat without a player. */
export function nameLink(player: Shown | undefined, fallback = t("common:name.someone"), label?: string): HTMLElement {
  const text = label ?? nameOf(player, fallback);
  if (player === undefined || player.bot || player.guest || !player.username) return h("span", { class: "player-plain" }, text);
  const title = player.displayName && player.displayName !== player.username ? t("common:name.profileOfShown", { shown: player.displayName, name: player.username }) : t("common:name.profileOf", { name: player.username });
  return h("a", { class: "player-link", href: profileHref(player.username), "data-player": player.username, title }, text);
}

/** "Ann vs Ben vs Bot (level 2)" as nodes, each name a link. */
export function nameList(players: (Shown | undefined)[], separator: string, fallback = (i: number) => t("common:name.seat", { n: i + 1 })): (Node | string)[] {
  const out: (Node | string)[] = [];
  players.forEach((p, i) => {
    if (i > 0) out.push(separator);
    out.push(nameLink(p, fallback(i)));
  });
  return out;
}

/** "#/player/ben" for a username. */
export function profileHref(username: string): string {
  return `#/player/${encodeURIComponent(username)}`;
}
