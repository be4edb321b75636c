// "My account" (#/account): the display name and the settings beside it (chat on or off, who may
// challenge you: ProfileService.GetMySettings / UpdateMySettings), the account's standing (warnings, sanctions in force), the players it
// blocks and mutes (with undo), a new password, everything the platform keeps about it as a JSON
// download, and deleting it for good (after a confirmation).
import { h, mount } from "./dom.js";
import { profileHref } from "./names.js";
import { playerName as nameOf, social, type TafelClient } from "./sdk.js";
import { forget, save as keepSession } from "./session.js";
import { act, failure, ROLE_WORDS, roleOf, sanctionWords, timeWords } from "./standing.js";

export function accountPage(root: HTMLElement, client: TafelClient, signal: AbortSignal, signedOut: () => void): void {
  const player = client.player;
  const role = h("span", { class: "role" });
  const standing = h("div", { class: "standing" }, h("p", { class: "wait" }, "Loading…"));
  const blocked = h("div", { class: "blocked-list" }, h("p", { class: "wait" }, "Loading…"));
  mount(
    root,
    h(
      "section",
      { class: "account-page" },
      h("h2", {}, "My account"),
      h("p", {}, h("strong", {}, nameOf(player)), player.displayName ? (player.guest ? ` (${player.username})` : ` (signs in as ${player.username})`) : "", player.guest ? " (guest)" : "", " · ", role, player.guest ? "" : " · ", player.guest ? "" : h("a", { href: profileHref(player.username), class: "my-profile" }, "my profile")),
      displayNameCard(client),
      settingsCard(client, signal),
      h("section", { class: "card" }, h("h3", {}, "Warnings and sanctions"), standing),
      h("section", { class: "card" }, h("h3", {}, "Blocked and muted players"), blocked),
      ...(player.guest ? [guestNote()] : [passwordCard(client), exportCard(client), deleteCard(client, signedOut)]),
    ),
  );
  void roleOf(client).then((r) => (role.textContent = `role: ${ROLE_WORDS[r]}`));

  client.myStanding().then(
    (answer) => {
      if (signal.aborted) return;
      const items = [
        ...answer.sanctions.map((s) => h("li", { class: "sanction", "data-kind": String(s.kind) }, h("strong", {}, `You are ${sanctionWords(s)}`), s.reason ? `: ${s.reason}` : "")),
        ...answer.warnings.map((w) => h("li", { class: "warning" }, h("strong", {}, "Warning"), ` (${timeWords(w.at)}): ${w.message}`)),
      ];
      mount(standing, items.length === 0 ? h("p", {}, "None: you are in good standing.") : h("ul", {}, ...items));
    },
    (error: unknown) => mount(standing, h("p", { class: "message" }, failure(error))),
  );

  const drawBlocked = (): void => {
    client.listBlocked().then(
      (answer) => {
        if (signal.aborted) return;
        const row = (username: string, what: "blocked" | "muted"): HTMLElement => {
          const undo = h("button", { type: "button", class: what === "blocked" ? "unblock" : "unmute" }, what === "blocked" ? "Unblock" : "Unmute");
          const note = h("span", { class: "message" });
          undo.addEventListener("click", () =>
            act(undo, note, async () => {
              await (what === "blocked" ? client.unblockPlayer(username) : client.unmutePlayer(username));
              drawBlocked();
            }),
          );
          return h("li", { "data-player": username, "data-what": what }, h("a", { class: "who player-link", href: profileHref(username) }, username), h("span", { class: "what" }, what), undo, note);
        };
        const rows = [...answer.blocked.map((p) => row(p.username, "blocked")), ...answer.muted.map((p) => row(p.username, "muted"))];
        mount(
          blocked,
          rows.length === 0 ? h("p", {}, "Nobody. Open a player's name on a game page to block, mute or report them.") : h("ul", { class: "people" }, ...rows),
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
  const save = h("button", { type: "submit" }, "Save");
  const form = h(
    "form",
    { class: "card display-name-form" },
    h("h3", {}, "Shown as"),
    h("p", { class: "hint" }, `Other players see this name; ${client.player.guest ? "your guest name stays" : "you still sign in as"} ${client.player.username}. Any letters, digits and spaces, up to 32 characters; leave it empty to be shown as ${client.player.username}.`),
    h("label", {}, "Display name ", input),
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
      if (me !== null) me.textContent = `${nameOf(player)}${player.guest ? " (guest)" : ""}`;
      return player.displayName ? `Others now see you as ${player.displayName}.` : `Others now see you as ${player.username}.`;
    });
  });
  return form;
}

const POLICIES: [social.ChallengePolicy, string, string][] = [
  [social.ChallengePolicy.EVERYONE, "Everyone", "anyone may challenge you"],
  [social.ChallengePolicy.FOLLOWED, "Players I follow", "only players you follow may challenge you"],
  [social.ChallengePolicy.NOBODY, "Nobody", "nobody may challenge you by name"],
];

/** Chat on or off in your games, rooms and tournaments, and who may challenge you by name. */
function settingsCard(client: TafelClient, signal: AbortSignal): HTMLElement {
  const chat = h("input", { type: "checkbox", name: "chat-enabled", disabled: true });
  const policy = h("select", { name: "challenge-policy", disabled: true }, ...POLICIES.map(([value, words]) => h("option", { value }, words)));
  const note = h("p", { class: "message", role: "status" });
  const save = h("button", { type: "submit", class: "save-settings", disabled: true }, "Save");
  const form = h(
    "form",
    { class: "card settings-form", id: "settings" },
    h("h3", {}, "Settings"),
    h("label", { class: "inline" }, chat, "Chat: show and write chat in my games, rooms and tournaments"),
    h("label", {}, "Who may challenge me ", policy),
    h("p", { class: "hint" }, "Open challenges and finding a match are not affected: anyone may take an open challenge of yours."),
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
      return `Saved: chat is ${answer.settings?.chatEnabled ? "on" : "off"}; ${who}.`;
    });
  });
  return form;
}

function guestNote(): HTMLElement {
  return h(
    "section",
    { class: "card" },
    h("h3", {}, "A guest account"),
    h("p", {}, "A guest has no password and nothing kept to export or delete: it ends when you sign out. Its games are not rated, because a rating must follow one person from game to game and a guest is gone once signed out. Register an account to keep your name and games and to be rated."),
  );
}

function passwordCard(client: TafelClient): HTMLElement {
  const current = h("input", { type: "password", name: "current-password", autocomplete: "current-password", required: true });
  const next = h("input", { type: "password", name: "new-password", autocomplete: "new-password", minlength: 8, required: true });
  const again = h("input", { type: "password", name: "repeat-password", autocomplete: "new-password", minlength: 8, required: true });
  const save = h("button", { type: "submit", class: "change-password" }, "Change password");
  const message = h("p", { class: "message", role: "status" });
  const form = h(
    "form",
    { class: "card password-form" },
    h("h3", {}, "Change password"),
    h("label", {}, "Current password ", current),
    h("label", {}, "New password (8 characters or more) ", next),
    h("label", {}, "New password again ", again),
    h("div", { class: "actions" }, save),
    message,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (next.value !== again.value) {
      message.textContent = "The two new passwords differ.";
      return;
    }
    act(save, message, async () => {
      await client.changePassword(current.value, next.value);
      keepSession(client); // the answer's fresh session: a reload stays signed in
      form.reset();
      return "Password changed. You were signed out everywhere else.";
    });
  });
  return form;
}

function exportCard(client: TafelClient): HTMLElement {
  const button = h("button", { type: "button", class: "export" }, "Download my data (JSON)");
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
      return `Downloaded (${Math.ceil(json.length / 1024)} KB).`;
    }),
  );
  return h(
    "section",
    { class: "card" },
    h("h3", {}, "Your data"),
    h("p", {}, "Everything the platform keeps about you, as one JSON file: your account, games, ratings, blocks and mutes, reports you made, warnings and sanctions."),
    h("div", { class: "actions" }, button),
    message,
  );
}

function deleteCard(client: TafelClient, signedOut: () => void): HTMLElement {
  const password = h("input", { type: "password", name: "delete-password", autocomplete: "current-password", required: true });
  const button = h("button", { type: "submit", class: "delete-account danger" }, "Delete my account…");
  const message = h("p", { class: "message", role: "status" });
  const form = h(
    "form",
    { class: "card danger-zone" },
    h("h3", {}, "Delete my account"),
    h("p", {}, "Your name, password, ratings and everything personal are erased. Finished games stay, with your name replaced. This cannot be undone."),
    h("label", {}, "Password ", password),
    h("div", { class: "actions" }, button),
    message,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const name = client.player.username;
    if (!confirm(`Delete the account ${name} for good? This cannot be undone.`)) return;
    act(button, message, async () => {
      await client.deleteAccount(password.value);
      forget(client);
      signedOut();
    });
  });
  return form;
}
