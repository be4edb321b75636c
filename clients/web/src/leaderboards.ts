// Leaderboards per game and rating pool (ListLeaderboards, GetLeaderboard), provisional ratings
// marked, and the viewer's own place.
import { h, mount } from "./dom.js";
import { nameLink } from "./names.js";
import { TafelError, type TafelClient, type tournaments } from "./sdk.js";

function entryRow(entry: tournaments.LeaderboardEntry, me: string): HTMLElement {
  const r = entry.rating;
  return h(
    "tr",
    { class: entry.player?.playerId === me ? "me" : "" },
    h("td", {}, String(entry.rank)),
    h("td", {}, nameLink(entry.player, "")),
    h("td", {}, r ? `${Math.round(r.rating)}${r.provisional ? "?" : ""}` : ""),
    h("td", {}, r ? `±${Math.round(r.deviation)}` : ""),
    h("td", {}, String(r?.games ?? 0)),
  );
}

export function leaderboardsPage(root: HTMLElement, client: TafelClient, signal: AbortSignal): void {
  const pick = h("select", { class: "leaderboard", "aria-label": "Leaderboard" });
  const table = h("table", { class: "ratings" });
  const mine = h("p", { class: "my-rating" });
  const message = h("p", { class: "message", role: "alert" });
  mount(root, h("section", { class: "leaderboards" }, h("h2", {}, "Leaderboards"), h("label", {}, "Game and pool ", pick), mine, table, h("p", { class: "hint" }, "? = provisional (fewer games played: the rating may still move a lot)"), message));
  const fail = (error: unknown): void => {
    if (!signal.aborted) message.textContent = error instanceof TafelError ? error.detail : String(error);
  };
  const show = async (): Promise<void> => {
    const response = await client.leaderboard(pick.value, 50);
    const me = client.player.playerId;
    mount(table, h("tr", {}, h("th", {}, "#"), h("th", {}, "player"), h("th", {}, "rating"), h("th", {}, "deviation"), h("th", {}, "games")), ...response.entries.map((e) => entryRow(e, me)));
    const r = response.me?.rating;
    mine.textContent = r ? `Your rating: ${Math.round(r.rating)}${r.provisional ? " (provisional)" : ""}, rank ${response.me?.rank} of ${response.total}.` : client.player.guest
        ? `${response.total} rated players. Guests are not rated (a rating follows an account from game to game): register to get one.`
        : `${response.total} rated players. You have no rating here yet.`;
  };
  pick.addEventListener("change", () => void show().catch(fail));
  client.ratings
    .listLeaderboards({}, { headers: client.headers(), signal })
    .then((response) => {
      mount(pick, ...response.leaderboards.map((l) => h("option", { value: l.leaderboard }, l.title)));
      return show();
    })
    .catch(fail);
}
