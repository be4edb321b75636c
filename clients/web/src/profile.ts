// A player's profile (#/player/USERNAME; ProfileService.GetProfile): the display name and
// username, when they joined, their presence (live for a player one follows: PresenceChanged on the
// page's account event stream), follow / unfollow, challenge (when their settings let the viewer),
// block / mute / report (the dialog of safety.ts), each rating with its history as a small line
// chart, the last games with links to their replays, and the viewer's results against them.
import { accountEvents } from "./account-events.js";
import { openChallengeDialog } from "./challenges.js";
import { h, mount, s } from "./dom.js";
import { presenceNodes, presenceState } from "./friends.js";
import { titleOf } from "./games/index.js";
import { formatDate, t } from "./i18n.js";
import { nameList } from "./names.js";
import { openPlayerDialog } from "./safety.js";
import { explain } from "./say.js";
import { NotFound, social, type play, type TafelClient } from "./sdk.js";
import { act } from "./standing.js";
import { timestampMs } from "./time.js";

const { GameResult } = social;

// data-result keeps these words in every language (for styles and tests); the page says RESULT_WORDS.
const RESULT_KIND: Record<number, string> = {
  [GameResult.WIN]: "won",
  [GameResult.LOSS]: "lost",
  [GameResult.DRAW]: "draw",
  [GameResult.OTHER]: "no result",
};

const RESULT_WORDS: Record<number, string> = {
  [GameResult.WIN]: t("profile.result.won"),
  [GameResult.LOSS]: t("profile.result.lost"),
  [GameResult.DRAW]: t("profile.result.draw"),
  [GameResult.OTHER]: t("profile.result.other"),
};

function day(ms: number | undefined): string {
  return ms === undefined ? "" : formatDate(ms, { day: "numeric", month: "long", year: "numeric" });
}

/** A rating's history as one line. Hand-drawn in SVG: a single line of at most 100 points needs a
 * few dozen lines of code, where a chart library would outweigh the whole app. A point per rated
 * game (each links to that game's replay), the highest and lowest rating written on the left. */
export function ratingChart(points: social.RatingPoint[], title: string): SVGElement {
  const width = 320;
  const height = 120;
  const left = 40;
  const pad = 8;
  const ratings = points.map((p) => p.rating);
  const low = Math.min(...ratings);
  const high = Math.max(...ratings);
  const span = Math.max(high - low, 20); // a flat line stays in the middle, not on an edge
  const mid = (high + low) / 2;
  const x = (i: number): number => (points.length === 1 ? (left + width) / 2 : left + pad + (i * (width - left - 2 * pad)) / (points.length - 1));
  const y = (r: number): number => height / 2 - ((r - mid) / span) * (height - 2 * pad);
  const line = points.map((p, i) => `${x(i).toFixed(1)},${y(p.rating).toFixed(1)}`).join(" ");
  return s(
    "svg",
    { class: "rating-chart", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": t("profile.chart", { title, count: points.length, from: Math.round(ratings[0] ?? 0), to: Math.round(ratings[ratings.length - 1] ?? 0) }), "data-points": points.length },
    s("line", { class: "axis", x1: left, y1: pad / 2, x2: left, y2: height - pad / 2 }),
    s("text", { class: "axis-label", x: left - 4, y: y(high) + 4, "text-anchor": "end" }, String(Math.round(high))),
    high !== low ? s("text", { class: "axis-label", x: left - 4, y: y(low) + 4, "text-anchor": "end" }, String(Math.round(low))) : undefined,
    points.length > 1 ? s("polyline", { class: "rating-line", points: line }) : undefined,
    ...points.map((p, i) =>
      s(
        "a",
        { href: `#/replay/${p.gameId}` },
        s("circle", { class: "point", cx: x(i).toFixed(1), cy: y(p.rating).toFixed(1), r: 3.5 }, s("title", {}, t("profile.point", { rating: Math.round(p.rating), day: day(timestampMs(p.at)) }))),
      ),
    ),
  );
}

export function profilePage(root: HTMLElement, client: TafelClient, username: string, signal: AbortSignal): void {
  const title = h("h2", {}, username);
  const meta = h("p", { class: "profile-meta" });
  const presence = h("p", { class: "profile-presence", "aria-live": "polite" });
  const actions = h("div", { class: "actions profile-actions" });
  const message = h("p", { class: "message", role: "alert" });
  const ratings = h("div", { class: "profile-ratings" });
  const games = h("ul", { class: "recent-games" });
  const against = h("p", { class: "against-you" });
  const againstCard = h("section", { class: "card against-card", hidden: true }, h("h3", {}, t("profile.against")), against);
  mount(
    root,
    h(
      "section",
      { class: "profile", "data-player": username },
      title,
      meta,
      presence,
      actions,
      message,
      againstCard,
      h("section", { class: "card" }, h("h3", {}, t("profile.ratings")), ratings),
      h("section", { class: "card" }, h("h3", {}, t("profile.lastGames")), games),
    ),
  );
  const me = client.session?.player?.playerId ?? "";
  let profile: social.Profile | undefined;

  const showPresence = (p: social.Presence | undefined): void => {
    presence.dataset.state = presenceState(p);
    const nodes = presenceNodes(p);
    mount(presence, ...(nodes.length > 0 ? [h("span", { class: "presence-dot", "aria-hidden": "true" }), ...nodes] : []));
  };

  const drawActions = (): void => {
    const p = profile;
    const player = p?.player;
    if (p === undefined || player === undefined) return;
    if (player.playerId === me) {
      mount(actions, h("span", { class: "hint" }, `${t("profile.thisIsYou")} `), h("a", { href: "#/account", class: "settings-link" }, t("profile.settings")));
      return;
    }
    const follow = h("button", { type: "button", class: p.followedByYou ? "unfollow" : "follow" }, p.followedByYou ? t("profile.unfollow") : t("profile.follow"));
    follow.addEventListener("click", () =>
      act(follow, message, async () => {
        if (p.followedByYou) await client.call((o) => client.friends.unfollow({ username }, o));
        else await client.call((o) => client.friends.follow({ username }, o));
        p.followedByYou = !p.followedByYou;
        p.followers += p.followedByYou ? 1 : -1;
        drawMeta();
        drawActions();
        return p.followedByYou ? t("profile.followed", { name: title.firstChild?.textContent ?? username }) : t("profile.unfollowed", { name: username });
      }),
    );
    const challenge = h("button", { type: "button", class: "challenge" }, t("profile.challenge"));
    challenge.addEventListener("click", () => openChallengeDialog(client, player as play.Player));
    const more = h("button", { type: "button", class: "player-actions" }, t("profile.more"));
    more.addEventListener("click", () => openPlayerDialog(client, player as play.Player, ""));
    mount(
      actions,
      client.player.guest ? h("span", { class: "hint" }, `${t("profile.registerToFollow")} `) : follow,
      p.challengeable ? challenge : h("span", { class: "hint not-challengeable" }, t("profile.notChallengeable")),
      more,
    );
  };

  const drawMeta = (): void => {
    const p = profile;
    if (p === undefined) return;
    const joined = timestampMs(p.joinedAt);
    mount(meta, [joined ? t("profile.joined", { day: day(joined) }) : "", t("profile.followers", { count: p.followers }), p.followsYou ? t("profile.followsYou") : ""].filter(Boolean).join(" · "));
  };

  const draw = async (): Promise<void> => {
    const [answer, boards] = await Promise.all([
      client.call((o) => client.profiles.getProfile({ username }, { ...o, signal })),
      client.ratings.listLeaderboards({}, { headers: client.headers(), signal }).catch(() => undefined),
    ]);
    const p = answer.profile;
    if (p === undefined || signal.aborted) return;
    profile = p;
    const player = p.player;
    mount(title, player?.displayName || username, player?.displayName && player.displayName !== username ? h("small", { class: "login" }, ` ${username}`) : undefined);
    drawMeta();
    showPresence(p.presence);
    drawActions();

    const boardTitle = (r: social.ProfileRating): string => boards?.leaderboards.find((l) => l.leaderboard === r.rating?.leaderboard)?.title ?? titleOf(r.game);
    mount(
      ratings,
      ...(p.ratings.length === 0
        ? [h("p", {}, t("profile.noRatings"))]
        : p.ratings.map((r) => {
            const named = boardTitle(r);
            const rating = r.rating;
            return h(
              "div",
              { class: "profile-rating", "data-leaderboard": rating?.leaderboard ?? r.game },
              h("h4", {}, named),
              h("p", {}, h("strong", {}, rating ? String(Math.round(rating.rating)) : "?"), rating?.provisional ? ` ${t("profile.provisional")}` : "", ` · ${t("profile.ratedGames", { count: rating?.games ?? 0 })}`, rating?.rank ? ` · ${t("profile.rank", { rank: rating.rank })}` : ""),
              r.history.length > 0 ? ratingChart(r.history, named) : undefined,
            );
          })),
    );

    mount(
      games,
      ...(p.recentGames.length === 0
        ? [h("li", {}, t("profile.noGames"))]
        : p.recentGames.map((g) =>
            h(
              "li",
              { class: "recent-game", "data-result": RESULT_KIND[g.result] ?? "" },
              h("a", { href: `#/replay/${g.gameId}`, class: "replay-link" }, titleOf(g.game)),
              ": ",
              ...nameList(g.players.map((sp) => sp.player), ` ${t("lobby.vs")} `),
              ` · ${[RESULT_WORDS[g.result] ?? "", g.rated ? t("profile.rated") : "", day(timestampMs(g.endedAt))].filter(Boolean).join(" · ")}`,
            ),
          )),
    );

    const h2h = p.againstYou;
    againstCard.hidden = h2h === undefined || player?.playerId === me;
    if (h2h !== undefined) {
      const total = h2h.wins + h2h.losses + h2h.draws;
      against.textContent = total === 0 ? t("profile.noneAgainst") : t("profile.record", { wins: h2h.wins, losses: h2h.losses, draws: h2h.draws, count: total, name: player?.displayName || username });
    }
  };

  draw().catch((error: unknown) => {
    if (signal.aborted) return;
    if (error instanceof NotFound) {
      title.textContent = t("profile.noSuch");
      message.textContent = t("profile.noSuchText");
      message.dataset.reason = error.reason;
      return;
    }
    message.textContent = explain(error);
  });

  // Live: a followed player's presence comes on the event stream; read again after a cut.
  accountEvents.on((event) => {
    if (event.kind.case !== "presence" || event.kind.value.player?.username !== username) return;
    if (profile !== undefined) profile.presence = event.kind.value.presence;
    showPresence(event.kind.value.presence);
  }, signal);
  let first = true;
  accountEvents.onLive(() => {
    if (first) return void (first = false);
    void client
      .call((o) => client.profiles.getProfile({ username }, { ...o, signal }))
      .then((a) => showPresence(a.profile?.presence))
      .catch(() => undefined);
  }, signal);
  const timer = setInterval(() => profile && showPresence(profile.presence), 30_000);
  signal.addEventListener("abort", () => clearInterval(timer));
}
