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
// Unlike the Python SDK's, this stream does not reopen itself: when its connection drops (or the
// gateway says `reconnect`), every pending and later request fails with Unavailable and the
// caller opens a new one (watch again from the last event id; resend moves with their ids).

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Code } from "@connectrpc/connect";
import { errorFor, fromCallError, TafelError, Unavailable } from "./errors.js";
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
import type { MoveOptions, TafelClient } from "./client.js";

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
  resolve: (response: PlayResponse) => void;
  reject: (error: TafelError) => void;
}

export class PlayStream {
  private readonly requests = new Channel<PlayRequest>();
  private readonly events = new Channel<GameEventDelivery>();
  private readonly pending = new Map<bigint, Pending>();
  private readonly abort = new AbortController();
  private nextId = 1n;
  private failure: TafelError | undefined;
  /** Settles once the stream has ended (never rejects). */
  readonly done: Promise<void>;

  constructor(private readonly client: TafelClient, { batchResponses = true }: { batchResponses?: boolean } = {}) {
    if (batchResponses) {
      // An action's own events then come in the same message as its answer.
      this.requests.push(create(PlayRequestSchema, { action: { case: "setOptions", value: { batchResponses: true } } }));
    }
    const responses = client.games.play(this.requests, { headers: client.headers(), signal: this.abort.signal });
    this.done = this.read(responses);
  }

  private async read(responses: AsyncIterable<PlayResponse>): Promise<void> {
    let failure: TafelError = new Unavailable("STREAM_CLOSED", "the play stream ended");
    try {
      for await (const response of responses) {
        this.dispatch(response);
      }
    } catch (error) {
      failure = this.abort.signal.aborted ? new Unavailable("STREAM_CLOSED", "the play stream was closed") : fromCallError(error);
    }
    this.fail(failure);
  }

  private fail(failure: TafelError): void {
    this.failure ??= failure;
    for (const pending of this.pending.values()) pending.reject(this.failure);
    this.pending.clear();
    this.events.end(this.failure);
    this.requests.end();
  }

  private dispatch(response: PlayResponse): void {
    switch (response.kind.case) {
      case "batch":
        response.kind.value.responses.forEach((r) => this.dispatch(r));
        return;
      case "event":
        this.events.push(response.kind.value);
        return;
      case "reconnect":
        this.fail(new Unavailable(response.kind.value.reason || "RECONNECT", "the gateway asked to reconnect"));
        return;
      default: {
        const pending = this.pending.get(response.correlationId);
        if (pending === undefined) return; // options_set, or an answer nobody waits for
        this.pending.delete(response.correlationId);
        if (response.kind.case === "refusal") {
          const refusal = response.kind.value;
          pending.reject(errorFor(refusal.code as Code, refusal.reason, refusal.message));
        } else {
          pending.resolve(response);
        }
      }
    }
  }

  private request(action: Action): Promise<PlayResponse> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const correlationId = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(correlationId, { resolve, reject });
      this.requests.push(create(PlayRequestSchema, { correlationId, action }));
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
    return expect(await this.request({ case: "watch", value: { gameId, afterEventId } }), "watching");
  }

  async stopWatching(gameId: string): Promise<void> {
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
    this.requests.end();
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
