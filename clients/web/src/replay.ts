import { h, mount } from "./dom.js";
import type { TafelClient } from "./sdk.js";

export function replayPage(root: HTMLElement, client: TafelClient, gameId: string, signal: AbortSignal): void {
  void client; void signal;
  mount(root, h("p", {}, `Replay of ${gameId}`));
}
