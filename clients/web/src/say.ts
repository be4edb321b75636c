// Everything the app says about a failure, in a player's words and language: never a status code,
// an enum name, a seat number or the server's English message. A refusal is said by its reason code
// (locales/<lang>/reasons.json, one sentence per reason of protos/tafel/games/v1/reasons.proto, its
// metadata such as "until" formatted for the language); a game's own wording comes from its module
// (games/); a reason this app does not know gets a general sentence.
import { gameUi } from "./games/index.js";
import { formatDateTime, formatDuration, formatList, has, t } from "./i18n.js";
import { Code, TafelError, type games } from "./sdk.js";

/** "a, b and c" / "a, b en c" / "a, b und c". */
export function andList(items: string[]): string {
  return formatList(items);
}

const OFFLINE: ReadonlySet<Code> = new Set([Code.Unavailable, Code.Unknown, Code.DeadlineExceeded, Code.Internal, Code.Canceled]);

/** The refusal's metadata as words for its sentence: times in the player's language. */
function facts(error: TafelError): Record<string, string> {
  const out: Record<string, string> = {};
  const until = Date.parse(error.metadata.until ?? "");
  out.until = Number.isNaN(until) ? "?" : formatDateTime(until);
  // The wait: chat's retry_after_ms; a sign-in throttle says it only in its message ("wait 12 s").
  const ms = Number(error.metadata.retry_after_ms ?? NaN);
  const seconds = /wait (\d+) s/.exec(error.detail)?.[1];
  const wait = Number.isFinite(ms) ? ms : seconds !== undefined ? Number(seconds) * 1000 : NaN;
  out.wait = Number.isFinite(wait) ? formatDuration(Math.max(1000, Math.ceil(wait / 1000) * 1000)) : t("reasons:general.a_moment");
  // A tournament's entry: when registration opens, the rating or rated games it needs.
  const opens = Date.parse(error.metadata.opens_at ?? "");
  out.opens_at = Number.isNaN(opens) ? "?" : formatDateTime(opens);
  out.min_rating = error.metadata.min_rating ?? "?";
  out.min_rated_games = error.metadata.min_rated_games ?? "?";
  return out;
}

/** A refusal's reason in words, or undefined when this app has no sentence for it. */
export function reasonWords(error: TafelError): string | undefined {
  if (!/^[A-Z][A-Z0-9_]*$/.test(error.reason) || !has(`reasons:${error.reason}`)) return undefined;
  const said = t(`reasons:${error.reason}`, facts(error));
  // A suspension's or ban's reason is the moderator's own words, shown as written.
  const why = error.metadata.reason;
  return why && (error.reason === "ACCOUNT_SUSPENDED" || error.reason === "ACCOUNT_BANNED") ? `${said} ${t("reasons:general.moderator", { reason: why })}` : said;
}

/** Any failure of a call, in words. */
export function explain(error: unknown): string {
  if (error instanceof TafelError) {
    const known = reasonWords(error);
    if (known !== undefined) return known;
    if (error.code === Code.ResourceExhausted) return t("reasons:RATE_LIMITED");
    if (OFFLINE.has(error.code)) return t("reasons:general.offline");
    return t("reasons:general.unknown");
  }
  if (error instanceof TypeError) return t("reasons:general.offline");
  return t("reasons:general.failed");
}

/** A refused move in words: the game's wording, else the general one. */
export function refusal(game: string, error: TafelError, move: games.GameMove | undefined, waitingFor: string[]): string {
  const own = gameUi(game)?.refusal?.(error.reason, move);
  if (own !== undefined) return own;
  switch (error.reason) {
    case "NOT_YOUR_TURN":
      return waitingFor.length > 0 ? t("reasons:general.notYourTurnWaiting", { names: andList(waitingFor) }) : t("reasons:NOT_YOUR_TURN");
    default:
      return explain(error);
  }
}

/** How a game ended, for "How it ended: …". */
export function ending(game: string, reason: string): string {
  const own = gameUi(game)?.endings?.[reason];
  if (own !== undefined) return own;
  return has(`common:ending.${reason}`) ? t(`common:ending.${reason}`) : reason.toLowerCase().replaceAll("_", " ");
}

/** How a game ended, told from its events where the reason alone misleads: players who
 * resigned or ran out of time and left the others to play on are named first, and an ending a
 * player calls (the game module's calledEnding) is said only with the player who called it. */
export function endingStory(game: string, reason: string, events: games.GameEvent[], names: string[]): string {
  const who = (seat: number): string => names[seat] ?? t("common:ending.player", { n: seat + 1 });
  const left: string[] = [];
  let caller: number | undefined;
  const calledEnding = gameUi(game)?.calledEnding;
  for (const e of events) {
    if (e.kind.case === "resigned") left.push(t("common:ending.resignedBy", { name: who(e.kind.value.seat) }));
    else if (e.kind.case === "timedOut" && e.kind.value.removed) left.push(t("common:ending.timedOutBy", { name: who(e.kind.value.seat) }));
    else if (e.kind.case === game && calledEnding !== undefined) caller = calledEnding.caller(e.kind.value) ?? caller;
  }
  const called = reason === calledEnding?.reason ? (caller !== undefined ? t("common:ending.calledBy", { name: who(caller) }) : t("common:ending.playedOut")) : ending(game, reason);
  if (reason === "RESIGNED" || reason === "TIMEOUT") return left.length > 0 ? andList(left) : ending(game, reason);
  if (left.length === 0) return called;
  return t("common:ending.then", { left: andList(left), called });
}
