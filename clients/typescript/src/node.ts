// Node-only: native gRPC over HTTP/2 straight to a gateway (the same port as every other gRPC
// client), and the web edge's protocols over Node's own HTTP stack (where TLS can be configured),
// via @connectrpc/connect-node. Browsers use ./transports.js instead.
//
//   import { TafelClient } from "@tafel/sdk";
//   import { createNativeTransport } from "@tafel/sdk/node";
//   const client = new TafelClient(createNativeTransport("127.0.0.1:50051"));
//   const secure = new TafelClient(createNativeTransport("gw.example:443", { ca: readFileSync("ca.pem") }));

import * as https from "node:https";
import type { Interceptor, Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  Http2SessionManager,
} from "@connectrpc/connect-node";
import { failover } from "./failover.js";
import type { WebProtocol } from "./transports.js";

export { Http2SessionManager };

/** TLS settings for a server whose certificate Node's built-in roots do not vouch for. */
export interface TlsOptions {
  /** PEM root certificate(s) to trust instead of Node's built-in list: a private CA, or a
   * self-signed development certificate. Setting it (or `serverName`) means TLS. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** The name the server's certificate must carry (also sent as SNI), when it is not the host in
   * the address: e.g. "gateway.internal" while connecting to 10.0.0.7. */
  serverName?: string;
}

export interface NativeTransportOptions extends TlsOptions {
  /** "https" for a gateway behind TLS; default "http" (cleartext HTTP/2, as on loopback), or
   * "https" when `ca` or `serverName` is set. */
  scheme?: "http" | "https";
  /** The HTTP/2 connection to use (lets a caller share it, or close it with abort()); one address only. */
  sessionManager?: Http2SessionManager;
  /** Run around every call (logging, metrics, extra headers). */
  interceptors?: Interceptor[];
}

/** A transport that holds connections; `close()` (or TafelClient.close()) ends them, which lets a
 * Node process exit (an open connection keeps it alive). */
export type NativeTransport = Transport & { close(): void };

function tlsSettings(options: TlsOptions): { ca?: TlsOptions["ca"]; servername?: string } {
  return {
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
    ...(options.serverName !== undefined ? { servername: options.serverName } : {}),
  };
}

function withScheme(address: string, scheme: string): string {
  return /^https?:\/\//.test(address) ? address : `${scheme}://${address}`;
}

/** A native gRPC transport to a gateway at "host:port" (or a full "http(s)://host:port" URL).
 * Several addresses (an array, or "a:1,b:2") give one transport over all of them: calls go to
 * the first that answers and move to the next when it cannot be reached (a gateway stopped or
 * killed); a Play stream reopening after that lands on the next gateway. */
export function createNativeTransport(address: string | string[], options: NativeTransportOptions = {}): NativeTransport {
  const addresses = (Array.isArray(address) ? address : address.split(",")).map((a) => a.trim()).filter(Boolean);
  if (addresses.length === 0) throw new Error("createNativeTransport needs an address");
  if (addresses.length > 1 && options.sessionManager !== undefined) {
    throw new Error("a sessionManager is one connection: give one address with it");
  }
  const secure = options.ca !== undefined || options.serverName !== undefined;
  const scheme = options.scheme ?? (secure ? "https" : "http");
  const transports = addresses.map((one) => {
    const baseUrl = withScheme(one, scheme);
    const sessionManager = options.sessionManager ?? new Http2SessionManager(baseUrl, {}, tlsSettings(options));
    const transport = createGrpcTransport({ baseUrl, sessionManager, interceptors: options.interceptors ?? [] });
    return Object.assign(transport, { close: () => sessionManager.abort() });
  });
  return transports.length === 1 ? transports[0]! : failover(transports);
}

export interface NodeWebTransportOptions extends TlsOptions {
  /** "connect" (default) or "grpc-web". */
  protocol?: WebProtocol;
  /** Protobuf binary on the wire (default) or JSON (Connect only). */
  binary?: boolean;
  /** Run around every call (logging, metrics, extra headers). */
  interceptors?: Interceptor[];
}

/** The web edge's protocols (Connect or gRPC-Web, as ./transports.js speaks them from a browser)
 * over Node's HTTP/1.1 client, so that an HTTPS edge with a private CA or another certificate
 * name can be reached from Node (fetch takes no TLS settings). */
export function createNodeWebTransport(baseUrl: string, options: NodeWebTransportOptions = {}): NativeTransport {
  const { protocol = "connect", binary = true } = options;
  // One agent per transport: its kept-alive sockets belong to this client and close() ends them.
  const agent = new https.Agent({ keepAlive: true, ...tlsSettings(options) });
  const common = {
    baseUrl,
    httpVersion: "1.1" as const,
    nodeOptions: baseUrl.startsWith("https:") ? { agent, ...tlsSettings(options) } : {},
    interceptors: options.interceptors ?? [],
  };
  const transport =
    protocol === "grpc-web" ? createGrpcWebTransport(common) : createConnectTransport({ ...common, useBinaryFormat: binary });
  return Object.assign(transport, { close: () => agent.destroy() });
}
