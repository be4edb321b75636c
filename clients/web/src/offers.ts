// What players agree on in a game, on the game page: offer a draw, ask to take a move
// back (casual games), abort before every player has moved, and after the game a rematch; the
// other side's offers with their answers, and what became of one's own, in words. Offers arrive on
// the page's one account event stream. A rematch accepted by everyone takes every player into the
// new game; leaving the page declines a rematch still pending.
import { accountEvents } from "./account-events.js";
import { h, mount } from "./dom.js";
import { t } from "./i18n.js";
import { explain } from "./say.js";
import { nameOf } from "./names.js";
import { play, TafelError, type TafelClient } from "./sdk.js";

const { OfferKind, OfferStatus } = play;

/** The catalogue's word for each kind (game:offers.declined.draw, …). */
const KIND: Record<number, "draw" | "takeback" | "rematch"> = { [OfferKind.DRAW]: "draw", [OfferKind.TAKEBACK]: "takeback", [OfferKind.REMATCH]: "rematch" };

export interface OfferPanel {
  element: HTMLElement;
  /** Draw the buttons for the game as it is now. */
  update(game: play.GetGameResponse): void;
}

export function offerPanel(client: TafelClient, gameId: string, go: (hash: string) => void, opts: { tournament: boolean }, signal: AbortSignal): OfferPanel {
  const actions = h("div", { class: "actions offer-actions" });
  const offers = h("div", { class: "offers", "aria-live": "polite" });
  // Not "message": the game page's own line is the one tests and readers know as that.
  const message = h("p", { class: "offer-message", role: "alert" });
  const element = h("div", { class: "offer-panel", hidden: true }, offers, actions, message);
  const pending = new Map<play.OfferKind, play.Offer>();
  const notes: string[] = [];
  let game: play.GetGameResponse | undefined;

  const seat = (): number | undefined => game?.seat;
  const nameAt = (s: number | undefined): string => {
    const p = game?.summary?.players.find((x) => x.seat === s);
    return nameOf(p?.player, s === undefined ? t("game:offers.aPlayer") : t("game:player", { n: s + 1 }));
  };
  const mine = (offer: play.Offer): boolean => offer.by?.seat === seat();

  const send = (button: HTMLButtonElement | undefined, call: () => Promise<play.Offer | void>): void => {
    if (button) button.disabled = true;
    message.textContent = "";
    call().then(
      (offer) => {
        if (offer) record(offer);
      },
      (error: unknown) => {
        if (button) button.disabled = false;
        message.textContent = explain(error);
        if (error instanceof TafelError) message.dataset.reason = error.reason;
      },
    );
  };
  const button = (label: string, cls: string, call: () => Promise<play.Offer | void>): HTMLButtonElement => {
    const b = h("button", { type: "button", class: cls }, label);
    b.addEventListener("click", () => send(b, call));
    return b;
  };

  /** An offer as it is now (an answer to a call, or an event). */
  const record = (offer: play.Offer): void => {
    if (offer.gameId !== gameId) return;
    const before = pending.get(offer.kind);
    if (offer.status === OfferStatus.PENDING) {
      pending.set(offer.kind, offer);
      return draw();
    }
    pending.delete(offer.kind);
    const kind = KIND[offer.kind] ?? "draw";
    if (offer.status === OfferStatus.ACCEPTED) {
      if (offer.kind === OfferKind.REMATCH && offer.newGameId) return go(`#/game/${offer.newGameId}`);
      if (offer.kind === OfferKind.TAKEBACK) say(mine(offer) ? t("game:offers.takebackAllowedYours", { name: nameAt(otherSeat()) }) : t("game:offers.takebackAllowedTheirs", { name: nameAt(offer.by?.seat) }));
      if (offer.kind === OfferKind.DRAW) say(t("game:offers.drawAgreed"));
    } else if (offer.status === OfferStatus.DECLINED) {
      const byYou = offer.declinedBy !== undefined && offer.declinedBy === seat();
      const who = offer.declinedBy === undefined ? t("game:offers.otherPlayer") : nameAt(offer.declinedBy);
      say(t(`game:offers.declined.${kind}.${byYou ? "byYou" : mine(offer) ? "yours" : "other"}`, { who, owner: nameAt(offer.by?.seat) }));
    } else if (offer.status === OfferStatus.WITHDRAWN && before !== undefined) {
      say(offer.kind === OfferKind.REMATCH ? (mine(offer) ? t("game:offers.rematchWithdrawnYou") : t("game:offers.rematchWithdrawn", { who: nameAt(offer.by?.seat) })) : t(`game:offers.lapsed.${kind}`));
    } else if (offer.status === OfferStatus.EXPIRED) {
      say(t(`game:offers.expired.${kind}`));
    }
    draw();
  };
  const otherSeat = (): number | undefined => game?.summary?.players.find((p) => p.seat !== seat())?.seat;
  const say = (text: string): void => {
    notes.splice(0, notes.length, text); // the latest news only
  };

  const answer = (kind: play.OfferKind, accept: boolean) => () => client.answerOffer(gameId, kind, accept);
  // A rematch is offered, or the pending one accepted, the same way (the SDK calls answer either).
  const rematch = async (): Promise<play.Offer> => {
    try {
      return await client.offerRematch(gameId);
    } catch (error) {
      if (error instanceof TafelError && error.reason === "OFFER_PENDING") return client.answerOffer(gameId, OfferKind.REMATCH, true);
      throw error;
    }
  };

  const offerLine = (offer: play.Offer): HTMLElement => {
    const kind = offer.kind;
    if (mine(offer) || offer.acceptedSeats.includes(seat() ?? -1)) {
      const what = kind === OfferKind.DRAW ? "youOfferedDraw" : kind === OfferKind.TAKEBACK ? "youAskedTakeback" : mine(offer) ? "youOfferedRematch" : "youAcceptedRematch";
      const withdraw = button(kind === OfferKind.REMATCH ? t("game:offers.cancel") : t("game:offers.withdraw"), "withdraw-offer", answer(kind, false));
      return h("p", { class: "offer outgoing", "data-kind": OfferKind[kind] }, `${t(`game:offers.${what}`, { name: nameAt(otherSeat()) })} `, withdraw);
    }
    const who = nameAt(offer.by?.seat);
    const [text, yes, no] =
      kind === OfferKind.DRAW
        ? [t("game:offers.theyOfferDraw", { who }), t("game:offers.acceptDraw"), t("game:offers.decline")]
        : kind === OfferKind.TAKEBACK
          ? [t("game:offers.theyAskTakeback", { who }), t("game:offers.allow"), t("game:offers.refuse")]
          : [t("game:offers.theyOfferRematch", { who }), t("game:offers.acceptRematch"), t("game:offers.decline")];
    const accept = button(yes, "accept-offer", kind === OfferKind.REMATCH ? rematch : answer(kind, true));
    const decline = button(no, "decline-offer", answer(kind, false));
    return h("p", { class: "offer incoming", "data-kind": OfferKind[kind] }, `${text} `, accept, " ", decline);
  };

  const draw = (): void => {
    const summary = game?.summary;
    const st = summary?.status;
    if (summary === undefined || st === undefined || seat() === undefined) {
      element.hidden = true;
      return;
    }
    element.hidden = false;
    const two = summary.players.length === 2;
    const buttons: HTMLButtonElement[] = [];
    if (!st.over) {
      if (two && !pending.has(OfferKind.DRAW)) buttons.push(button(t("game:offers.offerDraw"), "offer-draw", () => client.offerDraw(gameId)));
      if (two && !summary.rated && st.version > 0n && !pending.has(OfferKind.TAKEBACK)) buttons.push(button(t("game:offers.askTakeback"), "ask-takeback", () => client.askTakeback(gameId)));
      // Until every player has moved once (the server decides; a refusal says why).
      if (st.version < BigInt(summary.players.length)) {
        buttons.push(
          button(t("game:offers.abort"), "abort-game", async () => {
            if (!confirm(t("game:offers.abortConfirm"))) return;
            await client.abortGame(gameId);
          }),
        );
      }
    } else if (!opts.tournament && !pending.has(OfferKind.REMATCH)) {
      buttons.push(button(t("game:offers.rematch"), "offer-rematch", rematch));
    }
    mount(actions, ...buttons);
    // A draw offer or takeback request still pending when the game ended is moot: not shown.
    const open = [...pending.values()].filter((offer) => !st.over || offer.kind === OfferKind.REMATCH);
    mount(offers, ...notes.map((text) => h("p", { class: "offer-news" }, text)), ...open.map(offerLine));
  };

  accountEvents.on((event) => {
    if (event.kind.case === "offer") record(event.kind.value);
    // Everyone accepted while this page was busy: the new game's start says where to go.
    else if (event.kind.case === "gameStarted" && event.kind.value.origin === `rematch:${gameId}`) {
      pending.delete(OfferKind.REMATCH); // settled: leaving must not decline it
      go(`#/game/${event.kind.value.gameId}`);
    }
  }, signal);
  // Leaving the page (another page, or closing it) declines a rematch still pending.
  const leave = (): void => {
    if (pending.has(OfferKind.REMATCH)) void client.answerOffer(gameId, OfferKind.REMATCH, false).catch(() => undefined);
  };
  signal.addEventListener("abort", leave, { once: true });
  window.addEventListener("pagehide", leave);
  signal.addEventListener("abort", () => window.removeEventListener("pagehide", leave), { once: true });

  return {
    element,
    update(next) {
      game = next;
      draw();
    },
  };
}
