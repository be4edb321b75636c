// A player protects themself from a game page: a player's name opens a small dialog to challenge
// them to a game (challenges.ts; not a bot or a guest, who take no challenges), to block or
// mute them (or undo it) and to report them to the moderators, with a reason from the list and
// details in their own words. The game page calls playerName() for each name in its legend: the
// name itself leads to the profile (names.ts), the button beside it to the dialog. A chat line is
// reported with openReportDialog (the line and its channel attached).
import { h, mount } from "./dom.js";
import { t } from "./i18n.js";
import { nameLink, nameOf, profileHref } from "./names.js";
import { safety, type play, type social, type TafelClient } from "./sdk.js";
import { openChallengeDialog } from "./challenges.js";
import { act } from "./standing.js";

/** Told to the page when the viewer blocks or mutes someone: open chat panes drop their lines. */
export const HIDE_PLAYER_EVENT = "tafel:hide-player";

/** The reasons a report may give, in the order the form offers them, in the player's language. */
export const REPORT_REASONS: [safety.ReportReason, string][] = [
  [safety.ReportReason.ABUSE, t("safety.reason.ABUSE")],
  [safety.ReportReason.CHEATING, t("safety.reason.CHEATING")],
  [safety.ReportReason.UNSPORTING, t("safety.reason.UNSPORTING")],
  [safety.ReportReason.OFFENSIVE_NAME, t("safety.reason.OFFENSIVE_NAME")],
  [safety.ReportReason.SPAM, t("safety.reason.SPAM")],
  [safety.ReportReason.OTHER, t("safety.reason.OTHER")],
];

export function reasonWords(reason: safety.ReportReason): string {
  return REPORT_REASONS.find(([r]) => r === reason)?.[1] ?? t("safety.reason.none");
}

/** The name as shown in a game's legend: a link to the player's profile and, for anyone but the
 * viewer, a button beside it that opens the player's dialog (its hidden words name the player, for
 * screen readers and for finding it). */
export function playerName(client: TafelClient, player: play.Player | undefined, label: string, gameId: string): HTMLElement {
  if (player === undefined || player.playerId === client.session?.player?.playerId) return h("span", { class: "name" }, nameLink(player, label, label));
  const what = player.displayName ? t("safety.actionsForShown", { shown: nameOf(player), name: player.username }) : t("safety.actionsFor", { name: nameOf(player) });
  const button = h("button", { type: "button", class: "player-name", "aria-haspopup": "dialog", title: what }, h("span", { "aria-hidden": "true" }, "⋯"), h("span", { class: "visually-hidden" }, what));
  button.addEventListener("click", () => openPlayerDialog(client, player, gameId));
  return h("span", { class: "name" }, nameLink(player, label, label), button);
}

/** The dialog for one player: block / mute toggles from ListBlocked, and the report form. */
export function openPlayerDialog(client: TafelClient, player: play.Player, gameId: string): HTMLDialogElement {
  const name = player.username;
  const message = h("p", { class: "message", role: "status" });
  const body = h("div", { class: "dialog-body" }, h("p", { class: "wait" }, t("loading")));
  const close = h("button", { type: "button", class: "close" }, t("safety.close"));
  const dialog = h("dialog", { class: "player-dialog", "data-player": name }, h("h3", {}, nameOf(player), player.displayName ? h("small", { class: "login" }, ` ${name}`) : ""), player.bot || player.guest ? undefined : h("p", { class: "profile-link" }, h("a", { href: profileHref(name), onclick: () => dialog.close() }, t("safety.profile"))), body, message, h("div", { class: "actions end" }, close));
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();

  const toggle = (blocked: boolean, muted: boolean): void => {
    const block = h("button", { type: "button", class: blocked ? "unblock" : "block" }, blocked ? t("safety.unblock") : t("safety.block"));
    const mute = h("button", { type: "button", class: muted ? "unmute" : "mute" }, muted ? t("safety.unmute") : t("safety.mute"));
    const report = h("button", { type: "button", class: "report danger" }, t("safety.report"));
    const challenge = h("button", { type: "button", class: "challenge" }, t("safety.challenge"));
    challenge.addEventListener("click", () => {
      dialog.close();
      openChallengeDialog(client, player);
    });
    block.addEventListener("click", () =>
      act(block, message, async () => {
        if (blocked) await client.unblockPlayer(name);
        else await client.blockPlayer(name);
        toggle(!blocked, muted);
        if (!blocked) document.dispatchEvent(new CustomEvent(HIDE_PLAYER_EVENT, { detail: name }));
        return blocked ? t("safety.unblocked", { name }) : t("safety.blocked", { name });
      }),
    );
    mute.addEventListener("click", () =>
      act(mute, message, async () => {
        if (muted) await client.unmutePlayer(name);
        else await client.mutePlayer(name);
        toggle(blocked, !muted);
        if (!muted) document.dispatchEvent(new CustomEvent(HIDE_PLAYER_EVENT, { detail: name }));
        return muted ? t("safety.unmuted", { name }) : t("safety.muted", { name });
      }),
    );
    report.addEventListener("click", () => {
      message.textContent = "";
      mount(body, reportForm(client, name, { gameId }, message));
    });
    mount(
      body,
      h("p", { class: "hint" }, t("safety.silent")),
      h("div", { class: "actions" }, player.bot || player.guest ? undefined : challenge, block, mute, report),
    );
  };
  client.listBlocked().then(
    (listed) => toggle(listed.blocked.some((p) => p.username === name), listed.muted.some((p) => p.username === name)),
    () => toggle(false, false), // the toggles still work; the server says if it was already so
  );
  return dialog;
}

/** What a report is about beyond the player: the game, and for a chat line its id and channel. */
export interface ReportAbout {
  gameId?: string;
  messageId?: string;
  chatChannel?: social.ChatChannel;
  /** The reported line, shown in the form so the reporter sees what goes to the moderators. */
  quote?: string;
}

/** Report one chat line of `author`'s: the dialog with the reason list; the line goes with it. */
export function openReportDialog(client: TafelClient, author: play.Player, about: ReportAbout): HTMLDialogElement {
  const message = h("p", { class: "message", role: "status" });
  const close = h("button", { type: "button", class: "close" }, t("safety.close"));
  const dialog = h("dialog", { class: "player-dialog report-line-dialog", "data-player": author.username }, h("h3", {}, t("safety.reportLine", { name: nameOf(author) })), reportForm(client, author.username, about, message), message, h("div", { class: "actions end" }, close));
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}

function reportForm(client: TafelClient, name: string, about: ReportAbout, message: HTMLElement): HTMLFormElement {
  const reason = h(
    "select",
    { name: "reason", required: true },
    h("option", { value: "" }, t("safety.chooseReason")),
    ...REPORT_REASONS.map(([value, words]) => h("option", { value }, words)),
  );
  const details = h("textarea", { name: "details", rows: 4, maxlength: 1000, placeholder: t("safety.detailsPlaceholder") });
  const send = h("button", { type: "submit", class: "send-report danger" }, t("safety.send"));
  // One request id per form: a second click after a lost answer files nothing twice.
  const requestId = client.requestIds.next();
  const gameId = about.gameId ?? "";
  const intro = about.messageId ? t("safety.reportToLine", { name }) : gameId ? t("safety.reportToGame", { name }) : t("safety.reportTo", { name });
  const form = h(
    "form",
    { class: "report-form" },
    h("p", {}, intro),
    about.quote ? h("blockquote", { class: "reported-line" }, about.quote) : undefined,
    h("label", {}, t("safety.reasonLabel"), " ", reason),
    h("label", {}, t("safety.detailsLabel"), " ", details),
    h("div", { class: "actions" }, send),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (reason.value === "") {
      message.textContent = t("safety.pickReason");
      return;
    }
    act(send, message, async () => {
      const request = { requestId, username: name, gameId, messageId: about.messageId ?? "", chatChannel: about.chatChannel, reason: Number(reason.value) as safety.ReportReason, details: details.value.trim() };
      await client.call((o) => client.safety.report(request, o));
      mount(form, h("p", { class: "thanks" }, t("safety.thanks")));
      return t("safety.sent");
    });
  });
  return form;
}
