// A player protects themself from a game page: a player's name opens a small dialog to challenge
// them to a game (challenges.ts; not a bot or a guest, who take no challenges), to block or
// mute them (or undo it) and to report them to the moderators, with a reason from the list and
// details in their own words. The game page calls playerName() for each name in its legend.
import { h, mount } from "./dom.js";
import { playerName as nameOf, safety, type play, type TafelClient } from "./sdk.js";
import { openChallengeDialog } from "./challenges.js";
import { act } from "./standing.js";

/** The reasons a report may give, in the order the form offers them. */
export const REPORT_REASONS: [safety.ReportReason, string][] = [
  [safety.ReportReason.ABUSE, "Insults, harassment or hate"],
  [safety.ReportReason.CHEATING, "Cheating (help from an engine or another person)"],
  [safety.ReportReason.UNSPORTING, "Unsporting (stalling, leaving lost games, throwing games)"],
  [safety.ReportReason.OFFENSIVE_NAME, "An offensive name"],
  [safety.ReportReason.SPAM, "Spam or advertising"],
  [safety.ReportReason.OTHER, "Something else"],
];

export function reasonWords(reason: safety.ReportReason): string {
  return REPORT_REASONS.find(([r]) => r === reason)?.[1] ?? "No reason given";
}

/** The name as shown in a game's legend: a button that opens the player's dialog, or plain text
 * for the viewer's own seat (and a seat without an account). */
export function playerName(client: TafelClient, player: play.Player | undefined, label: string, gameId: string): HTMLElement {
  if (player === undefined || player.playerId === client.session?.player?.playerId) return h("span", { class: "name" }, label);
  const button = h("button", { type: "button", class: "player-name", "aria-haspopup": "dialog", title: `Challenge, block, mute or report ${nameOf(player)}${player.displayName ? ` (${player.username})` : ""}` }, label);
  button.addEventListener("click", () => openPlayerDialog(client, player, gameId));
  return h("span", { class: "name" }, button);
}

/** The dialog for one player: block / mute toggles from ListBlocked, and the report form. */
export function openPlayerDialog(client: TafelClient, player: play.Player, gameId: string): HTMLDialogElement {
  const name = player.username;
  const message = h("p", { class: "message", role: "status" });
  const body = h("div", { class: "dialog-body" }, h("p", { class: "wait" }, "Loading…"));
  const close = h("button", { type: "button", class: "close", "aria-label": "Close" }, "Close");
  const dialog = h("dialog", { class: "player-dialog", "data-player": name }, h("h3", {}, nameOf(player), player.displayName ? h("small", { class: "login" }, ` ${name}`) : ""), body, message, h("div", { class: "actions end" }, close));
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();

  const toggle = (blocked: boolean, muted: boolean): void => {
    const block = h("button", { type: "button", class: blocked ? "unblock" : "block" }, blocked ? "Unblock" : "Block");
    const mute = h("button", { type: "button", class: muted ? "unmute" : "mute" }, muted ? "Unmute" : "Mute");
    const report = h("button", { type: "button", class: "report danger" }, "Report…");
    const challenge = h("button", { type: "button", class: "challenge" }, "Challenge…");
    challenge.addEventListener("click", () => {
      dialog.close();
      openChallengeDialog(client, player);
    });
    block.addEventListener("click", () =>
      act(block, message, async () => {
        if (blocked) await client.unblockPlayer(name);
        else await client.blockPlayer(name);
        toggle(!blocked, muted);
        return blocked ? `${name} is no longer blocked.` : `${name} is blocked: you will not be matched or seated with them again.`;
      }),
    );
    mute.addEventListener("click", () =>
      act(mute, message, async () => {
        if (muted) await client.unmutePlayer(name);
        else await client.mutePlayer(name);
        toggle(blocked, !muted);
        return muted ? `${name} is no longer muted.` : `${name} is muted: you will not see their chat.`;
      }),
    );
    report.addEventListener("click", () => {
      message.textContent = "";
      mount(body, reportForm(client, name, gameId, message));
    });
    mount(
      body,
      h("p", { class: "hint" }, "Blocking is silent: they are not told. You can undo it on your account page."),
      h("div", { class: "actions" }, player.bot || player.guest ? undefined : challenge, block, mute, report),
    );
  };
  client.listBlocked().then(
    (listed) => toggle(listed.blocked.some((p) => p.username === name), listed.muted.some((p) => p.username === name)),
    () => toggle(false, false), // the toggles still work; the server says if it was already so
  );
  return dialog;
}

function reportForm(client: TafelClient, name: string, gameId: string, message: HTMLElement): HTMLFormElement {
  const reason = h(
    "select",
    { name: "reason", required: true },
    h("option", { value: "" }, "Choose a reason…"),
    ...REPORT_REASONS.map(([value, words]) => h("option", { value }, words)),
  );
  const details = h("textarea", { name: "details", rows: 4, maxlength: 1000, placeholder: "What happened? (optional)" });
  const send = h("button", { type: "submit", class: "send-report danger" }, "Send report");
  // One request id per form: a second click after a lost answer files nothing twice.
  const requestId = client.requestIds.next();
  const form = h(
    "form",
    { class: "report-form" },
    h("p", {}, `Report ${name} to the moderators${gameId ? " (this game is attached)" : ""}.`),
    h("label", {}, "Reason ", reason),
    h("label", {}, "Details ", details),
    h("div", { class: "actions" }, send),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (reason.value === "") {
      message.textContent = "Choose a reason from the list.";
      return;
    }
    act(send, message, async () => {
      await client.report(name, Number(reason.value) as safety.ReportReason, { gameId, details: details.value.trim(), requestId });
      mount(form, h("p", { class: "thanks" }, "Thank you: the moderators will look at it."));
      return "Report sent.";
    });
  });
  return form;
}
