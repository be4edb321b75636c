// An arena's page parts (drawn inside the tournament's page, tournaments.ts): the time left, live
// standings with streaks and paused players, the player's "pause" / "come back" and their current
// game, which opens by itself when the arena pairs them (TournamentArenaGameStarted).
import { h, mount } from "./dom.js";
import { formatDuration, formatNumber, t as tr } from "./i18n.js";
import { nameLink } from "./names.js";
import { tournaments, type TafelClient } from "./sdk.js";
import { timestampMs } from "./time.js";

const { TournamentGameState, TournamentState } = tournaments;

/** A streak long enough to double the next win's points (two wins in a row). */
export const HOT_STREAK = 2;

/** "12 min 30 s left", ticking every second until the end (then "Time is up: games being played
 * finish"). The clock is polite for screen readers only once a minute (aria-live would otherwise
 * speak every second). */
export function arenaClock(endsAt: number | undefined, signal: AbortSignal): HTMLElement {
  const shown = h("span", { class: "arena-left", "aria-hidden": "true" });
  const spoken = h("span", { class: "visually-hidden", "aria-live": "polite" });
  const clock = h("p", { class: "arena-clock" }, shown, spoken);
  let lastMinute = -1;
  const tick = (): void => {
    if (endsAt === undefined) {
      shown.textContent = tr("arena.notStarted");
      return;
    }
    const left = endsAt - Date.now();
    const text = left > 0 ? tr("arena.left", { time: formatDuration(Math.ceil(left / 1000) * 1000) }) : tr("arena.timeUp");
    shown.textContent = text;
    const minute = Math.max(0, Math.ceil(left / 60_000));
    if (minute !== lastMinute) {
      lastMinute = minute;
      spoken.textContent = text;
    }
  };
  tick();
  const timer = setInterval(tick, 1000);
  signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  return clock;
}

/** The arena's standings: points, a fire for a streak, paused players marked in words. */
export function arenaStandings(table: HTMLTableElement, standings: tournaments.Standing[], me: string): void {
  mount(
    table,
    h("caption", { class: "visually-hidden" }, tr("arena.standingsCaption")),
    h("tr", {}, h("th", { scope: "col" }, "#"), ...["player", "points", "games", "wins", "draws", "losses"].map((c) => h("th", { scope: "col" }, tr(`tournament.column.${c}`))), h("th", { scope: "col", title: tr("arena.streakTitle") }, tr("arena.streak")), h("th", { scope: "col", title: tr("arena.performanceTitle") }, tr("arena.performance"))),
    ...standings.map((s) => {
      const hot = s.streak >= HOT_STREAK;
      return h(
        "tr",
        { class: [s.player?.playerId === me ? "me" : "", s.paused ? "paused" : ""].join(" ").trim(), "data-player": s.player?.username ?? "", "data-streak": s.streak, "data-paused": s.paused ? "true" : "false" },
        h("td", {}, formatNumber(s.rank)),
        h("td", {}, nameLink(s.player, ""), s.paused ? h("span", { class: "paused-mark" }, ` ${tr("arena.paused")}`) : undefined, s.banned ? ` ${tr("directing.banned")}` : s.withdrawn ? ` ${tr("tournament.withdrawn")}` : ""),
        h("td", {}, formatNumber(s.points)),
        h("td", {}, formatNumber(s.games)),
        h("td", {}, formatNumber(s.wins)),
        h("td", {}, formatNumber(s.draws)),
        h("td", {}, formatNumber(s.losses)),
        // The fire is a picture; its words are the label (a screen reader says "on a streak of 3 wins").
        h("td", { class: hot ? "streak hot" : "streak" }, hot ? h("span", { role: "img", "aria-label": tr("arena.onStreak", { count: s.streak }) }, `🔥 ${formatNumber(s.streak)}`) : formatNumber(s.streak)),
        h("td", {}, formatNumber(Math.round(s.performance))),
      );
    }),
  );
}

/** The player's own controls in a running arena: step away (not paired again) or come back. */
export function arenaControls(client: TafelClient, t: tournaments.Tournament, mine: tournaments.Standing | undefined, done: () => void, fail: (error: unknown) => void): HTMLElement | undefined {
  if (t.state !== TournamentState.RUNNING) return undefined;
  if (mine === undefined || mine.withdrawn) return undefined;
  const paused = mine.paused;
  return h(
    "button",
    { type: "button", class: paused ? "arena-back" : "arena-pause", onclick: () => void client.pauseArenaPlay(t.tournamentId, !paused).then(done, fail) },
    tr(paused ? "arena.comeBack" : "arena.pause"),
  );
}

/** The caller's game being played in this arena, if any (the newest first). */
export async function currentArenaGame(client: TafelClient, tournamentId: string, me: string): Promise<tournaments.TournamentGame | undefined> {
  const games = await client.tournamentGames(tournamentId, { playerId: me });
  return games.reverse().find((g) => g.state === TournamentGameState.PLAYING && g.gameId);
}

/** Games this page has opened by itself. Once only: the watch replays the arena's events from its
 * start, and a player who comes back from a finished game must not be sent into it again while the
 * arena has not yet counted its result (nor into a live one they chose to leave). */
const openedByItself = new Set<string>();

/** True the first time it is asked about a game, false after. */
export function firstOpening(gameId: string): boolean {
  if (openedByItself.has(gameId)) return false;
  openedByItself.add(gameId);
  return true;
}

/** Whether this arena event pairs the caller: the page then opens the game by itself. */
export function pairsMe(event: tournaments.TournamentEvent, me: string): string | undefined {
  if (event.kind.case !== "arenaGameStarted") return undefined;
  const game = event.kind.value.game;
  return game?.players.some((p) => p.playerId === me) && game.gameId ? game.gameId : undefined;
}

/** The arena's length in words for its info line ("30 minutes"). */
export function arenaLength(t: tournaments.Tournament): string {
  const seconds = Number(t.arenaDuration?.seconds ?? 0n);
  return seconds ? tr("arena.lasts", { time: formatDuration(seconds * 1000) }) : "";
}

export function arenaEnd(t: tournaments.Tournament): number | undefined {
  return timestampMs(t.endsAt);
}
