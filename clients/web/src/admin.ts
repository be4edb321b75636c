// The staff pages (tafel.admin.v1), for moderators and admins; the server decides what each role
// may do (ROLE_REQUIRED otherwise), the pages only leave out what the role cannot use:
//   #/staff                   the reports queue (open first; resolved ones on request)
//   #/staff/report/ID         one report with its context: the game's record, the reported account
//   #/staff/user/NAME         look-up: role, sanctions in force and past, warnings, recent games,
//                             the audit entries about it; warn, mute, suspend, ban, lift, rename
//   #/staff/audit             the audit log, newest first
//   #/staff/roles             admins: who holds a staff role, and granting one
import { h, mount } from "./dom.js";
import { admin, play, safety, type TafelClient } from "./sdk.js";
import { reasonWords } from "./safety.js";
import { act, failure, ROLE_WORDS, roleOf, SANCTION_WORDS, sanctionWords, STAFF_ROLES, timeWords } from "./standing.js";

type Go = (hash: string) => void;

export function staffPage(root: HTMLElement, client: TafelClient, hash: string, go: Go, signal: AbortSignal): void {
  const [, , what = "", arg = ""] = hash.split("/");
  const name = decodeURIComponent(arg);
  const body = h("div", { class: "staff-body" }, h("p", { class: "wait" }, "Loading…"));
  const tabs: [string, string][] = [["#/staff", "Reports"], ["#/staff/user", "Look up"], ["#/staff/audit", "Audit log"]];
  const nav = h("nav", { class: "staff-nav", "aria-label": "Staff pages" });
  mount(root, h("section", { class: "staff" }, h("h2", {}, "Staff"), nav, body));
  void Promise.all([roleOf(client), loadTitles(client)]).then(([role]) => {
    if (signal.aborted) return;
    const all = role === play.Role.ADMIN ? [...tabs, ["#/staff/roles", "Roles"] as [string, string]] : tabs;
    const current = what === "" || what === "report" ? "#/staff" : `#/staff/${what}`;
    mount(nav, ...all.map(([href, label]) => h("a", { href, class: href === current ? "current" : undefined, "aria-current": href === current ? "page" : undefined }, label)));
    if (!STAFF_ROLES.has(role)) {
      mount(body, h("p", { class: "message" }, "These pages are for moderators and admins."));
      return;
    }
    if (what === "report" && name) reportView(body, client, name, signal);
    else if (what === "user") userView(body, client, name, go, signal);
    else if (what === "audit") auditView(body, client, signal);
    else if (what === "roles") rolesView(body, client, signal);
    else queueView(body, client, signal);
  });
}

// -- words ---------------------------------------------------------------------------------------

/** Game titles from the catalogue ("Connect Four" for connect4), read once. */
const titles = new Map<string, string>();
async function loadTitles(client: TafelClient): Promise<void> {
  if (titles.size > 0) return;
  try {
    for (const type of await client.gameTypes()) titles.set(type.game, type.title);
  } catch {
    // the machine names stand in: a staff page works without the catalogue
  }
}

const plural = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

const who = (player: play.Player | undefined): string => player?.username ?? "someone";
const userLink = (player: play.Player | undefined): HTMLElement =>
  player?.username ? h("a", { href: `#/staff/user/${encodeURIComponent(player.username)}`, class: "user-link" }, player.username) : h("span", {}, "someone");

const ACTIONS: Record<string, string> = {
  role: "changed the role of",
  warn: "warned",
  sanction: "sanctioned",
  // a sanction by its kind (details "kind", as the server writes it)
  ban: "banned",
  suspension: "suspended",
  "chat mute": "muted in chat",
  lift: "lifted a sanction of",
  rename: "renamed",
  resolve_report: "resolved a report about",
  delete_account: "deleted the account",
  correct_result: "corrected a result of",
};

function outcomeWords(record: play.GameRecord): string {
  const outcome = record.outcome;
  if (outcome === undefined) return "not finished";
  const names = new Map(record.players.map((p) => [p.seat, who(p.player)]));
  const how = outcome.reason.toLowerCase().replace(/_/g, " ");
  if (outcome.draw) return `a draw (${how})`;
  return `${outcome.winners.map((s) => names.get(s) ?? `player ${s + 1}`).join(" and ")} won (${how})`;
}

function recordView(record: play.GameRecord): HTMLElement {
  return h(
    "div",
    { class: "game-record", "data-game": record.gameId },
    h("p", {}, h("strong", {}, titles.get(record.game) ?? record.game), ` · ${record.players.map((p) => who(p.player)).join(" vs ")} · ${plural(record.actions.length, "move")}`),
    h("p", {}, `Result: ${outcomeWords(record)}. Played ${timeWords(record.startedAt)}${record.private ? " (private room)" : ""}.`),
    h("p", {}, h("a", { href: `#/replay/${record.gameId}` }, "Replay the game")),
  );
}

// -- the reports queue ---------------------------------------------------------------------------

function queueView(body: HTMLElement, client: TafelClient, signal: AbortSignal): void {
  const resolved = h("input", { type: "checkbox", name: "include-resolved" });
  const count = h("p", { class: "open-count" });
  const list = h("div", { class: "report-list" });
  const more = h("button", { type: "button", class: "more", hidden: true }, "More");
  const message = h("p", { class: "message", role: "alert" });
  mount(body, count, h("label", { class: "inline" }, resolved, " Show resolved reports too"), list, more, message);
  let token = "";
  const load = (fresh: boolean): void => {
    if (fresh) {
      token = "";
      mount(list);
    }
    client.call((o) => client.moderation.listReports({ includeResolved: resolved.checked, pageSize: 25, pageToken: token }, o)).then(
      (answer) => {
        if (signal.aborted) return;
        count.textContent = answer.openCount === 1 ? "1 open report." : `${answer.openCount} open reports.`;
        if (fresh && answer.reports.length === 0) list.append(h("p", {}, "Nothing to do: the queue is empty."));
        for (const report of answer.reports) list.append(reportRow(report));
        token = answer.nextPageToken;
        more.hidden = token === "";
      },
      (error: unknown) => (message.textContent = failure(error)),
    );
  };
  resolved.addEventListener("change", () => load(true));
  more.addEventListener("click", () => load(false));
  load(true);
}

function reportRow(report: admin.Report): HTMLElement {
  const open = report.status === admin.ReportStatus.OPEN;
  return h(
    "a",
    { class: `report-row${open ? "" : " resolved"}`, href: `#/staff/report/${report.reportId}`, "data-report": report.reportId },
    h("span", { class: "subject" }, who(report.reported)),
    h("span", { class: "reason" }, reasonWords(report.reason)),
    h("span", { class: "meta" }, `by ${who(report.reporter)} · ${timeWords(report.createdAt)}${report.gameId ? " · with a game" : ""}${open ? "" : " · resolved"}`),
  );
}

// -- one report ----------------------------------------------------------------------------------

/** What the last action did, at the top of the view drawn again after it. */
type Done = (notice: string) => void;
const noticeLine = (notice: string): HTMLElement | undefined => (notice ? h("p", { class: "notice", role: "status" }, notice) : undefined);

function reportView(body: HTMLElement, client: TafelClient, reportId: string, signal: AbortSignal, notice = ""): void {
  client.call((o) => client.moderation.getReport({ reportId }, o)).then(
    (answer) => {
      if (signal.aborted) return;
      const report = answer.report;
      if (report === undefined) return;
      const open = report.status === admin.ReportStatus.OPEN;
      const reload: Done = (done) => reportView(body, client, reportId, signal, done);
      mount(
        body,
        h("p", {}, h("a", { href: "#/staff" }, "← Back to the queue")),
        noticeLine(notice),
        h(
          "section",
          { class: "card report-detail", "data-report": reportId },
          h("h3", {}, `Report about ${who(report.reported)}`),
          h("dl", {},
            h("dt", {}, "Reason"), h("dd", { class: "reason" }, reasonWords(report.reason)),
            h("dt", {}, "Details"), h("dd", { class: "details" }, report.details || "(none given)"),
            h("dt", {}, "Reported by"), h("dd", {}, userLink(report.reporter)),
            h("dt", {}, "When"), h("dd", {}, timeWords(report.createdAt)),
            h("dt", {}, "Status"), h("dd", { class: "status" }, open ? "open" : `resolved by ${who(report.resolvedBy)} ${timeWords(report.resolvedAt)}: ${report.resolution}`),
          ),
        ),
        h(
          "section",
          { class: "card" },
          h("h3", {}, "The game"),
          answer.game !== undefined
            ? recordView(answer.game)
            : report.gameId
              ? h("p", {}, "The game is still being played: ", h("a", { href: `#/game/${report.gameId}` }, "watch it"), ".")
              : h("p", {}, "No game was attached."),
        ),
        answer.account !== undefined ? accountSummary(answer.account) : undefined,
        answer.account?.player !== undefined ? actionsCard(client, answer.account.player.username, report.reportId, reload) : undefined,
        open ? resolveCard(client, report.reportId, reload) : undefined,
      );
    },
    (error: unknown) => mount(body, h("p", { class: "message" }, failure(error))),
  );
}

function resolveCard(client: TafelClient, reportId: string, done: Done): HTMLElement {
  const note = h("textarea", { name: "resolution", rows: 2, maxlength: 1000, required: true, placeholder: "What was done and why (kept in the audit log)" });
  const button = h("button", { type: "submit", class: "resolve" }, "Resolve the report");
  const message = h("p", { class: "message", role: "status" });
  const form = h("form", { class: "card resolve-form" }, h("h3", {}, "Close the report"), h("label", {}, "Resolution ", note), h("div", { class: "actions" }, button), message);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    act(button, message, async () => {
      await client.call((o) => client.moderation.resolveReport({ reportId, resolution: note.value.trim() }, o));
      done("The report is resolved.");
    });
  });
  return form;
}

// -- an account ----------------------------------------------------------------------------------

function accountSummary(account: admin.Account): HTMLElement {
  const player = account.player;
  return h(
    "section",
    { class: "card account-summary", "data-player": player?.username ?? "" },
    h("h3", {}, "Account ", userLink(player)),
    h("p", {}, `${player?.guest ? "Guest" : ROLE_WORDS[account.role]} · joined ${timeWords(account.joinedAt) || "(unknown)"} · ${plural(account.reportsAbout, "report")} about it, ${account.reportsMade} made`),
    account.sanctions.length > 0
      ? h("ul", { class: "sanctions-now" }, ...account.sanctions.map((s) => h("li", { class: "sanction" }, `${sanctionWords(s)}: ${s.reason}`)))
      : h("p", {}, "No sanction in force."),
  );
}

function userView(body: HTMLElement, client: TafelClient, username: string, go: Go, signal: AbortSignal, notice = ""): void {
  const input = h("input", { name: "username", placeholder: "username", value: username, required: true, autocapitalize: "off", spellcheck: false });
  const find = h("button", { type: "submit" }, "Look up");
  const form = h("form", { class: "lookup actions" }, input, find);
  const result = h("div", { class: "lookup-result" });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const name = input.value.trim();
    if (name) go(`#/staff/user/${encodeURIComponent(name)}`);
  });
  mount(body, form, result);
  if (!username) return;
  const reload: Done = (done) => userView(body, client, username, go, signal, done);
  mount(result, h("p", { class: "wait" }, "Loading…"));
  client.call((o) => client.moderation.lookUpAccount({ username }, o)).then(
    (answer) => {
      if (signal.aborted || answer.account === undefined) return;
      const account = answer.account;
      const name = account.player?.username ?? username;
      const audit = h("div", { class: "audit-about" });
      mount(
        result,
        noticeLine(notice),
        accountSummary(account),
        account.sanctions.length > 0 ? liftCard(client, name, account.sanctions, reload) : undefined,
        actionsCard(client, name, "", reload, (renamed) => go(`#/staff/user/${encodeURIComponent(renamed)}`)),
        h(
          "section",
          { class: "card" },
          h("h3", {}, "History"),
          account.history.length + account.warnings.length === 0
            ? h("p", {}, "No warnings or sanctions ever.")
            : h(
                "ul",
                { class: "history" },
                ...account.warnings.map((w) => h("li", { class: "warning" }, `Warned ${timeWords(w.at)}: ${w.message}`)),
                ...account.history.map((s) => h("li", { class: "sanction" }, `${SANCTION_WORDS[s.kind]} from ${timeWords(s.startsAt)}${s.endsAt ? ` to ${timeWords(s.endsAt)}` : ""}: ${s.reason}`)),
              ),
        ),
        h(
          "section",
          { class: "card" },
          h("h3", {}, "Recent games"),
          account.recentGames.length === 0 ? h("p", {}, "No finished games.") : h("div", { class: "records" }, ...account.recentGames.map(recordView)),
        ),
        h("section", { class: "card" }, h("h3", {}, "Audit entries about this account"), audit),
      );
      auditList(audit, client, name, signal);
    },
    (error: unknown) => mount(result, h("p", { class: "message" }, failure(error))),
  );
}

const UNITS: [string, number][] = [["minutes", 60_000], ["hours", 3_600_000], ["days", 86_400_000]];

/** Warn, mute in chat, suspend or ban for a time, or rename: one form, its fields by action. */
/** `renamed` (the look-up page): the account goes by its new name from now on. */
function actionsCard(client: TafelClient, username: string, reportId: string, done: Done, renamed?: (to: string) => void): HTMLElement {
  const action = h(
    "select",
    { name: "action" },
    h("option", { value: "warn" }, "Warn"),
    h("option", { value: "mute" }, "Mute in chat"),
    h("option", { value: "suspend" }, "Suspend"),
    h("option", { value: "ban" }, "Ban"),
    h("option", { value: "rename" }, "Rename"),
  );
  const amount = h("input", { type: "number", name: "duration", min: 1, value: 1, inputmode: "numeric" });
  const unit = h("select", { name: "unit" }, ...UNITS.map(([label, ms]) => h("option", { value: ms, selected: label === "days" }, label)));
  const duration = h("label", { class: "duration", hidden: true }, "For ", amount, " ", unit);
  const newName = h("input", { name: "new-username", autocapitalize: "off", spellcheck: false });
  const rename = h("label", { class: "new-name", hidden: true }, "New username ", newName);
  const reason = h("textarea", { name: "reason", rows: 2, maxlength: 1000, required: true });
  const reasonLabel = h("span", {});
  const button = h("button", { type: "submit", class: "apply danger" }, "Apply");
  const message = h("p", { class: "message", role: "status" });
  const form = h(
    "form",
    { class: "card actions-form", "data-player": username },
    h("h3", {}, `Act on ${username}`),
    h("label", {}, "Action ", action),
    duration,
    rename,
    h("label", {}, reasonLabel, reason),
    h("div", { class: "actions" }, button),
    message,
  );
  const shape = (): void => {
    duration.hidden = action.value !== "mute" && action.value !== "suspend";
    rename.hidden = action.value !== "rename";
    newName.required = action.value === "rename";
    reasonLabel.textContent = action.value === "warn" ? "Message to the player " : action.value === "rename" ? "Reason (for the audit log) " : "Reason (shown to the player) ";
  };
  action.addEventListener("change", shape);
  shape();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = reason.value.trim();
    const kind = action.value;
    const ms = Number(amount.value) * Number(unit.value);
    if (kind === "ban" && !confirm(`Ban ${username}? They cannot sign in until a moderator lifts it.`)) return;
    act(button, message, async () => {
      if (kind === "warn") {
        await client.call((o) => client.moderation.warnPlayer({ username, message: text, reportId }, o));
        done(`${username} was warned.`);
      } else if (kind === "rename") {
        const to = newName.value.trim();
        const answer = await client.call((o) => client.moderation.renameAccount({ username, newUsername: to, reason: text }, o));
        const now = answer.player?.username ?? to;
        if (renamed !== undefined) renamed(now);
        else done(`${username} is now called ${now}.`);
      } else {
        const sanction = kind === "mute" ? safety.SanctionKind.CHAT_MUTE : kind === "suspend" ? safety.SanctionKind.SUSPENSION : safety.SanctionKind.BAN;
        const answer = await client.call((o) =>
          client.moderation.sanctionPlayer({ username, kind: sanction, reason: text, reportId, duration: kind === "ban" ? undefined : { seconds: BigInt(Math.round(ms / 1000)) } }, o),
        );
        done(answer.sanction ? `${username} is ${sanctionWords(answer.sanction)}.` : `${username} is sanctioned.`);
      }
    });
  });
  return form;
}

function liftCard(client: TafelClient, username: string, sanctions: safety.Sanction[], done: Done): HTMLElement {
  const which = h("select", { name: "sanction" }, ...sanctions.map((s) => h("option", { value: s.sanctionId }, `${sanctionWords(s)}: ${s.reason}`)));
  const reason = h("input", { name: "lift-reason", required: true, placeholder: "why (kept in the audit log)" });
  const button = h("button", { type: "submit", class: "lift" }, "Lift");
  const message = h("p", { class: "message", role: "status" });
  const form = h("form", { class: "card lift-form" }, h("h3", {}, "Lift a sanction"), h("label", {}, "Sanction ", which), h("label", {}, "Reason ", reason), h("div", { class: "actions" }, button), message);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    act(button, message, async () => {
      await client.call((o) => client.moderation.liftSanction({ username, sanctionId: which.value, reason: reason.value.trim() }, o));
      done(`The sanction of ${username} is lifted.`);
    });
  });
  return form;
}

// -- the audit log -------------------------------------------------------------------------------

function auditView(body: HTMLElement, client: TafelClient, signal: AbortSignal): void {
  const list = h("div", {});
  mount(body, h("p", { class: "hint" }, "Every role change, sanction, rename, report resolved and account deleted, newest first. Nobody can edit it."), list);
  auditList(list, client, "", signal);
}

function auditList(into: HTMLElement, client: TafelClient, username: string, signal: AbortSignal): void {
  const entries = h("ol", { class: "audit-log" });
  const more = h("button", { type: "button", class: "more", hidden: true }, "More");
  const message = h("p", { class: "message", role: "alert" });
  mount(into, entries, more, message);
  let token = "";
  const load = (): void => {
    client.call((o) => client.moderation.listAuditLog({ username, pageSize: 50, pageToken: token }, o)).then(
      (answer) => {
        if (signal.aborted) return;
        if (token === "" && answer.entries.length === 0) mount(entries, h("li", { class: "empty" }, "No entries."));
        for (const entry of answer.entries) entries.append(auditEntry(entry));
        token = answer.nextPageToken;
        more.hidden = token === "";
      },
      (error: unknown) => (message.textContent = failure(error)),
    );
  };
  more.addEventListener("click", load);
  load();
}

function auditEntry(entry: admin.AuditEntry): HTMLElement {
  const details = Object.entries(entry.details).sort(([a], [b]) => a.localeCompare(b));
  const kind = entry.action === "sanction" ? entry.details["kind"] : undefined;
  const verb = ACTIONS[kind ?? entry.action] ?? ACTIONS[entry.action] ?? entry.action;
  return h(
    "li",
    { class: "audit-entry", "data-action": entry.action },
    h("span", { class: "when" }, timeWords(entry.at)),
    h("span", { class: "what" }, userLink(entry.actor), ` ${verb} `, entry.subject ? userLink(entry.subject) : ""),
    entry.reason ? h("span", { class: "why" }, `“${entry.reason}”`) : undefined,
    details.length > 0 ? h("span", { class: "details" }, details.map(([k, v]) => `${k}=${v}`).join(" · ")) : undefined,
  );
}

// -- roles (admins) ------------------------------------------------------------------------------

function rolesView(body: HTMLElement, client: TafelClient, signal: AbortSignal): void {
  const staff = h("table", { class: "staff-table" });
  const username = h("input", { name: "role-username", required: true, placeholder: "username", autocapitalize: "off", spellcheck: false });
  const role = h(
    "select",
    { name: "role" },
    ...[play.Role.PLAYER, play.Role.ORGANISER, play.Role.MODERATOR, play.Role.ADMIN].map((r) => h("option", { value: r }, ROLE_WORDS[r])),
  );
  const reason = h("input", { name: "role-reason", required: true, placeholder: "why (kept in the audit log)" });
  const button = h("button", { type: "submit", class: "set-role" }, "Set the role");
  const message = h("p", { class: "message", role: "status" });
  const form = h(
    "form",
    { class: "card role-form" },
    h("h3", {}, "Give a role"),
    h("p", { class: "hint" }, "“player” takes a staff role away. Guests cannot hold roles."),
    h("label", {}, "Username ", username),
    h("label", {}, "Role ", role),
    h("label", {}, "Reason ", reason),
    h("div", { class: "actions" }, button),
    message,
  );
  const load = (): void => {
    client.call((o) => client.admin.listStaff({}, o)).then(
      (answer) => {
        if (signal.aborted) return;
        mount(
          staff,
          h("tr", {}, h("th", {}, "Name"), h("th", {}, "Role")),
          ...answer.staff.map((a) => h("tr", { "data-player": a.player?.username ?? "" }, h("td", {}, userLink(a.player)), h("td", {}, ROLE_WORDS[a.role]))),
        );
      },
      (error: unknown) => mount(staff, h("tr", {}, h("td", { class: "message" }, failure(error)))),
    );
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    act(button, message, async () => {
      await client.call((o) => client.admin.setRole({ username: username.value.trim(), role: Number(role.value) as play.Role, reason: reason.value.trim() }, o));
      load();
      form.reset();
      return "Role set.";
    });
  });
  mount(body, h("section", { class: "card" }, h("h3", {}, "Staff"), staff), form);
  load();
}
