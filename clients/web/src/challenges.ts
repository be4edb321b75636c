// Challenges: the dialog that challenges a player by name (or anyone: an open
// challenge, or a bot of a level: it accepts at once and the page goes to the room it joins), the tray under the header with the challenges to you (accept, or decline with a
// reason from the list) and by you (cancel), what became of them in words, and the lobby's list
// of open challenges to take. Everything follows the page's one account event stream.
import { accountEvents } from "./account-events.js";
import { clockLabel, clockOptions, chosenClock, timeControlOf } from "./clock.js";
import { h, mount } from "./dom.js";
import { titleOf } from "./games/index.js";
import { t } from "./i18n.js";
import { nameLink, nameOf } from "./names.js";
import { place, slot } from "./place.js";
import { explain } from "./say.js";
import { challenges, type play, type TafelClient } from "./sdk.js";
import { act } from "./standing.js";

const { ChallengeStatus, DeclineReason, SeatPreference } = challenges;

/** The reasons a player may give, in the menu's order (challenges.decline.<NAME> in the menu,
 * challenges.declined.<NAME> as the challenger is told them). */
export const DECLINE_REASONS: challenges.DeclineReason[] = [
  DeclineReason.LATER,
  DeclineReason.TOO_FAST,
  DeclineReason.TOO_SLOW,
  DeclineReason.CASUAL_ONLY,
  DeclineReason.RATED_ONLY,
  DeclineReason.NOT_THIS_GAME,
  DeclineReason.GENERIC,
];

const DECLINE_MENU: Record<number, string> = {
  [DeclineReason.LATER]: t("challenges.decline.LATER"),
  [DeclineReason.TOO_FAST]: t("challenges.decline.TOO_FAST"),
  [DeclineReason.TOO_SLOW]: t("challenges.decline.TOO_SLOW"),
  [DeclineReason.CASUAL_ONLY]: t("challenges.decline.CASUAL_ONLY"),
  [DeclineReason.RATED_ONLY]: t("challenges.decline.RATED_ONLY"),
  [DeclineReason.NOT_THIS_GAME]: t("challenges.decline.NOT_THIS_GAME"),
  [DeclineReason.GENERIC]: t("challenges.decline.GENERIC"),
};

const DECLINE_TOLD: Record<number, string> = {
  [DeclineReason.LATER]: t("challenges.declined.LATER"),
  [DeclineReason.TOO_FAST]: t("challenges.declined.TOO_FAST"),
  [DeclineReason.TOO_SLOW]: t("challenges.declined.TOO_SLOW"),
  [DeclineReason.CASUAL_ONLY]: t("challenges.declined.CASUAL_ONLY"),
  [DeclineReason.RATED_ONLY]: t("challenges.declined.RATED_ONLY"),
  [DeclineReason.NOT_THIS_GAME]: t("challenges.declined.NOT_THIS_GAME"),
  [DeclineReason.NO_BOTS]: t("challenges.declined.NO_BOTS"),
  [DeclineReason.GENERIC]: t("challenges.declined.GENERIC"),
};

export function declineWords(reason: challenges.DeclineReason): string {
  return DECLINE_TOLD[reason] ?? DECLINE_TOLD[DeclineReason.GENERIC]!;
}

function seconds(duration: { seconds: bigint; nanos: number } | undefined): number {
  return duration === undefined ? 0 : Number(duration.seconds) + duration.nanos / 1e9;
}

/** "Connect Four · 1 min a move · casual · you move first", from `viewer`'s side. */
export function challengeTerms(c: challenges.Challenge, viewer: string): string {
  const perMove = seconds(c.timeControl?.perMove);
  const mine = c.challenger?.playerId === viewer;
  let seat = t("challenges.terms.random");
  if (c.seatPreference !== SeatPreference.UNSPECIFIED) {
    const first = c.seatPreference === SeatPreference.FIRST;
    if (mine) seat = first ? t("challenges.terms.youFirst") : t("challenges.terms.youSecond");
    else seat = first ? t("challenges.terms.theyFirst", { name: nameOf(c.challenger) }) : t("challenges.terms.theySecond", { name: nameOf(c.challenger) });
  }
  return [titleOf(c.game), perMove > 0 ? clockLabel(perMove) : "", c.rated ? t("challenges.terms.rated") : t("challenges.terms.casual"), seat].filter(Boolean).join(" · ");
}

/** The name of the other side of a challenge (or "anyone" for an open one). */
function otherSide(c: challenges.Challenge, viewer: string): string {
  if (c.challenger?.playerId !== viewer) return nameOf(c.challenger);
  if (c.botLevel > 0) return t("name.botLevel", { level: c.botLevel });
  return c.challenged === undefined ? t("challenges.anyone") : nameOf(c.challenged);
}

// -- the dialog -------------------------------------------------------------------------------

/** Challenge `player` (or, with none, a name typed in or anyone) to a game. */
export function openChallengeDialog(client: TafelClient, player?: play.Player, go?: (hash: string) => void): HTMLDialogElement {
  const message = h("p", { class: "challenge-message", role: "status" });
  const close = h("button", { type: "button", class: "close" }, t("challenges.dialog.close"));
  const username = h("input", { name: "username", autocomplete: "off", placeholder: t("challenges.dialog.namePlaceholder"), required: true });
  const anyone = h("input", { type: "checkbox", name: "open" });
  const bot = h("select", { name: "bot" }, h("option", { value: "" }, t("challenges.dialog.person")), ...[1, 2, 3].map((level) => h("option", { value: String(level) }, t("name.botLevel", { level }))));
  const game = h("select", { name: "game" });
  const clock = h("select", { name: "clock", class: "clock-choice" });
  const rated = h("select", { name: "rated" }, h("option", { value: "casual" }, t("challenges.dialog.casual")), h("option", { value: "rated", disabled: client.player.guest }, t("challenges.dialog.rated")));
  const seat = h(
    "select",
    { name: "seat" },
    h("option", { value: String(SeatPreference.UNSPECIFIED) }, t("challenges.dialog.random")),
    h("option", { value: String(SeatPreference.FIRST) }, t("challenges.dialog.meFirst")),
    h("option", { value: String(SeatPreference.SECOND) }, t("challenges.dialog.meSecond")),
  );
  const send = h("button", { type: "submit", class: "send-challenge" }, t("challenges.dialog.send"));
  const whom = player
    ? h("p", { class: "whom" }, player.displayName ? t("challenges.dialog.whomShown", { shown: nameOf(player), name: player.username }) : t("challenges.dialog.whom", { name: nameOf(player) }))
    : h("div", {}, h("label", {}, t("challenges.dialog.player"), " ", username), h("label", { class: "inline" }, anyone, t("challenges.dialog.anyone")), go ? h("label", {}, t("challenges.dialog.bot"), " ", bot) : undefined);
  const form = h(
    "form",
    { class: "challenge-form" },
    whom,
    h("label", {}, t("challenges.dialog.game"), " ", game),
    h("label", {}, t("challenges.dialog.clock"), " ", clock),
    h("label", {}, t("challenges.dialog.type"), " ", rated),
    client.player.guest ? h("small", { class: "hint" }, t("challenges.dialog.guestHint")) : undefined,
    h("label", {}, t("challenges.dialog.seat"), " ", seat),
    h("div", { class: "actions" }, send),
  );
  const dialog = h("dialog", { class: "player-dialog challenge-dialog" }, h("h3", {}, player ? t("challenges.dialog.title", { name: nameOf(player) }) : t("challenges.dialog.titleAnyone")), form, message, h("div", { class: "actions end" }, close));
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  const chosen = (): void => {
    const other = anyone.checked || bot.value !== "";
    username.disabled = other;
    username.required = !other;
    anyone.disabled = bot.value !== "";
    if (bot.value !== "") rated.value = "casual"; // games against bots are casual
    rated.disabled = bot.value !== "";
  };
  anyone.addEventListener("change", chosen);
  bot.addEventListener("change", chosen);
  const clocks = (): void => {
    const chosen = chosenClock(game.value);
    mount(clock, ...clockOptions(chosen));
  };
  game.addEventListener("change", clocks);
  client.gameTypes().then(
    (types) => {
      const two = types.filter((t) => t.minSeats <= 2 && t.maxSeats >= 2);
      mount(game, ...two.map((type) => h("option", { value: type.game }, titleOf(type.game))));
      clocks();
    },
    (error: unknown) => (message.textContent = explain(error)),
  );
  // One request id per dialog: a second click after a lost answer sends nothing twice.
  const requestId = client.requestIds.next();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    act(send, message, async () => {
      const opts = { ...timeControlOf(Number(clock.value)), rated: rated.value === "rated", seat: seatOption(Number(seat.value)), requestId };
      const name = player?.username ?? username.value.trim();
      if (bot.value !== "" && !player && go) {
        // A bot accepts at once: its room seats us, and the game starts when the bot sits down.
        const made = await client.challengeBot(Number(bot.value), game.value, { ...opts, rated: false });
        dialog.close();
        return go(`#/room/${made.roomCode}`);
      }
      const made = anyone.checked && !player ? await client.openChallenge(game.value, opts) : await client.challenge(name, game.value, opts);
      tray?.add(made);
      mount(form, h("p", { class: "thanks" }, made.open ? t("challenges.dialog.sentOpen") : t("challenges.dialog.sent", { name: otherSide(made, client.player.playerId) })));
      close.focus();
    });
  });
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}

function seatOption(preference: number): "first" | "second" | undefined {
  return preference === SeatPreference.FIRST ? "first" : preference === SeatPreference.SECOND ? "second" : undefined;
}

// -- the tray ---------------------------------------------------------------------------------

class Tray {
  readonly element = h("section", { id: "challenges", class: "challenge-tray", "aria-live": "polite", hidden: true });
  private readonly pending = new Map<string, challenges.Challenge>();
  private readonly notes: HTMLElement[] = [];

  constructor(
    readonly client: TafelClient,
    private readonly go: (hash: string) => void,
    signal: AbortSignal,
  ) {
    accountEvents.onLive(() => void this.reload(), signal);
    accountEvents.on((event) => {
      if (event.kind.case === "challenge") this.update(event.kind.value);
    }, signal);
  }

  private get me(): string {
    return this.client.session?.player?.playerId ?? "";
  }

  /** What is pending, read again whenever the stream is (again) live: nothing falls between. */
  private async reload(): Promise<void> {
    try {
      const listed = await this.client.listChallenges();
      this.pending.clear();
      for (const c of [...listed.incoming, ...listed.outgoing]) this.pending.set(c.challengeId, c);
      this.draw();
    } catch {
      // The tray stays as the events left it; the next live stream reads it again.
    }
  }

  add(c: challenges.Challenge): void {
    if (c.status === ChallengeStatus.PENDING && !c.open) this.pending.set(c.challengeId, c);
    this.draw();
  }

  private update(c: challenges.Challenge): void {
    const mine = c.challenger?.playerId === this.me;
    const known = this.pending.has(c.challengeId);
    if (c.status === ChallengeStatus.PENDING) {
      if (!c.open || !mine) this.pending.set(c.challengeId, c);
      return this.draw();
    }
    this.pending.delete(c.challengeId);
    const words = { who: otherSide(c, this.me), game: titleOf(c.game) };
    if (c.status === ChallengeStatus.ACCEPTED && mine && c.botLevel > 0) {
      this.note(t("challenges.tray.botJoining", words), "accepted");
    } else if (c.status === ChallengeStatus.ACCEPTED && mine) {
      this.note(t("challenges.tray.accepted", words), "accepted");
      if (c.gameId) this.go(`#/game/${c.gameId}`);
    } else if (c.status === ChallengeStatus.DECLINED && mine) {
      this.note(t("challenges.tray.declined", { ...words, why: declineWords(c.declineReason) }), "declined");
    } else if (c.status === ChallengeStatus.EXPIRED && (mine || known)) {
      this.note(mine ? t("challenges.tray.expiredMine", words) : t("challenges.tray.expiredTheirs", words), "expired");
    } else if (c.status === ChallengeStatus.CANCELLED && !mine && known) {
      this.note(t("challenges.tray.withdrawn", words), "cancelled");
    }
    this.draw();
  }

  private note(text: string, kind: string): void {
    const dismiss = h("button", { type: "button", class: "dismiss", "aria-label": t("challenges.tray.dismiss") }, t("challenges.tray.ok"));
    const note = h("p", { class: `note ${kind}` }, text, " ", dismiss);
    const remove = (): void => {
      const at = this.notes.indexOf(note);
      if (at < 0) return;
      this.notes.splice(at, 1);
      this.draw();
    };
    dismiss.addEventListener("click", remove);
    // Good news has been acted on (the game is open): it goes by itself; a refusal stays to be read.
    if (kind === "accepted") setTimeout(remove, 8000);
    this.notes.push(note);
    if (this.notes.length > 3) this.notes.shift();
  }

  private row(c: challenges.Challenge): HTMLElement {
    const message = h("span", { class: "challenge-message", role: "alert" });
    const terms = h("span", { class: "terms" }, challengeTerms(c, this.me));
    if (c.challenger?.playerId === this.me) {
      const cancel = h("button", { type: "button", class: "cancel-challenge" }, t("challenges.tray.cancel"));
      cancel.addEventListener("click", () =>
        act(cancel, message, async () => {
          await this.client.cancelChallenge(c.challengeId);
          this.pending.delete(c.challengeId);
          this.draw();
        }),
      );
      const whom = c.botLevel > 0 || c.challenged === undefined ? otherSide(c, this.me) : nameLink(c.challenged);
      return h("li", { class: "outgoing", "data-challenge": c.challengeId }, h("span", { class: "who" }, ...place(t("challenges.tray.youChallenged", { who: slot("who") }), { who: whom })), terms, h("span", { class: "wait" }, t("challenges.tray.waiting")), h("span", { class: "actions" }, cancel), message);
    }
    const accept = h("button", { type: "button", class: "accept-challenge" }, t("challenges.tray.accept"));
    const reason = h("select", { name: "decline-reason", "aria-label": t("challenges.tray.whyDecline") }, ...DECLINE_REASONS.map((value) => h("option", { value }, DECLINE_MENU[value])));
    const decline = h("button", { type: "button", class: "decline-challenge" }, t("challenges.tray.decline"));
    accept.addEventListener("click", () =>
      act(accept, message, async () => {
        const accepted = await this.client.acceptChallenge(c.challengeId);
        this.pending.delete(c.challengeId);
        this.draw();
        this.go(`#/game/${accepted.gameId}`);
      }),
    );
    decline.addEventListener("click", () =>
      act(decline, message, async () => {
        await this.client.declineChallenge(c.challengeId, Number(reason.value) as challenges.DeclineReason);
        this.pending.delete(c.challengeId);
        this.draw();
      }),
    );
    return h("li", { class: "incoming", "data-challenge": c.challengeId }, h("span", { class: "who" }, ...place(t("challenges.tray.challengesYou", { who: slot("who") }), { who: nameLink(c.challenger) })), terms, h("span", { class: "actions" }, accept, reason, decline), message);
  }

  draw(): void {
    const list = [...this.pending.values()].filter((c) => c.status === ChallengeStatus.PENDING);
    const incoming = list.filter((c) => c.challenger?.playerId !== this.me);
    const outgoing = list.filter((c) => c.challenger?.playerId === this.me && !c.open);
    mount(
      this.element,
      ...this.notes,
      incoming.length + outgoing.length > 0 ? h("ul", { class: "challenges" }, ...incoming.map((c) => this.row(c)), ...outgoing.map((c) => this.row(c))) : undefined,
    );
    this.element.hidden = this.notes.length === 0 && list.length === 0;
  }
}

let tray: Tray | undefined;
let trayAbort: AbortController | undefined;
let trayOwner: string | undefined;

/** The tray for the signed-in `client` (a new one after signing in as someone else); `go` opens
 * the game a challenge started. Returns the element to place under the header. */
export function challengeTray(client: TafelClient, go: (hash: string) => void): HTMLElement {
  const me = client.session?.player?.playerId;
  if (tray === undefined || tray.client !== client || trayOwner !== me) {
    trayAbort?.abort();
    trayAbort = new AbortController();
    tray?.element.remove();
    tray = new Tray(client, go, trayAbort.signal);
    trayOwner = me;
  }
  return tray.element;
}

/** Signed out: no tray. */
export function closeTray(): void {
  trayAbort?.abort();
  tray?.element.remove();
  tray = undefined;
  trayOwner = undefined;
}

// -- the lobby's open challenges --------------------------------------------------------------

/** The open challenges anyone may take (refreshed every 15 s while the lobby is open), and the
 * button that challenges a player. */
export function openChallengesSection(client: TafelClient, go: (hash: string) => void, signal: AbortSignal): HTMLElement {
  const list = h("ul", { class: "open-challenges" }, h("li", {}, t("loading")));
  const message = h("p", { class: "challenge-message", role: "alert" });
  const challenge = h("button", { type: "button", class: "challenge-player" }, t("challenges.challengePlayer"));
  challenge.addEventListener("click", () => openChallengeDialog(client, undefined, go).addEventListener("close", () => void refresh()));
  const me = client.player.playerId;
  const refresh = async (): Promise<void> => {
    try {
      const open = await client.listOpenChallenges();
      if (signal.aborted) return;
      if (open.length === 0) return mount(list, h("li", {}, t("challenges.noneOpen")));
      mount(
        list,
        ...open.map((c) => {
          const mine = c.challenger?.playerId === me;
          const button = h("button", { type: "button", class: mine ? "cancel-challenge" : "take-challenge" }, mine ? t("lobby.cancel") : t("challenges.take"));
          button.addEventListener("click", () =>
            act(button, message, async () => {
              if (mine) {
                await client.cancelChallenge(c.challengeId);
                return void refresh();
              }
              const taken = await client.acceptChallenge(c.challengeId);
              go(`#/game/${taken.gameId}`);
            }),
          );
          return h("li", { "data-challenge": c.challengeId }, h("span", { class: "who" }, mine ? t("challenges.yourOpen") : nameLink(c.challenger)), h("span", { class: "terms" }, challengeTerms(c, me)), button);
        }),
      );
    } catch (error) {
      if (!signal.aborted) message.textContent = explain(error);
    }
  };
  void refresh();
  const timer = setInterval(() => void refresh(), 15_000);
  signal.addEventListener("abort", () => clearInterval(timer));
  return h("section", { class: "open-challenges-section" }, h("h2", {}, t("challenges.open")), h("p", { class: "actions" }, challenge), list, message);
}
