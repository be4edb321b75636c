// Notices (NotificationService): the header's bell with the unread count, the inbox page
// (#/inbox), and the settings page (#/inbox/settings: which notices reach you and how, your
// e-mail address, your vacation). The count follows the account's one event stream: a new notice
// (AccountEvent.notification) adds one, and every read or clear on any tab or device
// (AccountEvent.inbox) says the count outright, so every open page shows the same badge.
import { accountEvents } from "./account-events.js";
import { h, mount, s as svg } from "./dom.js";
import { titleOf } from "./games/index.js";
import { formatDateTime, formatDuration, formatNumber, formatRelative, lang, t } from "./i18n.js";
import { nameOf } from "./names.js";
import { explain } from "./say.js";
import { DAYS_PER_MOVE, notices, type TafelClient } from "./sdk.js";
import { timestampMs } from "./time.js";

const { NotificationKind } = notices;
type Notification = notices.Notification;

// -- the count ------------------------------------------------------------------------------------

type CountListener = (unread: number) => void;

/** The unread count of the signed-in account, as the server last said it. */
class Unread {
  private value = 0;
  private readonly listeners = new Set<CountListener>();
  private abort: AbortController | undefined;
  private playerId = "";

  get count(): number {
    return this.value;
  }

  set(unread: number): void {
    this.value = unread;
    for (const listener of [...this.listeners]) listener(unread);
  }

  on(listener: CountListener, signal: AbortSignal): void {
    this.listeners.add(listener);
    signal.addEventListener("abort", () => this.listeners.delete(listener), { once: true });
    listener(this.value);
  }

  /** Follow `client`'s account (once per account, for the page's life). */
  follow(client: TafelClient): void {
    const playerId = client.session?.player?.playerId ?? "";
    if (playerId === this.playerId) return;
    this.abort?.abort();
    this.playerId = playerId;
    this.set(0);
    if (!playerId) return;
    const abort = (this.abort = new AbortController());
    accountEvents.on((event) => {
      if (event.kind.case === "notification") this.set(this.value + (event.kind.value.read ? 0 : 1));
      else if (event.kind.case === "inbox") this.set(event.kind.value.unread);
    }, abort.signal);
    // Whenever the stream is (again) live, read the count: what came while it was down is in it.
    accountEvents.onLive(() => {
      client.listNotifications({ unreadOnly: true, pageSize: 1 }).then((r) => this.set(r.unread), () => undefined);
    }, abort.signal);
  }
}

export const unread = new Unread();

/** A bell drawn, not an emoji: not every machine has a font with one. */
function bellIcon(): SVGElement {
  return svg(
    "svg",
    { class: "bell-icon", viewBox: "0 0 24 24", width: 22, height: 22, "aria-hidden": "true", focusable: "false" },
    svg("path", { fill: "currentColor", d: "M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22zm7-6v-5a7 7 0 0 0-5.5-6.84V3.5a1.5 1.5 0 0 0-3 0v.66A7 7 0 0 0 5 11v5l-2 2v1h18v-1z" }),
  );
}

/** The header's bell: a link to the inbox whose badge shows the unread count (until `signal`,
 * the page's life: the header is drawn again with each page). */
export function bell(client: TafelClient, signal: AbortSignal): HTMLElement {
  unread.follow(client);
  const badge = h("span", { class: "badge", "aria-hidden": "true", hidden: true });
  const link = h("a", { class: "bell", href: "#/inbox", title: t("notices.bell") }, bellIcon(), badge);
  unread.on((count) => {
    badge.hidden = count === 0;
    badge.textContent = count > 99 ? "99+" : formatNumber(count);
    link.dataset.unread = String(count);
    link.setAttribute("aria-label", count === 0 ? t("notices.bell") : t("notices.bellUnread", { count }));
  }, signal);
  return link;
}

// -- one notice in words ------------------------------------------------------------------------

const KINDS: Record<number, string> = {
  [NotificationKind.YOUR_TURN]: "YOUR_TURN",
  [NotificationKind.TIME_RUNNING_OUT]: "TIME_RUNNING_OUT",
  [NotificationKind.OPPONENT_MOVED]: "OPPONENT_MOVED",
  [NotificationKind.GAME_OVER]: "GAME_OVER",
  [NotificationKind.CHALLENGE_RECEIVED]: "CHALLENGE_RECEIVED",
  [NotificationKind.ROUND_STARTED]: "ROUND_STARTED",
  [NotificationKind.ROUND_STARTING_SOON]: "ROUND_STARTING_SOON",
  [NotificationKind.ANNOUNCEMENT]: "ANNOUNCEMENT",
  [NotificationKind.OPPONENT_ON_VACATION]: "OPPONENT_ON_VACATION",
  [NotificationKind.RESULT_CORRECTED]: "RESULT_CORRECTED",
};

/** The kind's code ("YOUR_TURN"), for words, tests and styles. */
export function kindCode(kind: number): string {
  return KINDS[kind] ?? "UNSPECIFIED";
}

function when(ts: { seconds: bigint; nanos: number } | undefined): string {
  const ms = timestampMs(ts);
  return ms === undefined ? "" : formatDateTime(ms);
}

function result(n: Notification): string {
  const outcome = n.outcome;
  if (outcome === undefined || outcome.ranks.length === 0) return t("notices.result.ended");
  if (outcome.draw) return t("notices.result.draw");
  return outcome.winners.includes(n.seat) ? t("notices.result.won") : t("notices.result.lost");
}

/** The notice as a sentence in the player's language. */
export function noticeText(n: Notification): string {
  const code = kindCode(n.kind);
  const game = n.game ? titleOf(n.game) : t("notices.aGame");
  const values = {
    game,
    name: nameOf(n.player, t("notices.someone")),
    tournament: n.tournamentName || t("notices.aTournament"),
    round: n.round,
    text: n.text,
    when: when(n.deadline ?? n.startsAt ?? n.until),
    count: n.hoursLeft,
    result: result(n),
  };
  if (code === "YOUR_TURN" && n.player === undefined) return t("notices.kind.YOUR_TURN_alone", values);
  return t(`notices.kind.${code}`, values);
}

/** Where the notice leads: its game, the tournament, or the lobby (where challenges wait). */
export function noticeHref(n: Notification): string {
  if (n.gameId) return n.tournamentId ? `#/game/${n.gameId}/tournament/${n.tournamentId}` : `#/game/${n.gameId}`;
  if (n.tournamentId) return `#/tournament/${n.tournamentId}`;
  return "#/";
}

// -- the inbox page -------------------------------------------------------------------------------

export function inboxPage(root: HTMLElement, client: TafelClient, signal: AbortSignal): void {
  const list = h("ul", { class: "notices", "aria-live": "polite" });
  const message = h("p", { class: "message", role: "alert" });
  const onlyUnread = h("input", { type: "checkbox", name: "unread-only" });
  const markAll = h("button", { type: "button", class: "mark-all" }, t("notices.markAllRead"));
  const clearAll = h("button", { type: "button", class: "clear-all" }, t("notices.clearAll"));
  const more = h("button", { type: "button", class: "more", hidden: true }, t("notices.more"));
  mount(
    root,
    h(
      "section",
      { class: "inbox" },
      h("h2", {}, t("notices.title")),
      h("div", { class: "actions" }, h("label", {}, onlyUnread, ` ${t("notices.unreadOnly")}`), markAll, clearAll, h("a", { href: "#/inbox/settings", class: "notice-settings-link" }, t("notices.settingsLink"))),
      message,
      list,
      more,
    ),
  );
  const fail = (error: unknown): void => {
    if (!signal.aborted) message.textContent = explain(error);
  };
  const items = new Map<string, HTMLElement>();
  let next = "";

  const markItem = (item: HTMLElement, read: boolean): void => {
    item.classList.toggle("unread", !read);
    item.dataset.read = String(read);
    item.querySelector<HTMLElement>(".unread-word")!.hidden = read;
    item.querySelector<HTMLButtonElement>(".mark-read")!.hidden = read;
    if (read && onlyUnread.checked) removeItem(item);
  };
  const removeItem = (item: HTMLElement): void => {
    items.delete(item.dataset.id ?? "");
    item.remove();
    if (items.size === 0) mount(list, h("li", { class: "empty" }, onlyUnread.checked ? t("notices.noneUnread") : t("notices.none")));
  };
  const itemOf = (n: Notification): HTMLElement => {
    const text = noticeText(n);
    const at = timestampMs(n.at);
    const follow = h("a", { class: "notice-link", href: noticeHref(n) }, text);
    // Following a notice reads it (the count on every tab follows the server's answer).
    follow.addEventListener("click", () => {
      if (item.dataset.read !== "true") client.markNotificationsRead([n.notificationId]).catch(() => undefined);
    });
    const read = h("button", { type: "button", class: "mark-read", "aria-label": `${t("notices.markRead")}: ${text}` }, t("notices.markRead"));
    read.addEventListener("click", () => client.markNotificationsRead([n.notificationId]).then(() => markItem(item, true), fail));
    const clear = h("button", { type: "button", class: "clear", "aria-label": `${t("notices.clear")}: ${text}` }, t("notices.clear"));
    clear.addEventListener("click", () => client.clearNotifications([n.notificationId]).then(() => removeItem(item), fail));
    const item = h(
      "li",
      { class: "notice", "data-id": n.notificationId, "data-kind": kindCode(n.kind) },
      h("span", { class: "unread-word visually-hidden" }, `${t("notices.unread")}: `),
      follow,
      h("span", { class: "notice-at hint" }, at === undefined ? "" : h("time", { datetime: new Date(at).toISOString(), title: formatDateTime(at) }, formatRelative(at))),
      h("span", { class: "notice-actions" }, read, clear),
    );
    items.set(n.notificationId, item);
    markItem(item, n.read);
    return item;
  };

  const load = (append: boolean): void => {
    client.listNotifications({ unreadOnly: onlyUnread.checked, pageToken: append ? next : "" }).then((page) => {
      if (signal.aborted) return;
      if (!append) {
        items.clear();
        list.replaceChildren();
      }
      list.querySelector(".empty")?.remove();
      for (const n of page.notifications) if (!items.has(n.notificationId)) list.append(itemOf(n));
      next = page.nextPageToken;
      more.hidden = next === "";
      unread.set(page.unread);
      if (items.size === 0) mount(list, h("li", { class: "empty" }, onlyUnread.checked ? t("notices.noneUnread") : t("notices.none")));
    }, fail);
  };
  onlyUnread.addEventListener("change", () => load(false));
  more.addEventListener("click", () => load(true));
  markAll.addEventListener("click", () => client.markNotificationsRead([], { all: true }).then(() => items.forEach((item) => markItem(item, true)), fail));
  clearAll.addEventListener("click", () => client.clearNotifications([], { all: true }).then(() => [...items.values()].forEach(removeItem), fail));

  // Live: a new notice on top; reads and clears made elsewhere shown here too.
  accountEvents.on((event) => {
    if (event.kind.case === "notification") {
      const n = event.kind.value;
      if (items.has(n.notificationId)) return;
      list.querySelector(".empty")?.remove();
      list.prepend(itemOf(n));
    } else if (event.kind.case === "inbox") {
      const change = event.kind.value;
      if (change.allCleared) [...items.values()].forEach(removeItem);
      for (const id of change.clearedIds) {
        const item = items.get(id);
        if (item) removeItem(item);
      }
      if (change.allRead) items.forEach((item) => markItem(item, true));
      for (const id of change.readIds) {
        const item = items.get(id);
        if (item) markItem(item, true);
      }
    }
  }, signal);
  load(false);
}

// -- settings: notices, e-mail, vacation ----------------------------------------------------------

const minutesValue = (minutes: number): string => `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;
const valueMinutes = (value: string): number => {
  const [hours, minutes] = value.split(":").map(Number);
  return (hours ?? 0) * 60 + (minutes ?? 0);
};

/** The time zones the browser knows (the player's own first), for the quiet hours and digest. */
function timeZones(current: string): string[] {
  const own = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const known = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.("timeZone") ?? [];
  return [...new Set([current || "UTC", own, "UTC", ...known].filter(Boolean))];
}

function noticeSettings(client: TafelClient, signal: AbortSignal): HTMLElement {
  const body = h("tbody");
  const quiet = h("input", { type: "checkbox", name: "quiet" });
  const from = h("input", { type: "time", name: "quiet-from", value: "22:00", "aria-label": `${t("notices.settings.quiet")}: ${t("notices.settings.quietFrom")}` });
  const to = h("input", { type: "time", name: "quiet-to", value: "07:00", "aria-label": `${t("notices.settings.quiet")}: ${t("notices.settings.quietTo")}` });
  const zone = h("select", { name: "time-zone" });
  const digest = h("input", { type: "checkbox", name: "digest" });
  const hour = h("select", { name: "digest-hour", "aria-label": `${t("notices.settings.digest")}: ${t("notices.settings.digestHour")}` }, ...Array.from({ length: 24 }, (_, i) => h("option", { value: i }, minutesValue(i * 60))));
  const message = h("p", { class: "message", role: "status" });
  const form = h(
    "form",
    { class: "notice-settings" },
    h("h3", {}, t("notices.settings.title")),
    h("p", { class: "hint" }, t("notices.settings.intro")),
    h("div", { class: "table-scroll" }, h("table", { class: "notice-kinds" }, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("notices.settings.kindColumn")), h("th", { scope: "col" }, t("notices.settings.inbox")), h("th", { scope: "col" }, t("notices.settings.email")))), body)),
    h("p", {}, h("label", {}, quiet, ` ${t("notices.settings.quiet")}`), " ", h("label", {}, `${t("notices.settings.quietFrom")} `, from), " ", h("label", {}, `${t("notices.settings.quietTo")} `, to)),
    h("p", {}, h("label", {}, `${t("notices.settings.timeZone")} `, zone)),
    h("p", {}, h("label", {}, digest, ` ${t("notices.settings.digest")}`), " ", h("label", {}, `${t("notices.settings.digestHour")} `, hour)),
    h("button", { type: "submit", class: "save-notices" }, t("notices.settings.save")),
    message,
  );
  let settings: notices.NotificationSettings | undefined;
  const show = (s: notices.NotificationSettings): void => {
    settings = s;
    mount(
      body,
      ...s.preferences.map((p) => {
        const name = t(`notices.settings.kindName.${kindCode(p.kind)}`);
        return h(
          "tr",
          { "data-kind": kindCode(p.kind) },
          h("th", { scope: "row" }, name),
          // The label around each box makes the whole cell its target (44 px on a phone).
          h("td", {}, h("label", { class: "cell-check" }, h("input", { type: "checkbox", class: "inbox", checked: p.inbox, "aria-label": `${name}: ${t("notices.settings.inbox")}` }))),
          h("td", {}, h("label", { class: "cell-check" }, h("input", { type: "checkbox", class: "email", checked: p.email, "aria-label": `${name}: ${t("notices.settings.email")}` }))),
        );
      }),
    );
    quiet.checked = s.quietHours?.enabled ?? false;
    if (s.quietHours?.enabled) {
      from.value = minutesValue(s.quietHours.startMinute);
      to.value = minutesValue(s.quietHours.endMinute);
    }
    mount(zone, ...timeZones(s.timeZone).map((z) => h("option", { value: z, selected: z === (s.timeZone || "UTC") }, z)));
    digest.checked = s.emailDigest;
    hour.value = String(s.digestHour);
  };
  const fail = (error: unknown): void => {
    if (!signal.aborted) message.textContent = explain(error);
  };
  client.notificationSettings().then(show, fail);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (settings === undefined) return;
    message.textContent = "";
    const inbox: Record<number, boolean> = {};
    const email: Record<number, boolean> = {};
    for (const p of settings.preferences) {
      const row = body.querySelector(`tr[data-kind="${kindCode(p.kind)}"]`);
      inbox[p.kind] = row?.querySelector<HTMLInputElement>("input.inbox")?.checked ?? p.inbox;
      email[p.kind] = row?.querySelector<HTMLInputElement>("input.email")?.checked ?? p.email;
    }
    client
      .updateNotificationSettings({
        inbox,
        email,
        quietHours: quiet.checked ? { startMinute: valueMinutes(from.value), endMinute: valueMinutes(to.value) } : null,
        timeZone: zone.value === "UTC" ? "" : zone.value,
        emailDigest: digest.checked,
        digestHour: Number(hour.value),
      })
      .then((s) => {
        show(s);
        message.textContent = t("notices.settings.saved");
      }, fail);
  });
  return form;
}

function emailSettings(client: TafelClient, signal: AbortSignal): HTMLElement {
  const state = h("p", { class: "email-state" });
  const address = h("input", { type: "email", name: "email", autocomplete: "email", "aria-label": t("email.address") });
  const resend = h("button", { type: "button", class: "resend", hidden: true }, t("email.resend"));
  const remove = h("button", { type: "button", class: "remove-email", hidden: true }, t("email.remove"));
  const message = h("p", { class: "message", role: "status" });
  const form = h("form", { class: "email-settings" }, h("h3", {}, t("email.title")), state, h("p", {}, h("label", {}, `${t("email.address")} `, address)), h("div", { class: "actions" }, h("button", { type: "submit", class: "save-email" }, t("email.save")), resend, remove), message);
  const fail = (error: unknown): void => {
    if (!signal.aborted) message.textContent = explain(error);
  };
  let pending = "";
  const show = (e: notices.EmailAddress): void => {
    const lines: string[] = [];
    if (e.address) lines.push(e.confirmed ? t("email.confirmed", { address: e.address }) : t("email.unconfirmed", { address: e.address }));
    if (e.pendingAddress) lines.push(t("email.pending", { address: e.pendingAddress }));
    state.textContent = lines.length ? lines.join(" ") : t("email.none");
    state.dataset.confirmed = String(e.confirmed);
    pending = e.pendingAddress || (e.confirmed ? "" : e.address);
    resend.hidden = pending === "";
    remove.hidden = !e.address && !e.pendingAddress;
    if (!address.value) address.value = e.pendingAddress || e.address;
  };
  const set = (value: string): void => {
    message.textContent = "";
    client.setEmail(value, lang()).then((e) => {
      show(e);
      if (value) message.textContent = t("email.sent", { address: value });
      else address.value = "";
    }, fail);
  };
  client.getEmail().then(show, fail);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    set(address.value.trim());
  });
  resend.addEventListener("click", () => set(pending));
  remove.addEventListener("click", () => set(""));
  return form;
}

function vacationSettings(client: TafelClient, signal: AbortSignal): HTMLElement {
  const state = h("p", { class: "vacation-state", role: "status" });
  const left = h("p", { class: "vacation-left hint" });
  // Whole days, the same choices as the clocks; or until ended.
  const length = h("select", { name: "vacation-length" }, h("option", { value: "" }, t("vacation.untilEnded")), ...DAYS_PER_MOVE.map((days) => h("option", { value: days * 24 }, formatDuration(days * 86_400_000))));
  const start = h("button", { type: "button", class: "start-vacation" }, t("vacation.start"));
  const end = h("button", { type: "button", class: "end-vacation", hidden: true }, t("vacation.end"));
  const message = h("p", { class: "message", role: "alert" });
  const section = h("section", { class: "vacation" }, h("h3", {}, t("vacation.title")), h("p", { class: "hint" }, t("vacation.intro")), state, left, h("div", { class: "actions" }, h("label", {}, `${t("vacation.length")} `, length), start, end), message);
  const fail = (error: unknown): void => {
    if (!signal.aborted) message.textContent = explain(error);
  };
  const show = (v: notices.Vacation): void => {
    message.textContent = "";
    const ends = timestampMs(v.endsAt);
    const since = timestampMs(v.startedAt);
    state.textContent = !v.active ? t("vacation.inactive") : ends !== undefined ? t("vacation.active", { when: formatDateTime(ends) }) : t("vacation.activeOpen", { since: since === undefined ? "" : formatDateTime(since) });
    section.dataset.active = String(v.active);
    const ms = (d: { seconds: bigint } | undefined): number => Number(d?.seconds ?? 0n) * 1000;
    left.textContent = t("vacation.left", { time: formatDuration(ms(v.allowanceLeft)), allowance: formatDuration(ms(v.allowance)) });
    start.hidden = v.active;
    length.disabled = v.active;
    end.hidden = !v.active;
  };
  client.getVacation().then(show, fail);
  start.addEventListener("click", () => client.startVacation(length.value ? Number(length.value) : undefined).then(show, fail));
  end.addEventListener("click", () => client.endVacation().then(show, fail));
  return section;
}

export function noticeSettingsPage(root: HTMLElement, client: TafelClient, signal: AbortSignal): void {
  const guest = client.player.guest;
  mount(
    root,
    h(
      "section",
      { class: "notice-settings-page" },
      h("p", {}, h("a", { href: "#/inbox" }, `← ${t("notices.title")}`)),
      noticeSettings(client, signal),
      // E-mail and vacations are for accounts (the server says EMAIL_NEEDS_ACCOUNT to a guest).
      guest ? undefined : emailSettings(client, signal),
      guest ? undefined : vacationSettings(client, signal),
    ),
  );
}

// -- the pages a mail's link opens (no sign-in needed) -------------------------------------------

/** #/email/confirm?token=… and #/email/unsubscribe?token=…: the link is the proof. */
export function emailLinkPage(root: HTMLElement, client: TafelClient, what: string): void {
  const token = new URLSearchParams(location.hash.split("?")[1] ?? "").get("token") ?? "";
  const unsubscribing = what.startsWith("unsubscribe");
  const text = h("p", { class: "email-result", role: "status" }, t("email.confirming"));
  mount(root, h("section", { class: "email-link" }, h("h2", {}, unsubscribing ? t("email.unsubscribeTitle") : t("email.confirmTitle")), text, client.session ? h("p", {}, h("a", { href: "#/inbox/settings" }, t("email.toAccount"))) : undefined));
  const fail = (error: unknown): void => {
    text.dataset.state = "failed";
    text.textContent = t("email.confirmFailed", { why: explain(error) });
  };
  if (unsubscribing) {
    client.unsubscribe(token).then((stopped) => {
      text.dataset.state = "done";
      text.textContent = t(stopped === "digest" ? "email.unsubscribed_digest" : "email.unsubscribed_immediate");
    }, fail);
    return;
  }
  client.confirmEmail(token).then((answer) => {
    text.dataset.state = "done";
    text.textContent = t("email.confirmedFor", { address: answer.email?.address ?? "", name: answer.username });
  }, fail);
}
