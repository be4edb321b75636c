// The SDK against a platform with TLS (started by tests/clients/test_typescript_sdk.py with a
// private CA): a whole Connect Four game over native gRPC, Connect and gRPC-Web over HTTPS with
// that CA given as `ca`; the certificate's other name through `serverName`; and a certificate
// that does not verify refused at once with a CertificateError naming why.
//   TAFEL_TEST_TLS_GATEWAY  the gateway's native gRPC address (TLS), "127.0.0.1:PORT"
//   TAFEL_TEST_TLS_WEB_URL  its web edge, "https://127.0.0.1:PORT"
//   TAFEL_TEST_TLS_CA       the PEM file of the CA that signed both (for 127.0.0.1 and localhost)

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { CertificateError, TafelClient } from "../../src/index.js";
import { createNativeTransport, createNodeWebTransport, type TlsOptions } from "../../src/node.js";
import { guests, playGame, Relay, required, type TransportKind } from "../platform.js";
import { connect4Strategy } from "../../conformance/strategies.js";

const gateway = required("TAFEL_TEST_TLS_GATEWAY");
const web = new URL(required("TAFEL_TEST_TLS_WEB_URL"));
const ca = readFileSync(required("TAFEL_TEST_TLS_CA"));

interface TlsKind extends TransportKind {
  /** A client over this transport with these TLS settings (through a stand-in at `via`, "host:port"). */
  with: (tls: TlsOptions, via?: string) => TafelClient;
}

function kinds(): TlsKind[] {
  const native = (tls: TlsOptions, via?: string): ReturnType<typeof createNativeTransport> =>
    createNativeTransport(via ?? gateway, { scheme: "https", ...tls });
  const edge = (protocol: "connect" | "grpc-web") => (tls: TlsOptions, via?: string) =>
    createNodeWebTransport(via ? `https://${via}` : web.href, { protocol, ...tls });
  return [
    { name: "native gRPC", make: native, address: gateway },
    { name: "Connect", make: edge("connect"), address: web.host },
    { name: "gRPC-Web", make: edge("grpc-web"), address: web.host },
  ].map((kind) => ({
    name: kind.name,
    address: kind.address,
    make: () => kind.make({ ca }),
    with: (tls: TlsOptions, via?: string) => new TafelClient(kind.make(tls, via)),
  }));
}

async function refused(client: TafelClient, reason: string): Promise<void> {
  try {
    await assert.rejects(client.signInAsGuest(), (error) => {
      assert.ok(error instanceof CertificateError, `not a CertificateError: ${error}`);
      assert.equal(error.reason, reason);
      assert.match(error.detail, /certificate/);
      return true;
    });
  } finally {
    client.close();
  }
}

for (const kind of kinds()) {
  describe(`TLS over ${kind.name}`, () => {
    test("two players matchmake and play Connect Four to the end over TLS", async (t) => {
      const players = await guests(t, kind, 2);
      const matches = await Promise.all(players.map((p) => p.findMatch("connect4")));
      assert.equal(matches[0]!.gameId, matches[1]!.gameId);
      const statuses = await Promise.all(players.map((p, i) => playGame(p, matches[0]!.gameId, matches[i]!.seat, connect4Strategy)));
      assert.equal(statuses[0]!.over, true);
      assert.equal(statuses[0]!.outcome?.ranks.length, 2);
      assert.equal(statuses[0]!.version, statuses[1]!.version);
    });

    test("a certificate signed by an unknown CA is refused with CertificateError, and not retried", async (t) => {
      // Through a TCP relay that counts connections: a retry would open another.
      const relay = await Relay.start(kind.address);
      t.after(() => relay.close());
      await refused(kind.with({}, relay.address), "CERTIFICATE_UNTRUSTED"); // Node's own roots know no test CA
      assert.equal(relay.connections, 1);
    });

    test("serverName: the certificate's other name verifies, a name it lacks is refused", async () => {
      // "localhost" is on the certificate; connecting by IP while expecting that name works.
      const named = kind.with({ ca, serverName: "localhost" });
      try {
        assert.ok((await named.signInAsGuest()).playerId);
      } finally {
        named.close();
      }
      await refused(kind.with({ ca, serverName: "gateway.elsewhere.example" }), "CERTIFICATE_NAME_MISMATCH");
    });
  });
}
