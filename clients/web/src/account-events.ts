// The signed-in page's one account event stream (EventService.WatchMyEvents through the SDK, which
// resumes it by itself after a dropped connection, from the last event id: nothing lost or twice).
// Every part of the page that cares — the challenge tray, the game page's offers — listens here
// instead of opening a stream of its own.
import { sleep, type challenges, type TafelClient } from "./sdk.js";

type Listener = (event: challenges.AccountEvent) => void;

export class AccountEvents {
  private readonly listeners = new Set<Listener>();
  private readonly liveListeners = new Set<() => void>();
  private abort: AbortController | undefined;
  private playerId = "";
  /** Whether the stream is open now (read pending things from the server when it becomes so). */
  live = false;

  /** Follow `client`'s account; nothing changes while it already follows that player (a fresh
   * token for the same account, e.g. after a new display name, needs no new stream). */
  follow(client: TafelClient): void {
    const playerId = client.session?.player?.playerId ?? "";
    if (playerId === this.playerId && this.abort !== undefined) return;
    this.stop();
    if (!playerId) return;
    this.playerId = playerId;
    const abort = (this.abort = new AbortController());
    void this.run(client, abort.signal);
  }

  stop(): void {
    this.abort?.abort();
    this.abort = undefined;
    this.playerId = "";
    this.live = false;
  }

  private async run(client: TafelClient, signal: AbortSignal): Promise<void> {
    let delay = 1000;
    while (!signal.aborted) {
      try {
        const onReady = (): void => {
          this.live = true;
          delay = 1000;
          for (const listener of [...this.liveListeners]) listener();
        };
        for await (const event of client.watchMyEvents({ signal, onReady })) {
          for (const listener of [...this.listeners]) listener(event);
        }
      } catch {
        // The SDK gives up only when resuming cannot help (the server down for long, events too
        // old to replay, the session ended): open a new stream from now a little later, and the
        // listeners read what is pending again when it is live.
      }
      this.live = false;
      await sleep(delay, signal).catch(() => undefined);
      delay = Math.min(delay * 2, 30_000);
    }
  }

  /** Call `listener` with every event until `signal` aborts. */
  on(listener: Listener, signal: AbortSignal): void {
    this.listeners.add(listener);
    signal.addEventListener("abort", () => this.listeners.delete(listener), { once: true });
  }

  /** Call `listener` whenever the stream becomes live (now, if it is). */
  onLive(listener: () => void, signal: AbortSignal): void {
    this.liveListeners.add(listener);
    signal.addEventListener("abort", () => this.liveListeners.delete(listener), { once: true });
    if (this.live) listener();
  }
}

export const accountEvents = new AccountEvents();
