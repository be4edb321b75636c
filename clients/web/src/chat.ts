// Chat: a pane for one channel — a game's players, its spectators, a room before its
// game, a tournament — and the kept lines beside a replay. The pane opens WatchChat (the latest
// lines as history, then live ones) and, after a dropped stream, opens it again after the last
// line it holds: the server sends every later line once; a line it already shows is not drawn twice
// (the answer to one's own line arrives both ways). Lines are kept in message-id order. Every line
// of someone else's can be reported (the line and its channel go with the report); the author's
// name leads to their profile. Refusals are said in words: too fast (and for how long), muted (until
// when), guests ("register to chat"), chat turned off (with the way to the settings).
import { h, mount } from "./dom.js";
import { formatDateTime, formatRelative, formatTime, t } from "./i18n.js";
import { nameLink } from "./names.js";
import { HIDE_PLAYER_EVENT, openReportDialog } from "./safety.js";
import { explain } from "./say.js";
import { Code, fromCallError, isAfter, sleep, social, TafelError, type TafelClient } from "./sdk.js";
import { timestampMs } from "./time.js";

const { ChatChannelKind } = social;

/** The longest line the server takes (characters once trimmed). */
export const CHAT_MAX = 500;

export interface ChatPaneOptions {
  title: string;
  /** A sentence under the title: who reads this channel. */
  about?: string;
  /** Who writes here, for a viewer who may only read ("Only the players write here."). */
  readOnly?: string;
  /** The game a reported line belongs to (moderators see its record). */
  gameId?: string;
}

/** The channel's name for data-channel and the catalogue (game:chat.writeIn.players, …). */
const CHANNEL_NAMES: Record<number, string> = {
  [ChatChannelKind.GAME_PLAYERS]: "players",
  [ChatChannelKind.GAME_SPECTATORS]: "spectators",
  [ChatChannelKind.ROOM]: "room",
  [ChatChannelKind.TOURNAMENT]: "tournament",
};

export function chatChannel(kind: social.ChatChannelKind, id: string): social.ChatChannel {
  return { $typeName: "tafel.play.v1.ChatChannel", kind, id };
}

/** "14:05" (today) or "3 Dec, 14:05", in the player's language. */
function clockTime(ms: number | undefined): string {
  if (ms === undefined) return "";
  const at = new Date(ms);
  const today = new Date().toDateString() === at.toDateString();
  return today ? formatTime(at, { hour: "2-digit", minute: "2-digit" }) : formatDateTime(at, { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
}

/** A refused line in words (the text stays in the box to send again). */
export function chatRefusal(error: unknown): string {
  if (!(error instanceof TafelError)) return explain(error);
  switch (error.reason) {
    case "CHAT_TOO_FAST": {
      const ms = Number(error.metadata["retry_after_ms"] ?? "0");
      const s = Math.max(1, Math.ceil(ms / 1000));
      return t("game:chat.tooFast", { count: s });
    }
    case "CHAT_MUTED": {
      const until = error.metadata["until"] ? new Date(error.metadata["until"]) : undefined;
      return until && !Number.isNaN(until.getTime())
        ? t("game:chat.mutedUntil", { until: formatDateTime(until, { weekday: "long", day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit" }), fromNow: formatRelative(until) })
        : t("game:chat.mutedLifted");
    }
    case "CHAT_NEEDS_ACCOUNT":
      return t("game:chat.needsAccount");
    case "CHAT_OFF":
      return t("game:chat.off");
    case "CHAT_NOT_ALLOWED":
      return t("game:chat.notAllowed");
    case "CHAT_EMPTY":
      return t("game:chat.empty");
    case "CHAT_TOO_LONG":
      return t("game:chat.tooLong", { max: CHAT_MAX });
    default:
      return explain(error);
  }
}

/** One line: time, the author (a link to the profile), the text, and "Report" for others' lines. */
function lineItem(client: TafelClient, m: social.ChatMessage, gameId: string | undefined): HTMLLIElement {
  const author = m.author;
  const mine = author?.playerId === client.session?.player?.playerId;
  const report = mine || author === undefined
    ? undefined
    : h("button", { type: "button", class: "chat-report", title: t("game:chat.reportTitle"), "aria-label": t("game:chat.reportAria", { name: author.username }) }, t("game:chat.report"));
  report?.addEventListener("click", () => {
    if (author !== undefined) openReportDialog(client, author, { gameId, messageId: m.messageId, chatChannel: m.channel, quote: m.text });
  });
  return h(
    "li",
    { class: `chat-line${mine ? " mine" : ""}`, "data-id": m.messageId, "data-author": author?.username ?? "" },
    h("p", { class: "chat-body" }, h("span", { class: "chat-time" }, clockTime(timestampMs(m.at))), " ", h("span", { class: "chat-author" }, nameLink(author, t("game:chat.someone"))), " ", h("span", { class: "chat-text" }, m.text)),
    report,
  );
}

/** Lines in message-id order, each once. */
class Lines {
  readonly element = h("ol", { class: "chat-lines", "aria-live": "polite", "aria-label": t("game:chat.lines") });
  private readonly ids = new Set<string>();
  last = "";

  add(item: HTMLLIElement): void {
    const id = item.dataset.id ?? "";
    if (this.ids.has(id)) return;
    this.ids.add(id);
    if (this.last === "" || isAfter(id, this.last)) this.last = id;
    const list = this.element;
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
    // Usually the newest: walk back from the end to the first line before it.
    let before: Element | null = null;
    for (let at = list.lastElementChild; at !== null; at = at.previousElementSibling) {
      if (isAfter(id, (at as HTMLElement).dataset.id ?? "")) break;
      before = at;
    }
    list.insertBefore(item, before);
    if (atBottom || item.classList.contains("mine")) list.scrollTop = list.scrollHeight;
  }

  get size(): number {
    return this.ids.size;
  }
}

// A stream that failed with one of these is not opened again (the channel is not there for the
// viewer, or the request was wrong): anything else is a dropped connection, resumed.
const FINAL: ReadonlySet<Code> = new Set([Code.NotFound, Code.PermissionDenied, Code.InvalidArgument, Code.Unauthenticated, Code.FailedPrecondition]);

/** The chat pane for `channel`, live until `signal` aborts. */
export function chatPane(client: TafelClient, channel: social.ChatChannel, opts: ChatPaneOptions, signal: AbortSignal): HTMLElement {
  const lines = new Lines();
  const state = h("p", { class: "chat-state", role: "status" });
  const empty = h("p", { class: "chat-empty hint" }, t("game:chat.noLines"));
  const guest = client.player.guest;
  const input = h("input", {
    type: "text",
    name: "chat",
    class: "chat-input",
    maxlength: CHAT_MAX,
    autocomplete: "off",
    enterkeyhint: "send",
    placeholder: guest ? t("game:chat.registerToChat") : t("game:chat.saySomething"),
    "aria-label": guest ? t("game:chat.registerToChat") : t(`game:chat.writeIn.${CHANNEL_NAMES[channel.kind] ?? "other"}`),
    disabled: guest,
  });
  const send = h("button", { type: "submit", class: "chat-send", disabled: guest }, t("game:chat.send"));
  const count = h("span", { class: "chat-count hint", "aria-live": "polite" });
  const refusal = h("p", { class: "chat-message", role: "alert" });
  const form = h("form", { class: "chat-form" }, h("div", { class: "chat-row" }, input, send), count);
  const guestNote = guest ? h("p", { class: "chat-guest hint" }, t("game:chat.needsAccount")) : undefined;
  const pane = h(
    "section",
    { class: "chat-pane", "data-channel": CHANNEL_NAMES[channel.kind] ?? "", "aria-label": opts.title },
    h("h3", {}, opts.title),
    opts.about ? h("p", { class: "hint chat-about" }, opts.about) : undefined,
    state,
    lines.element,
    empty,
    form,
    guestNote,
    refusal,
  );

  const settingsLink = (): HTMLElement => h("a", { href: "#/account", class: "chat-settings-link" }, t("game:chat.turnOn"));
  const say = (error: unknown): void => {
    refusal.textContent = chatRefusal(error);
    if (error instanceof TafelError) {
      refusal.dataset.reason = error.reason;
      if (error.reason === "CHAT_OFF") refusal.append(" ", settingsLink());
    }
  };

  input.addEventListener("input", () => {
    const left = CHAT_MAX - input.value.length;
    count.textContent = left <= 100 ? t("game:chat.left", { count: left }) : "";
  });
  // One request id per line: sent again after a lost answer, it is still one line.
  let requestId = client.requestIds.next();
  let lastText = "";
  let sending = false;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (sending) return;
    if (text === "") return void (refusal.textContent = t("game:chat.empty"));
    if (text !== lastText) requestId = client.requestIds.next();
    lastText = text;
    sending = true;
    send.disabled = true;
    refusal.textContent = "";
    delete refusal.dataset.reason;
    client
      .call((o) => client.chat.sendChatMessage({ requestId, channel, text }, o))
      .then(
        (sent) => {
          if (sent.message) lines.add(lineItem(client, sent.message, opts.gameId));
          empty.hidden = true;
          input.value = "";
          count.textContent = "";
          lastText = "";
          requestId = client.requestIds.next();
        },
        say,
      )
      .finally(() => {
        sending = false;
        send.disabled = false;
        input.focus();
      });
  });

  // The viewer blocked or muted someone just now: their lines go at once (the server sends no more).
  document.addEventListener(
    HIDE_PLAYER_EVENT,
    (event) => {
      const name = (event as CustomEvent<string>).detail;
      lines.element.querySelectorAll<HTMLElement>("li.chat-line").forEach((li) => {
        if (li.dataset.author === name) li.remove();
      });
    },
    { signal },
  );

  let canWrite = false;
  const show = (off: boolean): void => {
    pane.classList.toggle("off", off);
    lines.element.hidden = off; // chat off: no lines shown, until it is on again
    if (off) {
      mount(state, `${t("game:chat.isOff")} `, settingsLink());
      form.hidden = true;
      empty.hidden = true;
      return;
    }
    mount(state);
    form.hidden = !canWrite && !guest;
    if (!canWrite && !guest) mount(state, opts.readOnly ?? t("game:chat.readOnly"));
    empty.hidden = lines.size > 0;
  };
  const ready = (r: social.ChatReady): void => {
    pane.dataset.ready = "true";
    canWrite = r.canWrite;
    show(r.chatOff);
  };

  void (async () => {
    let delay = 500;
    while (!signal.aborted) {
      try {
        const stream = client.chat.watchChat({ channel, afterMessageId: lines.last }, { headers: client.headers(), signal });
        for await (const response of stream) {
          delay = 500;
          if (response.kind.case === "ready") ready(response.kind.value);
          else if (response.kind.case === "message" || response.kind.case === "lines") {
            // A busy channel's waiting lines come several in one response.
            const said = response.kind.case === "message" ? [response.kind.value] : response.kind.value.messages;
            for (const message of said) lines.add(lineItem(client, message, opts.gameId));
            empty.hidden = true;
            if (pane.classList.contains("off")) show(false); // turned on again elsewhere
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        const why = fromCallError(error);
        if (why.reason === "MESSAGE_ID_OUT_OF_RANGE") {
          lines.last = ""; // the lines after ours are gone: the history again (nothing drawn twice)
          continue;
        }
        if (FINAL.has(why.code)) {
          state.textContent = t("game:chat.notAvailable", { why: chatRefusal(why) });
          state.dataset.reason = why.reason;
          form.hidden = true;
          empty.hidden = true;
          return;
        }
      }
      if (signal.aborted) return;
      state.textContent = t("game:chat.reconnecting");
      await sleep(delay, signal).catch(() => undefined);
      delay = Math.min(delay * 2, 8000);
    }
  })();
  return pane;
}

/** A finished game's kept lines (ListChatMessages), for its replay: oldest first. */
export async function keptLines(client: TafelClient, channel: social.ChatChannel, signal: AbortSignal): Promise<social.ChatMessage[]> {
  const all: social.ChatMessage[] = [];
  let after = "";
  // A game keeps a bounded history; a few pages of 500 hold all of it.
  for (let page = 0; page < 10 && !signal.aborted; page++) {
    const listed = await client.call((o) => client.chat.listChatMessages({ channel, afterMessageId: after, pageSize: 500 }, { ...o, signal }));
    all.push(...listed.messages);
    const last = listed.messages[listed.messages.length - 1];
    if (!listed.more || last === undefined) break;
    after = last.messageId;
  }
  return all;
}

/** The replay's chat: the kept lines of one channel, each with its author's profile link and
 * "Report". */
export function keptChat(client: TafelClient, channel: social.ChatChannel, title: string, messages: social.ChatMessage[]): HTMLElement {
  const list = h("ol", { class: "chat-lines kept" });
  for (const m of messages) list.append(lineItem(client, m, channel.id));
  return h("section", { class: "chat-pane kept", "data-channel": CHANNEL_NAMES[channel.kind] ?? "" }, h("h3", {}, title), messages.length > 0 ? list : h("p", { class: "chat-empty hint" }, t("game:chat.nobodyWrote")));
}
