// Leaderboards per game and rating pool (ListLeaderboards, GetLeaderboard), provisional ratings
// marked, and the viewer's own place.
import { h, mount } from "./dom.js";
import { formatNumber, has, t } from "./i18n.js";
import { nameLink } from "./names.js";
import { explain } from "./say.js";
import type { TafelClient, tournaments } from "./sdk.js";

function entryRow(entry: tournaments.LeaderboardEntry, me: string): HTMLElement {
  const r = entry.rating;
  return h(
    "tr",
    { class: entry.player?.playerId === me ? "me" : "" },
    h("td", {}, formatNumber(entry.rank)),
    h("td", {}, nameLink(entry.player, "")),
    h("td", {}, r ? `${formatNumber(Math.round(r.rating))}${r.provisional ? "?" : ""}` : ""),
    h("td", {}, r ? `±${formatNumber(Math.round(r.deviation))}` : ""),
    h("td", {}, formatNumber(r?.games ?? 0)),
  );
}

/** A leaderboard's name in the player's language ("coloursquare-duel" → "Colour Square-duels"); the
 * server's English title for one this app does not know. */
function boardTitle(id: string, title: string): string {
  return has(`common:leaderboards.board.${id}`) ? t(`common:leaderboards.board.${id}`) : title;
}

export function leaderboardsPage(root: HTMLElement, client: TafelClient, signal: AbortSignal): void {
  const pick = h("select", { class: "leaderboard", "aria-label": t("leaderboards.pick") });
  const table = h("table", { class: "ratings" });
  const mine = h("p", { class: "my-rating" });
  const message = h("p", { class: "message", role: "alert" });
  mount(root, h("section", { class: "leaderboards" }, h("h2", {}, t("leaderboards.title")), h("label", {}, t("leaderboards.pool"), " ", pick), mine, table, h("p", { class: "hint" }, t("leaderboards.provisionalHint")), message));
  const fail = (error: unknown): void => {
    if (!signal.aborted) message.textContent = explain(error);
  };
  const show = async (): Promise<void> => {
    const response = await client.leaderboard(pick.value, 50);
    const me = client.player.playerId;
    mount(table, h("tr", {}, h("th", {}, "#"), h("th", {}, t("leaderboards.player")), h("th", {}, t("leaderboards.rating")), h("th", {}, t("leaderboards.deviation")), h("th", {}, t("leaderboards.games"))), ...response.entries.map((e) => entryRow(e, me)));
    const r = response.me?.rating;
    const rated = t("leaderboards.ratedPlayers", { count: response.total, n: formatNumber(response.total) });
    mine.textContent = r
      ? t(r.provisional ? "leaderboards.mineProvisional" : "leaderboards.mine", { rating: formatNumber(Math.round(r.rating)), rank: formatNumber(response.me?.rank ?? 0), total: formatNumber(response.total) })
      : `${rated} ${t(client.player.guest ? "leaderboards.guestNote" : "leaderboards.noneYet")}`;
  };
  pick.addEventListener("change", () => void show().catch(fail));
  client.ratings
    .listLeaderboards({}, { headers: client.headers(), signal })
    .then((response) => {
      mount(pick, ...response.leaderboards.map((l) => h("option", { value: l.leaderboard }, boardTitle(l.leaderboard, l.title))));
      return show();
    })
    .catch(fail);
}
