// Request ids for state-changing calls: a random prefix per client and a counter. A retry of the
// same call reuses its id, so the server applies it once and answers the same way again.
// crypto.getRandomValues is in every browser and in Node >= 19 (no Node-only import here).

export class RequestIds {
  private readonly prefix: string;
  private counter = 0;

  constructor() {
    const bytes = globalThis.crypto.getRandomValues(new Uint8Array(8));
    this.prefix = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  /** A new id: 1-64 characters of [A-Za-z0-9_-], as SubmitMoveRequest.request_id requires. */
  next(): string {
    this.counter += 1;
    return `${this.prefix}-${this.counter.toString(16)}`;
  }
}
