// The staff pages (tafel.admin.v1), for moderators and admins; the server decides what each role
// may do (ROLE_REQUIRED otherwise), the pages only leave out what the role cannot use:
//   #/staff                   the reports queue (open first; resolved ones on request)
//   #/staff/report/ID         one report with its context: the game's record, the reported account
//   #/staff/user/NAME         look-up: role, sanctions in force and past, warnings, recent games,
//                             the audit entries about it; warn, mute, suspend, ban, lift, rename
//   #/staff/audit             the audit log, newest first
//   #/staff/roles             admins: who holds a staff role, and granting one
import { h, mount } from "./dom.js";
import { titleOf } from "./games/index.js";
import { formatList, t } from "./i18n.js";
import { place, slot } from "./place.js";
import { reasonWords } from "./safety.js";
import { ending } from "./say.js";
import { admin, play, safety, type TafelClient } from "./sdk.js";
import { act, failure, ROLE_WORDS, roleOf, SANCTION_WORDS, sanctionWords, STAFF_ROLES, timeWords } from "./standing.js";

type Go = (hash: string) => void;

export function staffPage(root: HTMLElement, client: TafelClient, hash: string, go: Go, signal: AbortSignal): void {
  const [, , what = "", arg = ""] = hash.split("/");
  const name = decodeURIComponent(arg);
  const body = h("div", { class: "staff-body" }, h("p", { class: "wait" }, t("loading")));
  const tabs: [string, string][] = [["#/staff", t("staff.tab.reports")], ["#/staff/user", t("staff.tab.lookUp")], ["#/staff/audit", t("staff.tab.audit")]];
  const nav = h("nav", { class: "staff-nav", "aria-label": t("staff.pages") });
  mount(root, h("section", { class: "staff" }, h("h2", {}, t("staff.title")), nav, body));
  void roleOf(client).then((role) => {
    if (signal.aborted) return;
    const all = role === play.Role.ADMIN ? [...tabs, ["#/staff/roles", t("staff.tab.roles")] as [string, string]] : tabs;
    const current = what === "" || what === "report" ? "#/staff" : `#/staff/${what}`;
    mount(nav, ...all.map(([href, label]) => h("a", { href, class: href === current ? "current" : undefined, "aria-current": href === current ? "page" : undefined }, label)));
    if (!STAFF_ROLES.has(role)) {
      mount(body, h("p", { class: "message" }, t("staff.onlyStaff")));
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

// Staff see login names (usernames), never display names: what they act on and search for.
const who = (player: play.Player | undefined): string => player?.username ?? t("name.someone");
const userLink = (player: play.Player | undefined): HTMLElement =>
  player?.username ? h("a", { href: `#/staff/user/${encodeURIComponent(player.username)}`, class: "user-link" }, player.username) : h("span", {}, t("name.someone"));

/** An audit entry's sentence ("{{actor}} banned {{subject}}") by its action, or for a sanction by its
 * kind (details "kind", as the server writes it). */
const ACTIONS: Record<string, string> = {
  role: t("staff.audit.role", { actor: slot("actor"), subject: slot("subject") }),
  warn: t("staff.audit.warn", { actor: slot("actor"), subject: slot("subject") }),
  sanction: t("staff.audit.sanction", { actor: slot("actor"), subject: slot("subject") }),
  ban: t("staff.audit.ban", { actor: slot("actor"), subject: slot("subject") }),
  suspension: t("staff.audit.suspension", { actor: slot("actor"), subject: slot("subject") }),
  "chat mute": t("staff.audit.chatMute", { actor: slot("actor"), subject: slot("subject") }),
  lift: t("staff.audit.lift", { actor: slot("actor"), subject: slot("subject") }),
  rename: t("staff.audit.rename", { actor: slot("actor"), subject: slot("subject") }),
  resolve_report: t("staff.audit.resolveReport", { actor: slot("actor"), subject: slot("subject") }),
  delete_account: t("staff.audit.deleteAccount", { actor: slot("actor"), subject: slot("subject") }),
  correct_result: t("staff.audit.correctResult", { actor: slot("actor"), subject: slot("subject") }),
};

function outcomeWords(record: play.GameRecord): string {
  const outcome = record.outcome;
  if (outcome === undefined) return t("staff.record.notFinished");
  const names = new Map(record.players.map((p) => [p.seat, who(p.player)]));
  const how = ending(record.game, outcome.reason);
  if (outcome.draw) return t("staff.record.draw", { how });
  return t("staff.record.won", { names: formatList(outcome.winners.map((s) => names.get(s) ?? t("ending.player", { n: s + 1 }))), how });
}

function recordView(record: play.GameRecord): HTMLElement {
  const words = { outcome: outcomeWords(record), when: timeWords(record.startedAt) };
  return h(
    "div",
    { class: "game-record", "data-game": record.gameId },
    h("p", {}, h("strong", {}, titleOf(record.game)), ` · ${record.players.map((p) => who(p.player)).join(` ${t("lobby.vs")} `)} · ${t("staff.record.moves", { count: record.actions.length })}`),
    h("p", {}, record.private ? t("staff.record.resultPrivate", words) : t("staff.record.result", words)),
    h("p", {}, h("a", { href: `#/replay/${record.gameId}` }, t("staff.record.replay"))),
  );
}

// -- the reports queue ---------------------------------------------------------------------------

function queueView(body: HTMLElement, client: TafelClient, signal: AbortSignal): void {
  const resolved = h("input", { type: "checkbox", name: "include-resolved" });
  const count = h("p", { class: "open-count" });
  const list = h("div", { class: "report-list" });
  const more = h("button", { type: "button", class: "more", hidden: true }, t("staff.more"));
  const message = h("p", { class: "message", role: "alert" });
  mount(body, count, h("label", { class: "inline" }, resolved, ` ${t("staff.queue.showResolved")}`), list, more, message);
  let token = "";
  const load = (fresh: boolean): void => {
    if (fresh) {
      token = "";
      mount(list);
    }
    client.call((o) => client.moderation.listReports({ includeResolved: resolved.checked, pageSize: 25, pageToken: token }, o)).then(
      (answer) => {
        if (signal.aborted) return;
        count.textContent = t("staff.queue.open", { count: answer.openCount });
        if (fresh && answer.reports.length === 0) list.append(h("p", {}, t("staff.queue.empty")));
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
    h("span", { class: "meta" }, [t("staff.queue.by", { name: who(report.reporter) }), timeWords(report.createdAt), report.gameId ? t("staff.queue.withGame") : "", open ? "" : t("staff.queue.resolved")].filter(Boolean).join(" · ")),
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
        h("p", {}, h("a", { href: "#/staff" }, t("staff.report.back"))),
        noticeLine(notice),
        h(
          "section",
          { class: "card report-detail", "data-report": reportId },
          h("h3", {}, t("staff.report.title", { name: who(report.reported) })),
          h("dl", {},
            h("dt", {}, t("staff.report.reason")), h("dd", { class: "reason" }, reasonWords(report.reason)),
            h("dt", {}, t("staff.report.details")), h("dd", { class: "details" }, report.details || t("staff.report.noDetails")),
            h("dt", {}, t("staff.report.by")), h("dd", {}, userLink(report.reporter)),
            h("dt", {}, t("staff.report.when")), h("dd", {}, timeWords(report.createdAt)),
            h("dt", {}, t("staff.report.status")), h("dd", { class: "status" }, open ? t("staff.report.open") : t("staff.report.resolvedBy", { name: who(report.resolvedBy), when: timeWords(report.resolvedAt), resolution: report.resolution })),
          ),
        ),
        h(
          "section",
          { class: "card" },
          h("h3", {}, t("staff.report.game")),
          answer.game !== undefined
            ? recordView(answer.game)
            : report.gameId
              ? h("p", {}, ...place(t("staff.report.stillPlayed", { link: slot("link") }), { link: h("a", { href: `#/game/${report.gameId}` }, t("staff.report.watch")) }))
              : h("p", {}, t("staff.report.noGame")),
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
  const note = h("textarea", { name: "resolution", rows: 2, maxlength: 1000, required: true, placeholder: t("staff.resolve.placeholder") });
  const button = h("button", { type: "submit", class: "resolve" }, t("staff.resolve.button"));
  const message = h("p", { class: "message", role: "status" });
  const form = h("form", { class: "card resolve-form" }, h("h3", {}, t("staff.resolve.title")), h("label", {}, t("staff.resolve.label"), " ", note), h("div", { class: "actions" }, button), message);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    act(button, message, async () => {
      await client.call((o) => client.moderation.resolveReport({ reportId, resolution: note.value.trim() }, o));
      done(t("staff.resolve.done"));
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
    h("h3", {}, ...place(t("staff.account.title", { name: slot("name") }), { name: userLink(player) })),
    h("p", {}, [player?.guest ? t("staff.account.guest") : ROLE_WORDS[account.role], t("staff.account.joined", { when: timeWords(account.joinedAt) || t("staff.account.unknown") }), t("staff.account.reports", { count: account.reportsAbout, made: account.reportsMade })].join(" · ")),
    account.sanctions.length > 0
      ? h("ul", { class: "sanctions-now" }, ...account.sanctions.map((s) => h("li", { class: "sanction" }, `${sanctionWords(s)}: ${s.reason}`)))
      : h("p", {}, t("staff.account.noSanction")),
  );
}

function userView(body: HTMLElement, client: TafelClient, username: string, go: Go, signal: AbortSignal, notice = ""): void {
  const input = h("input", { name: "username", placeholder: t("staff.usernamePlaceholder"), "aria-label": t("staff.username"), value: username, required: true, autocapitalize: "off", spellcheck: false });
  const find = h("button", { type: "submit" }, t("staff.tab.lookUp"));
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
  mount(result, h("p", { class: "wait" }, t("loading")));
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
          h("h3", {}, t("staff.user.history")),
          account.history.length + account.warnings.length === 0
            ? h("p", {}, t("staff.user.noHistory"))
            : h(
                "ul",
                { class: "history" },
                ...account.warnings.map((w) => h("li", { class: "warning" }, t("staff.user.warned", { when: timeWords(w.at), message: w.message }))),
                ...account.history.map((s) => {
                  const words = { what: SANCTION_WORDS[s.kind], from: timeWords(s.startsAt), to: timeWords(s.endsAt), reason: s.reason };
                  return h("li", { class: "sanction" }, s.endsAt ? t("staff.user.sanctionFromTo", words) : t("staff.user.sanctionFrom", words));
                }),
              ),
        ),
        h(
          "section",
          { class: "card" },
          h("h3", {}, t("staff.user.recent")),
          account.recentGames.length === 0 ? h("p", {}, t("staff.user.noRecent")) : h("div", { class: "records" }, ...account.recentGames.map(recordView)),
        ),
        h("section", { class: "card" }, h("h3", {}, t("staff.user.audit")), audit),
      );
      auditList(audit, client, name, signal);
    },
    (error: unknown) => mount(result, h("p", { class: "message" }, failure(error))),
  );
}

const UNITS: [string, number][] = [["minutes", 60_000], ["hours", 3_600_000], ["days", 86_400_000]];
const UNIT_WORDS: Record<string, string> = { minutes: t("staff.act.minutes"), hours: t("staff.act.hours"), days: t("staff.act.days") };

/** Warn, mute in chat, suspend or ban for a time, or rename: one form, its fields by action. */
/** `renamed` (the look-up page): the account goes by its new name from now on. */
function actionsCard(client: TafelClient, username: string, reportId: string, done: Done, renamed?: (to: string) => void): HTMLElement {
  const action = h(
    "select",
    { name: "action" },
    h("option", { value: "warn" }, t("staff.act.warn")),
    h("option", { value: "mute" }, t("staff.act.mute")),
    h("option", { value: "suspend" }, t("staff.act.suspend")),
    h("option", { value: "ban" }, t("staff.act.ban")),
    h("option", { value: "rename" }, t("staff.act.rename")),
  );
  const amount = h("input", { type: "number", name: "duration", min: 1, value: 1, inputmode: "numeric" });
  const unit = h("select", { name: "unit" }, ...UNITS.map(([label, ms]) => h("option", { value: ms, selected: label === "days" }, UNIT_WORDS[label])));
  const duration = h("label", { class: "duration", hidden: true }, t("staff.act.for"), " ", amount, " ", unit);
  const newName = h("input", { name: "new-username", autocapitalize: "off", spellcheck: false });
  const rename = h("label", { class: "new-name", hidden: true }, t("staff.act.newName"), " ", newName);
  const reason = h("textarea", { name: "reason", rows: 2, maxlength: 1000, required: true });
  const reasonLabel = h("span", {});
  const button = h("button", { type: "submit", class: "apply danger" }, t("staff.act.apply"));
  const message = h("p", { class: "message", role: "status" });
  const form = h(
    "form",
    { class: "card actions-form", "data-player": username },
    h("h3", {}, t("staff.act.title", { name: username })),
    h("label", {}, t("staff.act.action"), " ", action),
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
    reasonLabel.textContent = `${action.value === "warn" ? t("staff.act.message") : action.value === "rename" ? t("staff.act.reasonAudit") : t("staff.act.reasonShown")} `;
  };
  action.addEventListener("change", shape);
  shape();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = reason.value.trim();
    const kind = action.value;
    const ms = Number(amount.value) * Number(unit.value);
    if (kind === "ban" && !confirm(t("staff.act.confirmBan", { name: username }))) return;
    act(button, message, async () => {
      if (kind === "warn") {
        await client.call((o) => client.moderation.warnPlayer({ username, message: text, reportId }, o));
        done(t("staff.act.warned", { name: username }));
      } else if (kind === "rename") {
        const to = newName.value.trim();
        const answer = await client.call((o) => client.moderation.renameAccount({ username, newUsername: to, reason: text }, o));
        const now = answer.player?.username ?? to;
        if (renamed !== undefined) renamed(now);
        else done(t("staff.act.renamed", { name: username, to: now }));
      } else {
        const sanction = kind === "mute" ? safety.SanctionKind.CHAT_MUTE : kind === "suspend" ? safety.SanctionKind.SUSPENSION : safety.SanctionKind.BAN;
        const answer = await client.call((o) =>
          client.moderation.sanctionPlayer({ username, kind: sanction, reason: text, reportId, duration: kind === "ban" ? undefined : { seconds: BigInt(Math.round(ms / 1000)) } }, o),
        );
        done(answer.sanction ? t("staff.act.sanctioned", { name: username, sanction: sanctionWords(answer.sanction) }) : t("staff.act.sanctionedPlain", { name: username }));
      }
    });
  });
  return form;
}

function liftCard(client: TafelClient, username: string, sanctions: safety.Sanction[], done: Done): HTMLElement {
  const which = h("select", { name: "sanction" }, ...sanctions.map((s) => h("option", { value: s.sanctionId }, `${sanctionWords(s)}: ${s.reason}`)));
  const reason = h("input", { name: "lift-reason", required: true, placeholder: t("staff.why") });
  const button = h("button", { type: "submit", class: "lift" }, t("staff.lift.button"));
  const message = h("p", { class: "message", role: "status" });
  const form = h("form", { class: "card lift-form" }, h("h3", {}, t("staff.lift.title")), h("label", {}, t("staff.lift.sanction"), " ", which), h("label", {}, t("staff.reason"), " ", reason), h("div", { class: "actions" }, button), message);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    act(button, message, async () => {
      await client.call((o) => client.moderation.liftSanction({ username, sanctionId: which.value, reason: reason.value.trim() }, o));
      done(t("staff.lift.done", { name: username }));
    });
  });
  return form;
}

// -- the audit log -------------------------------------------------------------------------------

function auditView(body: HTMLElement, client: TafelClient, signal: AbortSignal): void {
  const list = h("div", {});
  mount(body, h("p", { class: "hint" }, t("staff.auditHint")), list);
  auditList(list, client, "", signal);
}

function auditList(into: HTMLElement, client: TafelClient, username: string, signal: AbortSignal): void {
  const entries = h("ol", { class: "audit-log" });
  const more = h("button", { type: "button", class: "more", hidden: true }, t("staff.more"));
  const message = h("p", { class: "message", role: "alert" });
  mount(into, entries, more, message);
  let token = "";
  const load = (): void => {
    client.call((o) => client.moderation.listAuditLog({ username, pageSize: 50, pageToken: token }, o)).then(
      (answer) => {
        if (signal.aborted) return;
        if (token === "" && answer.entries.length === 0) mount(entries, h("li", { class: "empty" }, t("staff.noEntries")));
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
  const sentence = ACTIONS[kind ?? entry.action] ?? ACTIONS[entry.action];
  const subject = entry.subject ? userLink(entry.subject) : "";
  return h(
    "li",
    { class: "audit-entry", "data-action": entry.action },
    h("span", { class: "when" }, timeWords(entry.at)),
    // An action this page has no sentence for is shown by its name (staff read the log's own words).
    h("span", { class: "what" }, ...(sentence ? place(sentence, { actor: userLink(entry.actor), subject }) : [userLink(entry.actor), ` ${entry.action} `, subject])),
    entry.reason ? h("span", { class: "why" }, `“${entry.reason}”`) : undefined,
    details.length > 0 ? h("span", { class: "details" }, details.map(([k, v]) => `${k}=${v}`).join(" · ")) : undefined,
  );
}

// -- roles (admins) ------------------------------------------------------------------------------

function rolesView(body: HTMLElement, client: TafelClient, signal: AbortSignal): void {
  const staff = h("table", { class: "staff-table" });
  const username = h("input", { name: "role-username", required: true, placeholder: t("staff.usernamePlaceholder"), autocapitalize: "off", spellcheck: false });
  const role = h(
    "select",
    { name: "role" },
    ...[play.Role.PLAYER, play.Role.ORGANISER, play.Role.MODERATOR, play.Role.ADMIN].map((r) => h("option", { value: r }, ROLE_WORDS[r])),
  );
  const reason = h("input", { name: "role-reason", required: true, placeholder: t("staff.why") });
  const button = h("button", { type: "submit", class: "set-role" }, t("staff.roles.button"));
  const message = h("p", { class: "message", role: "status" });
  const form = h(
    "form",
    { class: "card role-form" },
    h("h3", {}, t("staff.roles.title")),
    h("p", { class: "hint" }, t("staff.roles.hint", { player: ROLE_WORDS[play.Role.PLAYER] })),
    h("label", {}, t("staff.username"), " ", username),
    h("label", {}, t("staff.roles.role"), " ", role),
    h("label", {}, t("staff.reason"), " ", reason),
    h("div", { class: "actions" }, button),
    message,
  );
  const load = (): void => {
    client.call((o) => client.admin.listStaff({}, o)).then(
      (answer) => {
        if (signal.aborted) return;
        mount(
          staff,
          h("tr", {}, h("th", {}, t("staff.roles.name")), h("th", {}, t("staff.roles.role"))),
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
      return t("staff.roles.done");
    });
  });
  mount(body, h("section", { class: "card" }, h("h3", {}, t("staff.title")), staff), form);
  load();
}
