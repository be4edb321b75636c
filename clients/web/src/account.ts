// "My account" (#/account): the display name and the settings beside it (chat on or off, who may
// challenge you: ProfileService.GetMySettings / UpdateMySettings), the account's standing (warnings, sanctions in force), the players it
// blocks and mutes (with undo), a new password, everything the platform keeps about it as a JSON
// download, and deleting it for good (after a confirmation).
import { h, mount } from "./dom.js";
import { formatNumber, t } from "./i18n.js";
import { nameOf, profileHref } from "./names.js";
import { social, type TafelClient } from "./sdk.js";
import { forget, save as keepSession } from "./session.js";
import { act, failure, meLabel, ROLE_WORDS, roleOf, sanctionWords, timeWords } from "./standing.js";

export function accountPage(root: HTMLElement, client: TafelClient, signal: AbortSignal, signedOut: () => void): void {
  const player = client.player;
  const role = h("span", { class: "role" });
  const standing = h("div", { class: "standing" }, h("p", { class: "wait" }, t("loading")));
  const blocked = h("div", { class: "blocked-list" }, h("p", { class: "wait" }, t("loading")));
  mount(
    root,
    h(
      "section",
      { class: "account-page" },
      h("h2", {}, t("account.title")),
      h("p", {}, h("strong", {}, nameOf(player)), player.displayName ? (player.guest ? ` (${player.username})` : ` ${t("account.signsInAs", { name: player.username })}`) : "", player.guest ? ` ${t("account.guest")}` : "", " · ", role, player.guest ? "" : " · ", player.guest ? "" : h("a", { href: profileHref(player.username), class: "my-profile" }, t("account.myProfile"))),
      displayNameCard(client),
      settingsCard(client, signal),
      // Notices, e-mail and vacation have a page of their own (notices.ts), also reached from the inbox.
      h("p", { class: "notice-settings-link" }, h("a", { href: "#/inbox/settings" }, t("account.noticeSettings"))),
      h("section", { class: "card" }, h("h3", {}, t("account.standing")), standing),
      h("section", { class: "card" }, h("h3", {}, t("account.blocked")), blocked),
      ...(player.guest ? [guestNote()] : [passwordCard(client), exportCard(client), deleteCard(client, signedOut)]),
    ),
  );
  void roleOf(client).then((r) => (role.textContent = t("account.role", { role: ROLE_WORDS[r] })));

  client.myStanding().then(
    (answer) => {
      if (signal.aborted) return;
      const items = [
        ...answer.sanctions.map((s) => h("li", { class: "sanction", "data-kind": String(s.kind) }, h("strong", {}, t("account.youAre", { sanction: sanctionWords(s) })), s.reason ? `: ${s.reason}` : "")),
        ...answer.warnings.map((w) => h("li", { class: "warning" }, h("strong", {}, t("account.warning")), ` (${timeWords(w.at)}): ${w.message}`)),
      ];
      mount(standing, items.length === 0 ? h("p", {}, t("account.goodStanding")) : h("ul", {}, ...items));
    },
    (error: unknown) => mount(standing, h("p", { class: "message" }, failure(error))),
  );

  const drawBlocked = (): void => {
    client.listBlocked().then(
      (answer) => {
        if (signal.aborted) return;
        const row = (username: string, what: "blocked" | "muted"): HTMLElement => {
          const undo = h("button", { type: "button", class: what === "blocked" ? "unblock" : "unmute" }, what === "blocked" ? t("account.unblock") : t("account.unmute"));
          const note = h("span", { class: "message" });
          undo.addEventListener("click", () =>
            act(undo, note, async () => {
              await (what === "blocked" ? client.unblockPlayer(username) : client.unmutePlayer(username));
              drawBlocked();
            }),
          );
          return h("li", { "data-player": username, "data-what": what }, h("a", { class: "who player-link", href: profileHref(username) }, username), h("span", { class: "what" }, t(what === "blocked" ? "account.isBlocked" : "account.isMuted")), undo, note);
        };
        const rows = [...answer.blocked.map((p) => row(p.username, "blocked")), ...answer.muted.map((p) => row(p.username, "muted"))];
        mount(
          blocked,
          rows.length === 0 ? h("p", {}, t("account.nobodyBlocked")) : h("ul", { class: "people" }, ...rows),
        );
      },
      (error: unknown) => mount(blocked, h("p", { class: "message" }, failure(error))),
    );
  };
  drawBlocked();
}

/** The name other players see (any script), beside the login name that stays as it is. */
function displayNameCard(client: TafelClient): HTMLElement {
  const input = h("input", { name: "display-name", value: client.player.displayName, placeholder: client.player.username, maxlength: 64 });
  const note = h("p", { class: "message", role: "status" });
  const save = h("button", { type: "submit" }, t("account.save"));
  const form = h(
    "form",
    { class: "card display-name-form" },
    h("h3", {}, t("auth.shownAs")),
    h("p", { class: "hint" }, t(client.player.guest ? "account.shownHintGuest" : "account.shownHint", { name: client.player.username })),
    h("label", {}, t("account.displayName"), " ", input),
    h("div", { class: "actions" }, save),
    note,
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    act(save, note, async () => {
      const player = await client.setDisplayName(input.value);
      keepSession(client);
      input.value = player.displayName;
      const me = document.querySelector<HTMLElement>("a.me");
      if (me !== null) me.textContent = meLabel(player);
      return t("account.nowSeen", { name: player.displayName || player.username });
    });
  });
  return form;
}

const POLICIES: [social.ChallengePolicy, string, string][] = [
  [social.ChallengePolicy.EVERYONE, t("account.policy.everyone"), t("account.policy.everyoneSaid")],
  [social.ChallengePolicy.FOLLOWED, t("account.policy.followed"), t("account.policy.followedSaid")],
  [social.ChallengePolicy.NOBODY, t("account.policy.nobody"), t("account.policy.nobodySaid")],
];

/** Chat on or off in your games, rooms and tournaments, and who may challenge you by name. */
function settingsCard(client: TafelClient, signal: AbortSignal): HTMLElement {
  const chat = h("input", { type: "checkbox", name: "chat-enabled", disabled: true });
  const policy = h("select", { name: "challenge-policy", disabled: true }, ...POLICIES.map(([value, words]) => h("option", { value }, words)));
  const note = h("p", { class: "message", role: "status" });
  const save = h("button", { type: "submit", class: "save-settings", disabled: true }, t("account.save"));
  const form = h(
    "form",
    { class: "card settings-form", id: "settings" },
    h("h3", {}, t("account.settings")),
    h("label", { class: "inline" }, chat, t("account.chatSetting")),
    h("label", {}, t("account.whoMayChallenge"), " ", policy),
    h("p", { class: "hint" }, t("account.policyHint")),
    h("div", { class: "actions" }, save),
    note,
  );
  const show = (settings: social.PlayerSettings | undefined): void => {
    chat.checked = settings?.chatEnabled ?? true;
    policy.value = String(settings?.challengePolicy || social.ChallengePolicy.EVERYONE);
    chat.disabled = policy.disabled = save.disabled = false;
  };
  client.call((o) => client.profiles.getMySettings({}, { ...o, signal })).then(
    (answer) => show(answer.settings),
    (error: unknown) => {
      if (!signal.aborted) note.textContent = failure(error);
    },
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    act(save, note, async () => {
      const answer = await client.call((o) => client.profiles.updateMySettings({ chatEnabled: chat.checked, challengePolicy: Number(policy.value) as social.ChallengePolicy }, o));
      show(answer.settings);
      const who = POLICIES.find(([value]) => value === answer.settings?.challengePolicy)?.[2] ?? POLICIES[0]![2];
      return t(answer.settings?.chatEnabled ? "account.savedChatOn" : "account.savedChatOff", { who });
    });
  });
  return form;
}

function guestNote(): HTMLElement {
  return h(
    "section",
    { class: "card" },
    h("h3", {}, t("account.guestTitle")),
    h("p", {}, t("account.guestText")),
  );
}

function passwordCard(client: TafelClient): HTMLElement {
  const current = h("input", { type: "password", name: "current-password", autocomplete: "current-password", required: true });
  const next = h("input", { type: "password", name: "new-password", autocomplete: "new-password", minlength: 8, required: true });
  const again = h("input", { type: "password", name: "repeat-password", autocomplete: "new-password", minlength: 8, required: true });
  const save = h("button", { type: "submit", class: "change-password" }, t("account.changePassword"));
  const message = h("p", { class: "message", role: "status" });
  const form = h(
    "form",
    { class: "card password-form" },
    h("h3", {}, t("account.changePassword")),
    h("label", {}, t("account.currentPassword"), " ", current),
    h("label", {}, t("account.newPassword"), " ", next),
    h("label", {}, t("account.newPasswordAgain"), " ", again),
    h("div", { class: "actions" }, save),
    message,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (next.value !== again.value) {
      message.textContent = t("account.passwordsDiffer");
      return;
    }
    act(save, message, async () => {
      await client.changePassword(current.value, next.value);
      keepSession(client); // the answer's fresh session: a reload stays signed in
      form.reset();
      return t("account.passwordChanged");
    });
  });
  return form;
}

function exportCard(client: TafelClient): HTMLElement {
  const button = h("button", { type: "button", class: "export" }, t("account.download"));
  const message = h("p", { class: "message", role: "status" });
  button.addEventListener("click", () =>
    act(button, message, async () => {
      const json = await client.exportMyData();
      const url = URL.createObjectURL(new Blob([json], { type: "application/json" }));
      const link = h("a", { href: url, download: `tafel-${client.player.username}.json` });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      return t("account.downloaded", { size: formatNumber(Math.ceil(json.length / 1024)) });
    }),
  );
  return h(
    "section",
    { class: "card" },
    h("h3", {}, t("account.data")),
    h("p", {}, t("account.dataText")),
    h("div", { class: "actions" }, button),
    message,
  );
}

function deleteCard(client: TafelClient, signedOut: () => void): HTMLElement {
  const password = h("input", { type: "password", name: "delete-password", autocomplete: "current-password", required: true });
  const button = h("button", { type: "submit", class: "delete-account danger" }, t("account.deleteButton"));
  const message = h("p", { class: "message", role: "status" });
  const form = h(
    "form",
    { class: "card danger-zone" },
    h("h3", {}, t("account.delete")),
    h("p", {}, t("account.deleteText")),
    h("label", {}, t("auth.password"), " ", password),
    h("div", { class: "actions" }, button),
    message,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const name = client.player.username;
    if (!confirm(t("account.deleteConfirm", { name }))) return;
    act(button, message, async () => {
      await client.deleteAccount(password.value);
      forget(client);
      signedOut();
    });
  });
  return form;
}
