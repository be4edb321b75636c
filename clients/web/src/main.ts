// The app's entry: sign in (kept across reloads), then a page per location hash:
//   #/ lobby · #/room/CODE · #/game/ID (play or watch) · #/replay/ID · #/leaderboards ·
//   #/tournaments · #/tournament/ID · #/player/USERNAME (a profile) · #/account (my account and settings) ·
//   #/staff/... (admin.ts) · #/howto/GAME (also before signing in) · #/inbox (notices) ·
//   #/inbox/settings (notices, e-mail, vacation) · #/email/confirm?token=… (also before signing in)
import { accountPage } from "./account.js";
import { accountEvents } from "./account-events.js";
import { staffPage } from "./admin.js";
import { challengeTray, closeTray } from "./challenges.js";
import { h, mount } from "./dom.js";
import "./contrast.js"; // the header's high-contrast toggle (access)
import { gamePage } from "./game.js";
import { howToPage } from "./howto.js";
import { langSwitcher, t } from "./i18n.js";
import { leaderboardsPage } from "./leaderboards.js";
import { lobbyPage } from "./lobby.js";
import { Metrics } from "./metrics.js";
import { bell, emailLinkPage, inboxPage, noticeSettingsPage } from "./notices.js";
import { profilePage } from "./profile.js";
import { replayPage } from "./replay.js";
import { roomPage } from "./room.js";
import { explain } from "./say.js";
import type { TafelClient } from "./sdk.js";
import { forget, newClient, restore, signIn, signOut } from "./session.js";
import { accountLinks, sanctionInterceptor, sanctionPage, type AccountSanction } from "./standing.js";
import { tournamentPage, tournamentsPage } from "./tournaments.js";

function authPage(root: HTMLElement, client: TafelClient, done: () => void): void {
  const username = h("input", { name: "username", autocomplete: "username", placeholder: t("auth.namePlaceholder") });
  const password = h("input", { name: "password", type: "password", autocomplete: "current-password", placeholder: t("auth.passwordPlaceholder") });
  // The name others see, in any script; the login name above stays plain letters and digits.
  const shown = h("input", { name: "display-name", autocomplete: "nickname", placeholder: t("auth.shownPlaceholder"), maxlength: 64 });
  const message = h("p", { class: "message", role: "alert" });
  const act = (how: "guest" | "signin" | "register") => () => {
    message.textContent = "";
    signIn(client, how, username.value, password.value, shown.value).then(done, (error: unknown) => {
      message.textContent = explain(error);
    });
  };
  const form = h(
    "form",
    { class: "auth" },
    h("h2", {}, t("auth.welcome")),
    h("label", {}, t("auth.name"), " ", username),
    h("label", {}, t("auth.password"), " ", password),
    h("label", {}, t("auth.shownAs"), " ", shown),
    h("p", { class: "hint" }, t("auth.hint")),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "signin" }, t("auth.signIn")), h("button", { type: "button", class: "register", onclick: act("register") }, t("auth.register")), h("button", { type: "button", class: "guest", onclick: act("guest") }, t("auth.guest"))),
    h("p", { class: "hint guest-rating" }, t("auth.guestHint")),
    message,
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    act("signin")();
  });
  mount(root, form);
}

/** The header's links and the language switcher, in the player's language (before signing in too). */
function header(): void {
  const nav = document.getElementById("nav")!;
  nav.setAttribute("aria-label", t("nav.main"));
  mount(nav, h("a", { href: "#/" }, t("nav.lobby")), " ", h("a", { href: "#/tournaments" }, t("nav.tournaments")), " ", h("a", { href: "#/leaderboards" }, t("nav.leaderboards")));
  mount(document.getElementById("lang")!, langSwitcher());
  mount(document.getElementById("app")!, h("p", {}, t("loading")));
}

async function start(): Promise<void> {
  header();
  let sanctioned: AccountSanction | undefined;
  // A suspension or ban refused a call: whatever page is open gives way to the reason and its end.
  const client = newClient([
    sanctionInterceptor((sanction) => {
      if (sanctioned !== undefined) return;
      sanctioned = sanction;
      route();
    }),
  ]);
  const metrics = new Metrics();
  (window as unknown as { tafelMetrics: Metrics }).tafelMetrics = metrics;
  const user = document.getElementById("user")!;
  const root = document.getElementById("app")!;
  let page = new AbortController();
  const go = (hash: string): void => {
    if (location.hash === hash) route();
    else location.hash = hash;
  };
  const route = (): void => {
    page.abort();
    page = new AbortController();
    if (sanctioned !== undefined) {
      accountEvents.stop();
      closeTray();
      mount(user);
      return sanctionPage(root, sanctioned, () => {
        forget(client);
        sanctioned = undefined;
        route();
      });
    }
    // #/game/ID/tournament/TID: a tournament's game, with the way back to its tournament.
    const [, kind, id, , parent] = location.hash.split("/");
    // A mail's link (confirm the address, unsubscribe) works signed in or not: the token is the proof.
    if (kind === "email" && id) return emailLinkPage(root, client, id);
    if (client.session === undefined) {
      accountEvents.stop();
      closeTray();
      mount(user);
      if (kind === "howto" && id) return howToPage(root, id, client); // learning a game needs no account
      return authPage(root, client, route);
    }
    // One account event stream for the signed-in page; the challenge tray under the header.
    accountEvents.follow(client);
    user.closest("header")?.after(challengeTray(client, go));
    const out = h("button", { class: "signout" }, t("auth.signOut"));
    out.addEventListener("click", () => void signOut(client).finally(route));
    mount(user, bell(client, page.signal), ...accountLinks(client), out);
    if (kind === "howto" && id) howToPage(root, id, client);
    else if (kind === "game" && id) gamePage(root, client, id, { go, metrics, tournamentId: parent }, page.signal);
    else if (kind === "room" && id) roomPage(root, client, id, go, page.signal);
    else if (kind === "replay" && id) replayPage(root, client, id, page.signal);
    else if (kind === "player" && id) profilePage(root, client, decodeURIComponent(id), page.signal);
    else if (kind === "inbox" && id === "settings") noticeSettingsPage(root, client, page.signal);
    else if (kind === "inbox") inboxPage(root, client, page.signal);
    else if (kind === "account") accountPage(root, client, page.signal, () => go("#/"));
    else if (kind === "staff") staffPage(root, client, location.hash, go, page.signal);
    else if (kind === "leaderboards") leaderboardsPage(root, client, page.signal);
    else if (kind === "tournaments") tournamentsPage(root, client, go, page.signal);
    else if (kind === "tournament" && id) tournamentPage(root, client, id, page.signal);
    else lobbyPage(root, client, go, page.signal);
  };
  window.addEventListener("hashchange", route);
  await restore(client).catch((error: unknown) => {
    if (sanctioned === undefined) throw error; // a suspended or banned account's page is up already
  });
  route();
}

void start();
