// A server stream that resumes by itself after a dropped connection, from the last item seen.
// Game and tournament watches share it (both take "after this event id" and replay from there),
// and so does matchmaking (a search sent again with its request id takes over its ticket).

import { Code, ConnectError } from "@connectrpc/connect";
import { certificateError, fromCallError, Unavailable } from "./errors.js";

/** A watch resumes from its last event after these: it is a read, so resuming is always safe. A
 * dropped connection surfaces as Unavailable, Internal, (fetch's "terminated") Unknown or, over
 * HTTP/2, Canceled while nobody cancelled the call, depending on the transport. */
const RESUMABLE: ReadonlySet<Code> = new Set([Code.Unavailable, Code.DeadlineExceeded, Code.Internal, Code.Unknown]);

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** An AbortController that also aborts when `outer` does; `release` detaches it from `outer`
 * and aborts it (ending its call: the server sees a cancelled stream). */
export function linkedAbort(outer?: AbortSignal): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(outer?.reason);
  if (outer?.aborted) {
    onAbort();
  } else {
    outer?.addEventListener("abort", onAbort, { once: true });
  }
  return {
    signal: controller.signal,
    release: () => {
      outer?.removeEventListener("abort", onAbort);
      controller.abort();
    },
  };
}

export interface Resumable<R> {
  /** Opens the stream after `afterId` ("" = from the start). */
  open: (afterId: string, signal: AbortSignal) => AsyncIterable<R>;
  /** The item's position (an event id), or undefined to skip it. */
  idOf: (item: R) => string | undefined;
  /** Whether `id` comes after `last` (drops anything a resumed stream repeats). */
  isAfter: (id: string, last: string) => boolean;
  /** The last item the caller wants (the stream is closed after it). */
  isLast: (item: R) => boolean;
  afterId: string;
  maxRetries: number;
  signal: AbortSignal | undefined;
  /** Open the stream again when the server ends it before the last item (a stopping gateway
   * ends searches that way); otherwise an ended stream ends the iteration. */
  reopenOnEnd?: boolean;
}

export async function* resuming<R>(stream: Resumable<R>): AsyncGenerator<R> {
  let last = stream.afterId;
  let failures = 0;
  for (;;) {
    const call = linkedAbort(stream.signal);
    try {
      for await (const item of stream.open(last, call.signal)) {
        failures = 0;
        const id = stream.idOf(item);
        if (id === undefined || (last && !stream.isAfter(id, last))) {
          continue; // never hand the caller an item twice
        }
        last = id;
        yield item;
        if (stream.isLast(item)) {
          return;
        }
      }
      if (!stream.reopenOnEnd) {
        return; // the server ended the stream
      }
      if (failures >= stream.maxRetries) {
        throw new Unavailable("UNAVAILABLE", "the stream kept ending before it was done", Code.Unavailable);
      }
      failures += 1;
    } catch (error) {
      const code = ConnectError.from(error).code;
      const dropped =
        (RESUMABLE.has(code) || (code === Code.Canceled && !call.signal.aborted)) && certificateError(error) === undefined;
      if (stream.signal?.aborted || !dropped || failures >= stream.maxRetries) {
        throw fromCallError(error);
      }
      failures += 1;
    } finally {
      call.release();
    }
    await sleep(Math.min(50 * 2 ** failures, 2000), stream.signal);
  }
}
