// Transports that run in a browser (and in Node, which has fetch too): the Connect protocol or
// gRPC-Web, to tafel's web edge. Both speak the same messages, statuses and error details as the
// native gRPC API; the bidirectional Play stream is native gRPC only (browsers cannot do it).

import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";

export type WebProtocol = "connect" | "grpc-web";

export interface WebTransportOptions {
  /** "connect" (default) or "grpc-web". */
  protocol?: WebProtocol;
  /** Protobuf binary on the wire (default) or JSON (Connect only; handy in devtools). */
  binary?: boolean;
  /** A fetch to use instead of the global one. */
  fetch?: typeof globalThis.fetch;
  /** Run around every call (logging, metrics, extra headers). */
  interceptors?: Interceptor[];
}

/** A transport to the web edge at `baseUrl`, e.g. "http://127.0.0.1:8080". */
export function createWebTransport(baseUrl: string, options: WebTransportOptions = {}): Transport {
  const { protocol = "connect", binary = true } = options;
  const common = { baseUrl, interceptors: options.interceptors ?? [], ...(options.fetch ? { fetch: options.fetch } : {}) };
  if (protocol === "grpc-web") {
    return createGrpcWebTransport(common);
  }
  return createConnectTransport({ ...common, useBinaryFormat: binary });
}
