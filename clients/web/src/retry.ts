// A read the page cannot do without (the view after a move, a tournament's standings after its
// event): asked again until it lands. The watch that asked for it has already handed its event
// out, so a read lost to a dropped network would leave the page stale until the next event, and
// in a game that waits for this player there is none.
import { t } from "./i18n.js";
import { Code, TafelError, sleep } from "./sdk.js";

/** Failures that asking again would not change; anything else (the network, a gateway restarting,
 * a timeout) is asked again. */
const FINAL: ReadonlySet<Code> = new Set([Code.NotFound, Code.PermissionDenied, Code.Unauthenticated, Code.InvalidArgument]);

/** `read()` until it lands, waiting 0.5, 1, 2, 4, 4 … s between tries; `waiting(true)` before each
 * wait, `waiting(false)` once it landed after one. Throws a final failure, or once `signal` aborts. */
export async function untilLanded<T>(read: () => Promise<T>, signal: AbortSignal, waiting: (retrying: boolean) => void): Promise<T> {
  for (let failures = 1; ; failures++) {
    try {
      const value = await read();
      if (failures > 1) waiting(false);
      return value;
    } catch (error) {
      if (signal.aborted || (error instanceof TafelError && FINAL.has(error.code))) throw error;
      waiting(true);
      await sleep(Math.min(250 * 2 ** failures, 4000), signal).catch(() => undefined); // (rejects when left)
      if (signal.aborted) throw error;
    }
  }
}

/** A `waiting` for untilLanded that says "Reconnecting…" in a page's message line while it waits
 * (data-reason RECONNECTING) and clears it once the read landed, leaving any other message be. */
export function reconnectingIn(message: HTMLElement): (retrying: boolean) => void {
  return (retrying) => {
    if (retrying) {
      message.textContent = t("retry.reconnecting");
      message.dataset.reason = "RECONNECTING";
    } else if (message.dataset.reason === "RECONNECTING") {
      message.textContent = "";
      delete message.dataset.reason;
    }
  };
}
