// A tournament's director's tools (shown on its page when Tournament.canDirect: its organiser, or
// an organiser or admin role): its settings before the start (only the fields changed are sent, as
// the update mask), the players with remove and ban, pause / resume, the next round, terminate,
// correcting a result (a game, the places, a reason), announcements, the audit log and the exports
// (CSV or JSON, each file downloaded from the streamed chunks). Built once per page; update() keeps
// the lists current without touching what the director is typing.
import { h, mount } from "./dom.js";
import { formatDateTime, formatNumber, t as tr } from "./i18n.js";
import { nameLink, nameOf } from "./names.js";
import { explain } from "./say.js";
import { tournaments, type ExportedFile, type TafelClient, type TournamentSettings } from "./sdk.js";
import { timestampMs } from "./time.js";

const { TournamentFormat, TournamentGameState, TournamentState } = tournaments;

type Stamp = { seconds: bigint; nanos: number };

/** A datetime-local input's value ("2026-12-24T19:00", the browser's time zone) for a time. */
export function localInput(ms: number | undefined): string {
  if (ms === undefined) return "";
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}`;
}

/** A datetime-local input's value as a Timestamp (undefined when empty: the time is cleared). */
export function stampOf(value: string): Stamp | undefined {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? undefined : { seconds: BigInt(Math.floor(ms / 1000)), nanos: 0 };
}

/** A game of a round as the director picks it: "Round 2, board 1: Ann – Bob (finished)". */
function gameLabel(g: tournaments.TournamentGame): string {
  const where = g.round ? tr("directing.gameInRound", { round: g.round, board: g.board }) : tr("directing.arenaGame", { board: g.board });
  const decider = g.decider ? ` ${tr("directing.decider", { n: g.decider })}` : "";
  return `${where}${decider}: ${g.players.map((p) => nameOf(p)).join(" – ")} (${tr(`directing.gameState.${(TournamentGameState[g.state] ?? "").toLowerCase()}`, { defaultValue: "" })})`;
}

/** Save each exported file: a Blob behind a link that is clicked for the director (and stays on
 * the page, should the browser have held back a second download). */
function download(files: ExportedFile[], into: HTMLElement): void {
  const links = files.map((f) => {
    const url = URL.createObjectURL(new Blob([f.data as BlobPart], { type: f.contentType }));
    return h("a", { href: url, download: f.name, class: "export-file" }, f.name);
  });
  mount(into, ...links.flatMap((a, i) => (i ? [" · ", a] : [a])));
  for (const a of links) a.click();
}

export interface DirectorPanel {
  element: HTMLElement;
  update(t: tournaments.Tournament, standings: tournaments.Standing[]): Promise<void>;
}

export function directorPanel(client: TafelClient, id: string, changed: () => void, signal: AbortSignal): DirectorPanel {
  // Its own classes: the tournament page's .message says the page's own failures (and "Reconnecting…").
  const message = h("p", { class: "director-message", role: "alert" });
  const done = h("p", { class: "done", role: "status" });
  const fail = (error: unknown): void => {
    if (!signal.aborted) {
      done.textContent = "";
      message.textContent = explain(error);
    }
  };
  const ok = (text: string): void => {
    message.textContent = "";
    done.textContent = text;
    changed();
  };
  let current: tournaments.Tournament | undefined;

  // -- settings ---------------------------------------------------------------------------------
  const field = (name: string, attrs: Record<string, string | number | boolean>): HTMLInputElement => h("input", { name, ...attrs });
  const nameInput = field("name", { maxlength: 80, required: true });
  const capacity = field("capacity", { type: "number", min: 2, max: 16384 });
  const rounds = field("rounds", { type: "number", min: 1, max: 30 });
  const startsAt = field("startsAt", { type: "datetime-local" });
  const opens = field("registrationOpensAt", { type: "datetime-local" });
  const closes = field("registrationClosesAt", { type: "datetime-local" });
  const minRating = field("minRating", { type: "number", min: 0, max: 4000 });
  const minGames = field("minRatedGames", { type: "number", min: 0, max: 10000 });
  const codeNeeded = field("invitationRequired", { type: "checkbox" });
  const code = field("invitationCode", { maxlength: 32, pattern: "[A-Za-z0-9_\\-]{4,32}", autocomplete: "off" });
  const lateJoin = field("lateJoinUntilRound", { type: "number", min: 0, max: 30 });
  const manual = field("manualRounds", { type: "checkbox" });
  const roundTimes = h("ol", { class: "round-times", start: 2 });
  const addTime = (ms?: number): void => {
    const input = field("roundStartTime", { type: "datetime-local", value: localInput(ms) });
    const n = roundTimes.children.length + 2;
    input.setAttribute("aria-label", tr("directing.roundTimeLabel", { n }));
    const row = h("li", {}, input, " ", h("button", { type: "button", class: "remove-time", "aria-label": tr("directing.removeRoundTime", { n }), onclick: () => row.remove() }, "✕"));
    roundTimes.append(row);
  };
  const beforeStart: HTMLElement[] = [capacity, startsAt, opens, closes, minRating, minGames, codeNeeded, code];
  const labelled = (text: string, input: HTMLElement, help?: string): HTMLElement => h("label", {}, text, " ", input, help ? h("small", {}, ` ${help}`) : undefined);
  const settingsForm = h(
    "form",
    { class: "tournament-settings" },
    labelled(tr("tournament.name"), nameInput),
    labelled(tr("tournament.capacity"), capacity),
    labelled(tr("directing.rounds"), rounds),
    labelled(tr("directing.startsAt"), startsAt, tr("directing.emptyClears")),
    h(
      "fieldset",
      {},
      h("legend", {}, tr("directing.registration")),
      labelled(tr("directing.opens"), opens),
      labelled(tr("directing.closes"), closes),
    ),
    h(
      "fieldset",
      {},
      h("legend", {}, tr("directing.entry")),
      labelled(tr("directing.minRating"), minRating, tr("directing.zeroNone")),
      labelled(tr("directing.minGames"), minGames, tr("directing.zeroNone")),
      h("label", {}, codeNeeded, ` ${tr("directing.codeNeeded")}`),
      labelled(tr("directing.code"), code, tr("directing.codeHelp")),
    ),
    labelled(tr("directing.lateJoin"), lateJoin, tr("directing.lateJoinHelp")),
    h(
      "fieldset",
      {},
      h("legend", {}, tr("directing.roundTimes")),
      h("p", { class: "help" }, tr("directing.roundTimesHelp")),
      roundTimes,
      h("button", { type: "button", class: "add-time", onclick: () => addTime() }, tr("directing.addRoundTime")),
      h("label", {}, manual, ` ${tr("directing.manualRounds")}`),
    ),
    h("button", { type: "submit", class: "save-settings" }, tr("directing.save")),
  );
  const fill = (t: tournaments.Tournament): void => {
    nameInput.value = t.name;
    capacity.value = String(t.capacity);
    rounds.value = String(t.rounds);
    startsAt.value = localInput(timestampMs(t.startsAt));
    opens.value = localInput(timestampMs(t.registrationOpensAt));
    closes.value = localInput(timestampMs(t.registrationClosesAt));
    minRating.value = String(t.entry?.minRating ?? 0);
    minGames.value = String(t.entry?.minRatedGames ?? 0);
    codeNeeded.checked = t.entry?.invitationRequired ?? false;
    code.value = t.invitationCode;
    lateJoin.value = String(t.lateJoinUntilRound);
    manual.checked = t.manualRounds;
    mount(roundTimes);
    for (const stamp of t.roundStartTimes) addTime(timestampMs(stamp));
    const started = t.state !== TournamentState.REGISTERING;
    for (const input of beforeStart) (input as HTMLInputElement).disabled = started;
    const swiss = t.format === TournamentFormat.SWISS;
    rounds.disabled = !(swiss || (t.format === TournamentFormat.TABLES && !started));
    lateJoin.disabled = !swiss;
  };
  /** The settings the director changed, by CreateTournamentRequest name (the update mask). */
  const changes = (t: tournaments.Tournament): TournamentSettings => {
    const out: TournamentSettings = {};
    const sameTime = (a: Stamp | undefined, b: string): boolean => localInput(timestampMs(a)) === b;
    if (nameInput.value !== t.name) out.name = nameInput.value;
    if (!capacity.disabled && Number(capacity.value) !== t.capacity) out.capacity = Number(capacity.value);
    if (!rounds.disabled && Number(rounds.value) !== t.rounds) out.rounds = Number(rounds.value);
    if (!startsAt.disabled && !sameTime(t.startsAt, startsAt.value)) out.startsAt = stampOf(startsAt.value);
    if (!opens.disabled && !sameTime(t.registrationOpensAt, opens.value)) out.registrationOpensAt = stampOf(opens.value);
    if (!closes.disabled && !sameTime(t.registrationClosesAt, closes.value)) out.registrationClosesAt = stampOf(closes.value);
    const entry = { minRating: Number(minRating.value), minRatedGames: Number(minGames.value), invitationRequired: codeNeeded.checked };
    const was = t.entry ?? { minRating: 0, minRatedGames: 0, invitationRequired: false };
    if (!minRating.disabled && (entry.minRating !== was.minRating || entry.minRatedGames !== was.minRatedGames || entry.invitationRequired !== was.invitationRequired)) out.entry = entry;
    if (!code.disabled && code.value !== t.invitationCode) out.invitationCode = code.value;
    if (!lateJoin.disabled && Number(lateJoin.value) !== t.lateJoinUntilRound) out.lateJoinUntilRound = Number(lateJoin.value);
    const times = [...roundTimes.querySelectorAll("input")].map((i) => i.value).filter((v) => v);
    if (times.join() !== t.roundStartTimes.map((s) => localInput(timestampMs(s))).join()) out.roundStartTimes = times.map((v) => stampOf(v)).filter((s): s is Stamp => s !== undefined);
    if (manual.checked !== t.manualRounds) out.manualRounds = manual.checked;
    return out;
  };
  settingsForm.addEventListener("submit", (e) => {
    e.preventDefault();
    if (current === undefined) return;
    const settings = changes(current);
    if (Object.keys(settings).length === 0) {
      ok(tr("directing.nothingChanged"));
      return;
    }
    client.updateTournament(id, settings).then((t) => {
      current = t;
      fill(t);
      ok(tr("directing.saved"));
    }, fail);
  });

  // -- players ----------------------------------------------------------------------------------
  const why = h("input", { name: "removeReason", maxlength: 200 });
  const playerList = h("ul", { class: "director-players" });

  // -- rounds -----------------------------------------------------------------------------------
  const roundControls = h("div", { class: "actions round-controls" });
  const endReason = h("input", { name: "terminateReason", maxlength: 200 });
  const terminate = h(
    "details",
    { class: "terminate" },
    h("summary", {}, tr("directing.terminate")),
    h("p", {}, tr("directing.terminateHelp")),
    h("label", {}, tr("directing.reason"), " ", endReason),
    " ",
    h("button", { type: "button", class: "terminate-now", onclick: () => void client.terminateTournament(id, endReason.value).then(() => ok(tr("directing.terminated")), fail) }, tr("directing.terminateNow")),
  );

  // -- correct a result -------------------------------------------------------------------------
  const gamePick = h("select", { name: "correctGame" });
  const placesBox = h("div", { class: "places" });
  const correctReason = h("input", { name: "correctReason", maxlength: 200, required: true });
  let games: tournaments.TournamentGame[] = [];
  const picked = (): tournaments.TournamentGame | undefined => games[Number(gamePick.value)];
  const drawPlaces = (): void => {
    const g = picked();
    if (g === undefined) return mount(placesBox);
    if (g.players.length === 2) {
      // Two seats: who won, or a draw, in words (the ranks are 1-2, 2-1 or 1-1).
      const [a, b] = g.players.map((p) => nameOf(p));
      const choice = (value: string, text: string): HTMLElement => h("label", {}, h("input", { type: "radio", name: "result", value, required: true }), ` ${text}`);
      return mount(placesBox, h("fieldset", {}, h("legend", {}, tr("directing.result")), choice("1,2", tr("directing.won", { name: a })), choice("1,1", tr("directing.draw")), choice("2,1", tr("directing.won", { name: b }))));
    }
    mount(placesBox, h("fieldset", {}, h("legend", {}, tr("directing.places")), ...g.players.map((p, i) => h("label", {}, `${nameOf(p)} `, h("input", { type: "number", name: `place${i}`, min: 1, max: g.players.length, value: g.ranks[i] ?? i + 1, required: true })))));
  };
  gamePick.addEventListener("change", drawPlaces);
  const correctForm = h(
    "form",
    { class: "correct-result" },
    h("label", {}, tr("directing.game"), " ", gamePick),
    placesBox,
    h("label", {}, tr("directing.reasonShown"), " ", correctReason),
    " ",
    h("button", { type: "submit" }, tr("directing.correct")),
  );
  // Opened on demand: a big tournament's games are thousands, listed only while a director picks
  // one (and again on each change while open), not on every event of the tournament.
  const noGames = h("p", { class: "help", hidden: true }, tr("directing.noGames"));
  const correcting = h("details", { class: "director-part correct-details" }, h("summary", {}, tr("directing.correctTitle")), noGames, correctForm);
  const loadGames = async (t: tournaments.Tournament): Promise<void> => {
    // The games a director may decide: every one but byes (and games ended by a termination).
    const chosen = picked();
    games = t.state === TournamentState.REGISTERING ? [] : (await client.tournamentGames(id)).filter((g) => g.state !== TournamentGameState.BYE && g.state !== TournamentGameState.ABORTED);
    mount(gamePick, ...games.map((g, i) => h("option", { value: i }, gameLabel(g))));
    const again = chosen === undefined ? -1 : games.findIndex((g) => g.round === chosen.round && g.board === chosen.board && g.decider === chosen.decider);
    if (again >= 0) gamePick.value = String(again);
    if (again < 0 || placesBox.childElementCount === 0) drawPlaces();
    correctForm.hidden = games.length === 0;
    noGames.hidden = games.length > 0;
  };
  correcting.addEventListener("toggle", () => {
    if (correcting.open && current !== undefined) loadGames(current).catch(fail);
  });
  correctForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const g = picked();
    if (g === undefined) return;
    const radio = placesBox.querySelector<HTMLInputElement>("input[type=radio]:checked");
    const ranks = radio ? radio.value.split(",").map(Number) : [...placesBox.querySelectorAll<HTMLInputElement>("input[type=number]")].map((i) => Number(i.value));
    client.correctResult(id, { round: g.round, board: g.board, decider: g.decider }, ranks, correctReason.value).then(() => {
      correctReason.value = "";
      ok(tr("directing.corrected"));
    }, fail);
  });

  // -- announce ---------------------------------------------------------------------------------
  const announcement = h("textarea", { name: "announcement", maxlength: 1000, rows: 3, required: true });
  const announceForm = h("form", { class: "announce" }, h("label", {}, tr("directing.announcement"), h("br", {}), announcement), h("button", { type: "submit" }, tr("directing.announce")));
  announceForm.addEventListener("submit", (e) => {
    e.preventDefault();
    client.announce(id, announcement.value).then((n) => {
      announcement.value = "";
      ok(tr("directing.announced", { count: n, n: formatNumber(n) }));
    }, fail);
  });

  // -- audit log and exports --------------------------------------------------------------------
  const audit = h("table", { class: "audit" });
  const files = h("p", { class: "export-files", "aria-live": "polite" });
  const exportButton = (format: "csv" | "json"): HTMLElement =>
    h("button", { type: "button", class: `export-${format}`, onclick: () => void client.exportTournament(id, format).then((f) => { download(f, files); ok(tr("directing.exported", { count: f.length })); }, fail) }, tr(`directing.export.${format}`));

  const section = (title: string, ...children: (HTMLElement | string)[]): HTMLElement => h("section", { class: "director-part" }, h("h4", {}, title), ...children);
  const element = h(
    "section",
    { class: "director", "aria-labelledby": "director-title" },
    h("h3", { id: "director-title" }, tr("directing.title")),
    message,
    done,
    section(tr("directing.roundsTitle"), roundControls, terminate),
    section(tr("directing.settings"), settingsForm),
    section(tr("directing.players"), h("label", {}, tr("directing.removeReason"), " ", why), playerList),
    correcting,
    section(tr("directing.announceTitle"), announceForm),
    section(tr("directing.exportTitle"), h("div", { class: "actions" }, exportButton("csv"), exportButton("json")), files),
    section(tr("directing.auditTitle"), h("div", { class: "table-wrap", tabindex: 0, role: "region", "aria-label": tr("directing.auditTitle") }, audit)),
  );

  const update = async (t: tournaments.Tournament, standings: tournaments.Standing[]): Promise<void> => {
    const first = current === undefined;
    current = t;
    if (first) fill(t);
    const running = t.state === TournamentState.RUNNING;
    const arena = t.format === TournamentFormat.ARENA;
    mount(
      roundControls,
      running || t.state === TournamentState.REGISTERING ? h("button", { type: "button", class: t.paused ? "resume" : "pause", onclick: () => void (t.paused ? client.resumeTournament(id) : client.pauseTournament(id)).then(() => ok(tr(t.paused ? "directing.resumed" : "directing.pausedDone")), fail) }, tr(t.paused ? "directing.resume" : "directing.pause")) : undefined,
      running && !arena ? h("button", { type: "button", class: "next-round", onclick: () => void client.startNextRound(id).then((r) => ok(tr("directing.roundStarted", { n: r.round?.number ?? t.currentRound + 1 })), fail) }, tr("directing.nextRound")) : undefined,
    );
    terminate.hidden = !running;
    const byId = new Map(standings.map((s) => [s.player?.playerId, s]));
    const over = t.state === TournamentState.FINISHED || t.state === TournamentState.CANCELLED;
    mount(
      playerList,
      ...t.players.map((p) => {
        const s = byId.get(p.playerId);
        const gone = s?.withdrawn ?? false;
        const remove = (ban: boolean): void => void client.removePlayer(id, p.playerId, { ban, reason: why.value }).then(() => ok(tr(ban ? "directing.bannedDone" : "directing.removedDone", { name: nameOf(p) })), fail);
        return h(
          "li",
          { "data-player": p.username },
          nameLink(p),
          s?.banned ? ` ${tr("directing.banned")}` : gone ? ` ${tr("tournament.withdrawn")}` : "",
          over || gone ? undefined : h("button", { type: "button", class: "remove", "aria-label": tr("directing.removeName", { name: nameOf(p) }), onclick: () => remove(false) }, tr("directing.remove")),
          over || s?.banned ? undefined : h("button", { type: "button", class: "ban", "aria-label": tr("directing.banName", { name: nameOf(p) }), onclick: () => remove(true) }, tr("directing.ban")),
        );
      }),
    );
    if (correcting.open) await loadGames(t);
    const entries = await client.tournamentAudit(id);
    mount(
      audit,
      h("tr", {}, ...["time", "director", "action", "detail", "reason"].map((c) => h("th", { scope: "col" }, tr(`directing.audit.${c}`)))),
      ...entries.map((e) => h("tr", { "data-action": e.action }, h("td", {}, e.at ? formatDateTime(timestampMs(e.at) ?? 0) : ""), h("td", {}, nameLink(e.director, "")), h("td", {}, tr(`directing.action.${e.action}`, { defaultValue: e.action })), h("td", {}, e.detail), h("td", {}, e.reason))),
    );
    if (entries.length === 0) audit.append(h("tr", {}, h("td", { colspan: 5 }, tr("directing.audit.none"))));
  };
  return { element, update };
}
