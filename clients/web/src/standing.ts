// An account's standing in the app: the interceptor that notices a suspension or ban on any call (a
// stream's end included) and the page that says why and until when instead of a generic error;
// the caller's role, for the staff link in the header; times and refusals in words for the
// account, safety and staff pages.
import { h, mount } from "./dom.js";
import { formatDateTime, formatRelative, t } from "./i18n.js";
import { nameOf } from "./names.js";
import { explain } from "./say.js";
import { accountSanction, fromCallError, play, safety, TafelError, type Interceptor, type TafelClient } from "./sdk.js";
import { timestampMs } from "./time.js";

export type AccountSanction = NonNullable<ReturnType<typeof accountSanction>>;

/** An interceptor that reports every refusal with ACCOUNT_SUSPENDED / ACCOUNT_BANNED (a unary
 * answer, or a stream such as WatchGame ended by the server) to `onSanction` before the page that
 * made the call sees it: whatever page the person is on, they are told why. */
export function sanctionInterceptor(onSanction: (sanction: AccountSanction) => void): Interceptor {
  const check = (error: unknown): void => {
    const sanction = accountSanction(fromCallError(error));
    if (sanction !== undefined) onSanction(sanction);
  };
  async function* watched<T>(messages: AsyncIterable<T>): AsyncIterable<T> {
    try {
      yield* messages;
    } catch (error) {
      check(error);
      throw error;
    }
  }
  return (next) => async (request) => {
    try {
      const response = await next(request);
      return response.stream ? { ...response, message: watched(response.message) } : response;
    } catch (error) {
      check(error);
      throw error;
    }
  };
}

/** "Tuesday 8 December 2026 at 14:30" in the player's language and the reader's time zone. */
export function dateWords(at: Date): string {
  return formatDateTime(at, { weekday: "long", day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit" });
}

/** "in 3 days", "in 5 hours", "in 12 minutes" (or "… ago"), in the player's language. */
export function fromNow(at: Date, now = Date.now()): string {
  const seconds = Math.round((at.getTime() - now) / 1000);
  const days = Math.abs(seconds) >= 86_400;
  // Days at most: "in 30 days" reads better on a sanction than "in 4 weeks".
  return days ? new Intl.RelativeTimeFormat(document.documentElement.lang || undefined, { numeric: "auto" }).format(Math.round(seconds / 86_400), "day") : formatRelative(at, now);
}

export function timeWords(t: { seconds: bigint; nanos: number } | undefined): string {
  const ms = timestampMs(t);
  return ms === undefined ? "" : dateWords(new Date(ms));
}

/** The page a suspended or banned person sees: the reason the moderator wrote, the end in words. */
export function sanctionPage(root: HTMLElement, sanction: AccountSanction, signOut: () => void): void {
  const end = sanction.until;
  mount(
    root,
    h(
      "section",
      { class: "sanction-notice", role: "alert", "data-kind": sanction.banned ? "ban" : "suspension" },
      h("h2", {}, t(sanction.banned ? "standing.banned" : "standing.suspended")),
      h("p", { class: "why" }, h("span", { class: "label" }, `${t("standing.reason")} `), sanction.why),
      h(
        "p",
        { class: "until" },
        end === undefined ? t("standing.untilLifted") : t("standing.playAgainFrom", { when: dateWords(end), relative: fromNow(end) }),
      ),
      h("p", {}, t("standing.meanwhile")),
      h("button", { type: "button", class: "leave", onclick: signOut }, t("standing.another")),
    ),
  );
}

export const STAFF_ROLES: ReadonlySet<play.Role> = new Set([play.Role.MODERATOR, play.Role.ADMIN]);

export const ROLE_WORDS: Record<play.Role, string> = {
  [play.Role.UNSPECIFIED]: t("role.player"),
  [play.Role.PLAYER]: t("role.player"),
  [play.Role.ORGANISER]: t("role.organiser"),
  [play.Role.MODERATOR]: t("role.moderator"),
  [play.Role.ADMIN]: t("role.admin"),
};

const roles = new Map<string, Promise<play.Role>>();

/** The signed-in account's role, asked once per session (GetMe); a failure counts as a player's. */
export function roleOf(client: TafelClient): Promise<play.Role> {
  const token = client.session?.token ?? "";
  let role = roles.get(token);
  if (role === undefined) {
    role = client.myRole().catch(() => play.Role.PLAYER);
    roles.set(token, role);
  }
  return role;
}

/** The header's name: "Jörg", "Jörg (guest)". */
export function meLabel(player: play.Player): string {
  return player.guest ? t("account.guestName", { name: nameOf(player) }) : nameOf(player);
}

/** The header's links for the signed-in account: the name opens "my account"; moderators and
 * admins also get "Staff" (shown once GetMe says so). */
export function accountLinks(client: TafelClient): HTMLElement[] {
  const me = h("a", { class: "me", href: "#/account", title: t("account.title") }, meLabel(client.player));
  const staff = h("a", { class: "staff-link", href: "#/staff", hidden: true }, t("staff.link"));
  void roleOf(client).then((role) => {
    staff.hidden = !STAFF_ROLES.has(role);
  });
  return [staff, me];
}

export const SANCTION_WORDS: Record<safety.SanctionKind, string> = {
  [safety.SanctionKind.UNSPECIFIED]: t("sanction.sanction"),
  [safety.SanctionKind.CHAT_MUTE]: t("sanction.mutedInChat"),
  [safety.SanctionKind.SUSPENSION]: t("sanction.suspended"),
  [safety.SanctionKind.BAN]: t("sanction.banned"),
};

/** "suspended until Tuesday … (in 3 days): reason". */
export function sanctionWords(sanction: safety.Sanction): string {
  const ends = timestampMs(sanction.endsAt);
  const what = SANCTION_WORDS[sanction.kind];
  return ends === undefined ? t("sanction.untilLifted", { what }) : t("sanction.until", { what, when: dateWords(new Date(ends)), relative: fromNow(new Date(ends)) });
}

/** A refusal in a sentence for the staff and account pages: by its reason, in the player's language. */
export function failure(error: unknown): string {
  return explain(error);
}

/** Runs `action` from a button: disabled meanwhile, the outcome (or the refusal) in `message`. */
export function act(button: HTMLButtonElement, message: HTMLElement, action: () => Promise<string | void>): void {
  button.disabled = true;
  message.textContent = "";
  message.classList.remove("ok");
  action().then(
    (done) => {
      if (done) {
        message.textContent = done;
        message.classList.add("ok");
      }
    },
    (error: unknown) => {
      message.textContent = failure(error);
      if (error instanceof TafelError) message.dataset.reason = error.reason;
    },
  ).finally(() => {
    button.disabled = false;
  });
}
