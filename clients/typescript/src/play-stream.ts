// The Play stream: one bidirectional stream per connection (moves, resignations and watch
// requests in; answers, refusals and the watched games' events out), the fast path for bots and
// busy clients. It needs a transport that can stream both ways: native gRPC in Node
// (./node.js). Browsers cannot: they use submitMove + watchGame, with the same guarantees.
//
//   const stream = client.playStream();
//   await stream.watch(gameId);
//   const answer = await stream.submitMove(gameId, moves.connect4(3), { expectedVersion: 0n });
//   const delivery = await stream.nextEvent();
//   stream.close();
//
// Like the Python SDK's, the stream reopens by itself when its connection drops or the gateway
// stops gracefully (it says `reconnect` and ends the stream with OK): on a transport over several
// gateways (createNativeTransport([...])) on the next one. It watches every game again from the
// last event it handed out (nothing lost or repeated) and resends unanswered requests with their
// correlation and request ids (nothing applied twice). Once it gives up (a refusal such as
// Unauthenticated, or 20 failed connections in a row), every pending and later request fails at
// once with the error: nothing waits forever.

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { certificateError, errorFor, fromCallError, TafelError, Unavailable } from "./errors.js";
import { isAfter } from "./events.js";
import type { GameMove } from "./gen/tafel/games/v1/games_pb.js";
import {
  PlayRequestSchema,
  type GameEventDelivery,
  type GetGameResponse,
  type PlayRequest,
  type PlayResponse,
  type ResignResponse,
  type SubmitMoveResponse,
} from "./gen/tafel/play/v1/play_pb.js";
import type { GameService } from "./gen/tafel/play/v1/play_pb.js";
import type { MoveOptions } from "./moves.js";
import type { RequestIds } from "./request-ids.js";
import { sleep } from "./resume.js";

/** What a stream needs from the client that opens it, and nothing more (TafelClient is one): the
 * game service to open each connection on, the credentials of the moment (read again on every
 * reconnect, so a refreshed session is used), and the client's request ids. */
export interface PlayConnection {
  readonly games: Pick<Client<typeof GameService>, "play">;
  headers(): Record<string, string>;
  readonly requestIds: RequestIds;
}

/** A queue read by one async iterator; `end` finishes it (with an error, if given). */
class Channel<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: (() => void) | undefined;
  private ended = false;
  private error: unknown;

  push(item: T): void {
    this.items.push(item);
    this.wake();
  }

  end(error?: unknown): void {
    this.ended = true;
    this.error = error;
    this.wake();
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  async next(): Promise<T | undefined> {
    for (;;) {
      if (this.items.length > 0) return this.items.shift();
      if (this.ended) {
        if (this.error !== undefined) throw this.error;
        return undefined;
      }
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const item = await this.next();
      if (item === undefined) return;
      yield item;
    }
  }
}

type Action = MessageInitShape<typeof PlayRequestSchema>["action"];

interface Pending {
  /** What was sent, to send again (same correlation and request id) on a new connection. */
  request: PlayRequest;
  resolve: (response: PlayResponse) => void;
  reject: (error: TafelError) => void;
}

/** How the stream's connection ended when it is worth opening another: the connection dropped
 * (Unavailable; Internal or Aborted for a reset HTTP/2 stream; Canceled by the server's side, a
 * gateway whose stop grace ran out) — not a refusal such as Unauthenticated, nor a certificate
 * that does not verify. */
const REOPENABLE: ReadonlySet<Code> = new Set([
  Code.Unavailable,
  Code.Internal,
  Code.Aborted,
  Code.Canceled,
  Code.Unknown,
  Code.DeadlineExceeded,
]);

export interface PlayStreamOptions {
  /** Ask the gateway to send an action's own events in the same message as its answer (default true). */
  batchResponses?: boolean;
  /** Connections in a row that may fail before the stream gives up (default 20). */
  maxReconnects?: number;
}

export class PlayStream {
  private outbox = new Channel<PlayRequest>(); // the current connection's requests
  private readonly events = new Channel<GameEventDelivery>();
  private readonly pending = new Map<bigint, Pending>();
  /** Watched games -> the last event id handed out ("" = watching from "now", not answered yet). */
  private readonly lastEvent = new Map<string, string>();
  private readonly abort = new AbortController();
  private readonly batchResponses: boolean;
  private readonly maxReconnects: number;
  private nextId = 1n;
  private failure: TafelError | undefined;
  private closed = false;
  /** Connections reopened (after a drop, or a gateway's `reconnect` before it stops). */
  reconnects = 0;
  /** Settles once the stream has ended for good (never rejects). */
  readonly done: Promise<void>;

  constructor(private readonly client: PlayConnection, { batchResponses = true, maxReconnects = 20 }: PlayStreamOptions = {}) {
    this.batchResponses = batchResponses;
    this.maxReconnects = maxReconnects;
    this.done = this.run();
  }

  /** One connection after another until closed, or until one is refused for good. */
  private async run(): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      this.outbox = this.opening();
      let error: unknown;
      try {
        const responses = this.client.games.play(this.outbox, { headers: this.client.headers(), signal: this.abort.signal });
        for await (const response of responses) {
          failures = 0;
          this.dispatch(response);
        }
        // Ended with OK while this side still talks: the gateway stopped gracefully (it said
        // `reconnect` first). Not the end of the conversation: open another and resume.
      } catch (caught) {
        error = caught;
      }
      this.outbox.end();
      if (this.closed) break;
      if (error !== undefined && (!REOPENABLE.has(ConnectError.from(error).code) || certificateError(error) !== undefined)) {
        this.fail(fromCallError(error));
        return;
      }
      failures += 1;
      this.reconnects += 1;
      if (failures > this.maxReconnects) {
        this.fail(new Unavailable("UNAVAILABLE", "the play stream could not reconnect", Code.Unavailable));
        return;
      }
      try {
        await sleep(Math.min(50 * 2 ** failures, 2000), this.abort.signal);
      } catch {
        break; // closed while waiting
      }
    }
    this.fail(new Unavailable("STREAM_CLOSED", "the play stream was closed"));
  }

  /** What a connection sends first: its options, every watched game again from the last event
   * handed out (so nothing is lost or repeated), then every unanswered request as it was sent
   * (a move's request id makes the gateway apply it once and answer it the same way). */
  private opening(): Channel<PlayRequest> {
    const outbox = new Channel<PlayRequest>();
    if (this.batchResponses) {
      outbox.push(create(PlayRequestSchema, { action: { case: "setOptions", value: { batchResponses: true } } }));
    }
    for (const [gameId, afterEventId] of this.lastEvent) {
      outbox.push(create(PlayRequestSchema, { action: { case: "watch", value: { gameId, afterEventId } } }));
    }
    for (const pending of this.pending.values()) outbox.push(pending.request);
    return outbox;
  }

  private fail(failure: TafelError): void {
    this.failure ??= failure;
    for (const pending of this.pending.values()) pending.reject(this.failure);
    this.pending.clear();
    this.events.end(this.failure);
    this.outbox.end();
  }

  private dispatch(response: PlayResponse): void {
    switch (response.kind.case) {
      case "batch":
        response.kind.value.responses.forEach((r) => this.dispatch(r));
        return;
      case "event": {
        const delivery = response.kind.value;
        const last = this.lastEvent.get(delivery.gameId);
        const eventId = delivery.event?.eventId ?? "";
        if (last && eventId && !isAfter(eventId, last)) return; // handed out before a reconnect
        if (last !== undefined && eventId) this.lastEvent.set(delivery.gameId, eventId);
        this.events.push(delivery);
        return;
      }
      case "reconnect":
        return; // the gateway is stopping: the stream ends next, and run() opens another
      default: {
        const pending = this.pending.get(response.correlationId);
        if (pending === undefined) return; // options_set, a resent watch, an answer nobody waits for
        this.pending.delete(response.correlationId);
        if (response.kind.case === "refusal") {
          const refusal = response.kind.value;
          pending.reject(errorFor(refusal.code as Code, refusal.reason, refusal.message));
          return;
        }
        const action = pending.request.action;
        if (action.case === "watch" && response.kind.case === "watching" && this.lastEvent.get(action.value.gameId) === "") {
          // A watch from "now": resume after the view it was answered with, not from "now" again
          // (the events in between would be lost on a reconnect).
          this.lastEvent.set(action.value.gameId, response.kind.value.lastEventId);
        }
        pending.resolve(response);
      }
    }
  }

  private request(action: Action): Promise<PlayResponse> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const correlationId = this.nextId++;
    const request = create(PlayRequestSchema, { correlationId, action });
    return new Promise((resolve, reject) => {
      this.pending.set(correlationId, { request, resolve, reject });
      this.outbox.push(request); // between connections: the next one sends it (it is pending)
    });
  }

  /** Submit a move for the caller's seat (a request id is chosen when none is given). */
  async submitMove(gameId: string, move: GameMove, opts: MoveOptions & { expectedVersion: bigint }): Promise<SubmitMoveResponse> {
    const value = {
      gameId,
      move,
      expectedVersion: opts.expectedVersion,
      requestId: opts.requestId ?? this.client.requestIds.next(),
      seat: opts.seat,
    };
    const response = await this.request({ case: "submitMove", value });
    return expect(response, "moveAccepted");
  }

  async resign(gameId: string, opts: Pick<MoveOptions, "requestId" | "seat"> = {}): Promise<ResignResponse> {
    const value = { gameId, requestId: opts.requestId ?? this.client.requestIds.next(), seat: opts.seat };
    return expect(await this.request({ case: "resign", value }), "resigned");
  }

  /** Start receiving a game's events after `afterEventId` (empty: the view now, then later events;
   * "0-0": the whole history). Answers with the game as the caller sees it. */
  async watch(gameId: string, afterEventId = ""): Promise<GetGameResponse> {
    if (!this.lastEvent.has(gameId)) this.lastEvent.set(gameId, afterEventId);
    const value = { gameId, afterEventId: this.lastEvent.get(gameId) ?? afterEventId };
    return expect(await this.request({ case: "watch", value }), "watching");
  }

  async stopWatching(gameId: string): Promise<void> {
    this.lastEvent.delete(gameId);
    await this.request({ case: "stopWatching", value: { gameId } });
  }

  /** The next event of any watched game; throws once the stream has ended. */
  async nextEvent(): Promise<GameEventDelivery> {
    const delivery = await this.events.next();
    if (delivery === undefined) throw this.failure ?? new Unavailable("STREAM_CLOSED", "the play stream ended");
    return delivery;
  }

  /** Ends the stream (pending requests fail with Unavailable STREAM_CLOSED). */
  close(): void {
    this.closed = true;
    this.outbox.end();
    this.abort.abort();
  }
}

type Kind = NonNullable<PlayResponse["kind"]["case"]>;
type KindValue<K extends Kind> = Extract<PlayResponse["kind"], { case: K }> extends { value: infer V } ? V : never;

function expect<K extends Kind>(response: PlayResponse, kind: K): KindValue<K> {
  if (response.kind.case !== kind) {
    throw new TafelError("UNEXPECTED_ANSWER", `the play stream answered ${response.kind.case} to a ${kind} request`);
  }
  return response.kind.value as KindValue<K>;
}
