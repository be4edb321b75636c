// What the tests run against: a real platform on loopback, started by the pytest wrapper
// (tests/clients/test_typescript_sdk.py), which passes its addresses in the environment:
//   TAFEL_TEST_GATEWAY  the gateway's native gRPC address, "127.0.0.1:PORT"
//   TAFEL_TEST_WEB_URL  the web edge, "http://127.0.0.1:PORT" (Connect and gRPC-Web tests)

import * as net from "node:net";
import type { TestContext } from "node:test";
import type { Interceptor, Transport } from "@connectrpc/connect";
import assert from "node:assert/strict";
import { createWebTransport, isAfter, TafelClient, VersionConflict, type games, type play, type PlayStream } from "../src/index.js";
import { createNativeTransport } from "../src/node.js";
import type { Strategy } from "../conformance/strategies.js";

export interface TransportKind {
  name: string;
  /** The server this transport talks to, "host:port" (for a proxy in front of it). */
  address: string;
  /** A transport to `address` (or to a stand-in at `via`, "host:port"). */
  make: (via?: string, interceptors?: Interceptor[]) => Transport;
}

export function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run these tests through tests/clients/test_typescript_sdk.py (or set it)`);
  }
  return value;
}

/** Every transport the platform offers: native gRPC always, Connect and gRPC-Web with a web edge. */
export function transportKinds(): TransportKind[] {
  const gateway = required("TAFEL_TEST_GATEWAY");
  const kinds: TransportKind[] = [
    { name: "native gRPC", address: gateway, make: (via, interceptors) => createNativeTransport(via ?? gateway, { interceptors }) },
  ];
  const web = process.env.TAFEL_TEST_WEB_URL;
  if (web) {
    const url = new URL(web);
    for (const protocol of ["connect", "grpc-web"] as const) {
      kinds.push({
        name: protocol === "connect" ? "Connect" : "gRPC-Web",
        address: url.host,
        make: (via, interceptors) => createWebTransport(via ? `${url.protocol}//${via}` : web, { protocol, interceptors }),
      });
    }
  }
  return kinds;
}

/** `count` clients signed in as guests, closed when the test `t` ends. */
export async function guests(t: TestContext, kind: TransportKind, count: number): Promise<TafelClient[]> {
  const clients = Array.from({ length: count }, () => new TafelClient(kind.make()));
  t.after(() => clients.forEach((c) => c.close()));
  await Promise.all(clients.map((c) => c.signInAsGuest()));
  return clients;
}

/** Play `seat` of `gameId` to the end with `strategy`, driven by the game's watch stream (whose
 * events carry the status after each move: whom the game waits for). Returns the final status. */
export async function playGame(client: TafelClient, gameId: string, seat: number, strategy: Strategy): Promise<games.GameStatus> {
  const first = await client.waitForGame(gameId);
  let status = first.summary?.status;
  if (status === undefined) throw new Error("GetGame answered without a status");
  let tried = -1n; // the version this seat last moved at: a move's several events ask once
  const maybeMove = async (): Promise<void> => {
    if (status === undefined || status.over || !status.toAct.includes(seat) || status.version === tried) return;
    tried = status.version;
    const fresh = await client.getGame(gameId);
    const now = fresh.summary?.status;
    if (fresh.view === undefined || now === undefined || now.over || !now.toAct.includes(seat)) return;
    try {
      const answer = await client.submitMove(gameId, strategy(fresh.view, now.version), { expectedVersion: now.version });
      if (answer.status !== undefined && answer.status.version >= status.version) status = answer.status;
    } catch (error) {
      if (!(error instanceof VersionConflict)) throw error; // the game moved on: the watch tells us
    }
  };
  await maybeMove();
  for await (const response of client.watchGame(gameId, { afterEventId: first.lastEventId })) {
    if (response.status !== undefined && response.status.version >= status.version) status = response.status;
    if (status.over) break;
    await maybeMove();
  }
  return status;
}

/** `promise`, or a rejection naming `what` once `ms` have passed: a call that hangs fails its test
 * with a message rather than the runner's timeout. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

export interface StreamPlay {
  status: games.GameStatus;
  /** The event ids the stream delivered, in order, after the watch's first view. */
  delivered: string[];
  /** The view's last event id when the watch began ("now"). */
  from: string;
}

/** Play `seat` of `gameId` on a Play stream to the end: moves on the stream, the opponent's moves
 * as the stream's events. `onSubmit(version)` runs right after each move is sent, before its
 * answer (to cut a connection or stop a gateway with a move in flight). Every answer and event is
 * awaited at most `answerMs`: a request the stream never answers fails the test by name. */
export async function playOnStream(
  client: TafelClient,
  stream: PlayStream,
  gameId: string,
  seat: number,
  strategy: Strategy,
  { onSubmit, answerMs = 60_000 }: { onSubmit?: (version: bigint) => void; answerMs?: number } = {},
): Promise<StreamPlay> {
  const watching = await within(stream.watch(gameId), answerMs, "watch");
  const first = watching.summary?.status;
  assert.ok(first && watching.view, "the watch answered without a status and view");
  let status: games.GameStatus = first;
  let view: games.GameView = watching.view;
  const delivered: string[] = [];
  while (!status.over) {
    if (status.toAct.includes(seat)) {
      const answer = stream.submitMove(gameId, strategy(view, status.version), { expectedVersion: status.version });
      onSubmit?.(status.version);
      const accepted: play.SubmitMoveResponse = await within(answer, answerMs, `the move at version ${status.version}`);
      assert.ok(accepted.status);
      status = accepted.status;
      continue;
    }
    const delivery = await within(stream.nextEvent(), answerMs, `an event after version ${status.version}`);
    assert.equal(delivery.gameId, gameId);
    if (delivery.event?.eventId) delivered.push(delivery.event.eventId);
    if (delivery.status !== undefined && delivery.status.version >= status.version) status = delivery.status;
    if (!status.over && status.toAct.includes(seat)) view = (await client.getGame(gameId)).view ?? view;
  }
  return { status, delivered, from: watching.lastEventId };
}

/** The ids of `gameId`'s events after `from`, from a watch of its whole history. */
export async function eventIdsAfter(client: TafelClient, gameId: string, from: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const event of client.watch(gameId)) {
    if (!from || isAfter(event.eventId, from)) ids.push(event.eventId);
  }
  return ids;
}

/** A TCP relay on loopback in front of a server, whose connections the test can cut: a real
 * dropped connection, whatever the transport speaks over it. */
export class Relay {
  private readonly sockets = new Set<net.Socket>();
  private readonly server: net.Server;
  cuts = 0;
  connections = 0;
  /** While paused, connections are cut as they come (a network that stays down). */
  paused = false;

  private constructor(server: net.Server) {
    this.server = server;
  }

  static async start(target: string): Promise<Relay> {
    const [host = "127.0.0.1", port = "0"] = target.split(":");
    const server = net.createServer();
    const relay = new Relay(server);
    server.on("connection", (client) => {
      if (relay.paused) {
        client.destroy();
        return;
      }
      relay.connections += 1;
      const upstream = net.connect(Number(port), host);
      for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
        relay.sockets.add(a);
        a.on("error", () => b.destroy());
        a.on("close", () => {
          relay.sockets.delete(a);
          b.destroy();
        });
        a.pipe(b);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return relay;
  }

  get address(): string {
    const address = this.server.address() as net.AddressInfo;
    return `127.0.0.1:${address.port}`;
  }

  /** Cut every connection through the relay (new ones still get through). */
  cut(): void {
    this.cuts += 1;
    for (const socket of this.sockets) socket.destroy();
  }

  /** Cut every connection and refuse new ones until `resume`. */
  pause(): void {
    this.paused = true;
    this.cut();
  }

  resume(): void {
    this.paused = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
