// Friends and presence: the lobby's "Friends online" box lists the players one follows
// (FriendService.ListFollowing: playing first, then online, then by last seen) with their presence
// in words — playing which game (with a link to watch it when anyone may), online, "last seen 5 min
// ago" — and a challenge button for those online (the challenge dialog of challenges.ts). It is
// kept live by PresenceChanged on the page's one account event stream (account-events.ts), and read
// again whenever that stream is (again) live, so nothing missed during a cut stays stale.
import { formatRelative, t } from "./i18n.js";
import { accountEvents } from "./account-events.js";
import { openChallengeDialog } from "./challenges.js";
import { h, mount } from "./dom.js";
import { titleOf } from "./games/index.js";
import { nameLink } from "./names.js";
import { explain } from "./say.js";
import { social, type play, type TafelClient } from "./sdk.js";
import { timestampMs } from "./time.js";

const { PresenceState } = social;

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago". */
export function agoWords(ms: number, now = Date.now()): string {
  // Intl in the player's language: "5 minutes ago", "vor 3 Stunden", "gisteren".
  return now - ms < 60_000 ? t("friends.justNow") : formatRelative(Math.min(ms, now), now);
}

/** The word the page (and the tests) use for a presence state. */
export function presenceState(p: social.Presence | undefined): "playing" | "online" | "offline" | "hidden" {
  switch (p?.state) {
    case PresenceState.PLAYING:
      return "playing";
    case PresenceState.ONLINE:
      return "online";
    case PresenceState.OFFLINE:
      return "offline";
    default:
      return "hidden";
  }
}

/** A presence in words, with a link to watch the game being played when anyone may watch it. */
export function presenceNodes(p: social.Presence | undefined): (Node | string)[] {
  const state = presenceState(p);
  if (state === "playing") {
    const game = titleOf(p?.game ?? "") || t("friends.aGame");
    return p?.watchable && p.gameId ? [`${t("friends.playing", { game })} · `, h("a", { href: `#/game/${p.gameId}`, class: "watch-friend" }, t("friends.watch"))] : [t("friends.playing", { game })];
  }
  if (state === "online") return [t("friends.online")];
  if (state === "offline") {
    const seen = timestampMs(p?.lastSeen);
    return [seen === undefined || seen === 0 ? t("friends.offline") : t("friends.lastSeen", { when: agoWords(seen) })];
  }
  return [];
}

/** The lobby's box of followed players, live until `signal` aborts. */
export function friendsBox(client: TafelClient, signal: AbortSignal): HTMLElement {
  const list = h("ul", { class: "friends-list" });
  const message = h("p", { class: "friends-message hint", role: "status" });
  const count = h("span", { class: "friends-count" });
  const box = h("section", { class: "friends-box", "aria-label": t("friends.title") }, h("h2", {}, t("friends.title"), " ", count), list, message);
  // A guest follows nobody (FOLLOW_NEEDS_ACCOUNT): no box, so a first game's lobby stays as it was.
  if (client.player.guest) return h("section", { class: "friends-box", hidden: true });
  const following = new Map<string, social.FollowedPlayer>();
  const order: string[] = [];

  const row = (f: social.FollowedPlayer): HTMLElement => {
    const player = f.player as play.Player;
    const state = presenceState(f.presence);
    const challenge =
      state === "online"
        ? h("button", { type: "button", class: "challenge-friend", "aria-label": t("friends.challengeWho", { name: player.displayName || player.username }) }, t("friends.challenge"))
        : undefined;
    challenge?.addEventListener("click", () => openChallengeDialog(client, player));
    return h(
      "li",
      { class: `friend ${state}`, "data-player": player.username, "data-state": state },
      h("span", { class: "presence-dot", "aria-hidden": "true" }),
      h("span", { class: "friend-name" }, nameLink(player)),
      h("span", { class: "presence" }, ...presenceNodes(f.presence)),
      challenge,
    );
  };
  const rank = (f: social.FollowedPlayer): number => ({ playing: 0, online: 1, offline: 2, hidden: 3 })[presenceState(f.presence)];
  const draw = (): void => {
    // The server's order (playing, online, last seen), kept as presence changes live.
    const all = order.map((id) => following.get(id)).filter((f): f is social.FollowedPlayer => f !== undefined);
    all.sort((a, b) => rank(a) - rank(b) || (timestampMs(b.presence?.lastSeen) ?? 0) - (timestampMs(a.presence?.lastSeen) ?? 0));
    const online = all.filter((f) => rank(f) < 2).length;
    count.textContent = all.length > 0 ? t("friends.count", { online, total: all.length }) : "";
    if (all.length === 0) {
      mount(list);
      message.textContent = t("friends.nobody");
      return;
    }
    message.textContent = "";
    mount(list, ...all.map(row));
  };
  const reload = async (): Promise<void> => {
    try {
      const listed = await client.call((o) => client.friends.listFollowing({}, { ...o, signal }));
      if (signal.aborted) return;
      following.clear();
      order.length = 0;
      for (const f of listed.following) {
        const id = f.player?.playerId ?? "";
        following.set(id, f);
        order.push(id);
      }
      draw();
    } catch (error) {
      if (!signal.aborted) message.textContent = t("friends.failed", { why: explain(error) });
    }
  };
  accountEvents.onLive(() => void reload(), signal);
  accountEvents.on((event) => {
    if (event.kind.case !== "presence") return;
    const changed = event.kind.value;
    const id = changed.player?.playerId ?? "";
    const known = following.get(id);
    if (known === undefined) return void reload(); // followed on another page meanwhile
    following.set(id, { ...known, player: changed.player ?? known.player, presence: changed.presence });
    draw();
  }, signal);
  // "last seen 5 min ago" grows older by itself.
  const timer = setInterval(draw, 30_000);
  signal.addEventListener("abort", () => clearInterval(timer));
  if (!accountEvents.live) void reload();
  return box;
}
