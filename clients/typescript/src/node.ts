// Node-only: native gRPC over HTTP/2 straight to a gateway (the same port as every other gRPC
// client), via @connectrpc/connect-node. Browsers use ./transports.js instead.
//
//   import { TafelClient } from "@tafel/sdk";
//   import { createNativeTransport } from "@tafel/sdk/node";
//   const client = new TafelClient(createNativeTransport("127.0.0.1:50051"));

import type { Interceptor, Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";

export { Http2SessionManager };

export interface NativeTransportOptions {
  /** "https" for a gateway behind TLS; default "http" (cleartext HTTP/2, as on loopback). */
  scheme?: "http" | "https";
  /** The HTTP/2 connection to use (lets a caller share it, or close it with abort()). */
  sessionManager?: Http2SessionManager;
  /** Run around every call (logging, metrics, extra headers). */
  interceptors?: Interceptor[];
}

/** A transport over one HTTP/2 connection; `close()` (or TafelClient.close()) ends it, which
 * lets a Node process exit (an open connection keeps it alive). */
export type NativeTransport = Transport & { close(): void };

/** A native gRPC transport to a gateway at "host:port" (or a full "http://host:port" URL). */
export function createNativeTransport(address: string, options: NativeTransportOptions = {}): NativeTransport {
  const baseUrl = /^https?:\/\//.test(address) ? address : `${options.scheme ?? "http"}://${address}`;
  const sessionManager = options.sessionManager ?? new Http2SessionManager(baseUrl);
  const transport = createGrpcTransport({ baseUrl, sessionManager, interceptors: options.interceptors ?? [] });
  return Object.assign(transport, { close: () => sessionManager.abort() });
}
