// An account's standing in the app: the interceptor that notices a suspension or ban on any call (a
// stream's end included) and the page that says why and until when instead of a generic error;
// the caller's role, for the staff link in the header; times and refusals in words for the
// account, safety and staff pages.
import { h, mount } from "./dom.js";
import { accountSanction, fromCallError, play, playerName as nameOf, safety, TafelError, type Interceptor, type TafelClient } from "./sdk.js";
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

/** "Tuesday 8 December 2026 at 14:30" in the reader's language and time zone. */
export function dateWords(at: Date): string {
  return at.toLocaleString(undefined, { weekday: "long", day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit" });
}

/** "in 3 days", "in 5 hours", "in 12 minutes" (or "… ago"). */
export function fromNow(at: Date, now = Date.now()): string {
  const seconds = Math.round((at.getTime() - now) / 1000);
  const units: [Intl.RelativeTimeFormatUnit, number][] = [["day", 86_400], ["hour", 3600], ["minute", 60]];
  const words = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size) return words.format(Math.round(seconds / size), unit);
  }
  return words.format(seconds, "second");
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
      h("h2", {}, sanction.banned ? "Your account is banned" : "Your account is suspended"),
      h("p", { class: "why" }, h("span", { class: "label" }, "Reason: "), sanction.why),
      h(
        "p",
        { class: "until" },
        end === undefined ? "It lasts until a moderator lifts it." : `You can play again from ${dateWords(end)} (${fromNow(end)}).`,
      ),
      h("p", {}, "Until then you cannot sign in, play or watch with this account."),
      h("button", { type: "button", class: "leave", onclick: signOut }, "Sign in with another account"),
    ),
  );
}

export const STAFF_ROLES: ReadonlySet<play.Role> = new Set([play.Role.MODERATOR, play.Role.ADMIN]);

export const ROLE_WORDS: Record<play.Role, string> = {
  [play.Role.UNSPECIFIED]: "player",
  [play.Role.PLAYER]: "player",
  [play.Role.ORGANISER]: "tournament organiser",
  [play.Role.MODERATOR]: "moderator",
  [play.Role.ADMIN]: "admin",
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

/** The header's links for the signed-in account: the name opens "my account"; moderators and
 * admins also get "Staff" (shown once GetMe says so). */
export function accountLinks(client: TafelClient): HTMLElement[] {
  const me = h("a", { class: "me", href: "#/account", title: "My account" }, `${nameOf(client.player)}${client.player.guest ? " (guest)" : ""}`);
  const staff = h("a", { class: "staff-link", href: "#/staff", hidden: true }, "Staff");
  void roleOf(client).then((role) => {
    staff.hidden = !STAFF_ROLES.has(role);
  });
  return [staff, me];
}

export const SANCTION_WORDS: Record<safety.SanctionKind, string> = {
  [safety.SanctionKind.UNSPECIFIED]: "sanction",
  [safety.SanctionKind.CHAT_MUTE]: "muted in chat",
  [safety.SanctionKind.SUSPENSION]: "suspended",
  [safety.SanctionKind.BAN]: "banned",
};

/** "suspended until Tuesday … (in 3 days): reason". */
export function sanctionWords(sanction: safety.Sanction): string {
  const ends = timestampMs(sanction.endsAt);
  const until = ends === undefined ? "until lifted" : `until ${dateWords(new Date(ends))} (${fromNow(new Date(ends))})`;
  return `${SANCTION_WORDS[sanction.kind]} ${until}`;
}

/** A refusal in a sentence for the staff and account pages (the server's message, which names
 * the problem; a dropped network in plain words). */
export function failure(error: unknown): string {
  if (error instanceof TafelError) {
    if (error.reason === "UNAVAILABLE" || /fetch|network/i.test(error.detail)) return "The server is not answering. Try again in a moment.";
    const text = error.detail.trim();
    return text === "" ? error.reason : `${text[0]!.toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? "" : "."}`;
  }
  return error instanceof Error ? error.message : String(error);
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
