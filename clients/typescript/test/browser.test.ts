// The SDK's core (what a browser bundles: src/index.ts and everything it imports) uses no
// Node-only module, so it runs in a browser over Connect or gRPC-Web.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const NODE_ONLY = new Set([...builtinModules, "@connectrpc/connect-node"]);

test("the core imports no Node-only module", () => {
  const src = join(dirname(fileURLToPath(import.meta.url)), "..", "src");
  const seen = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const [, spec] of readFileSync(file, "utf8").matchAll(/(?:import|export)[^"']*?from\s*["']([^"']+)["']/g)) {
      if (spec === undefined) continue;
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec));
      else bare.add(spec);
    }
  };
  visit(join(src, "index.js"));
  assert.ok(seen.size > 10, `walked the core's modules (${seen.size})`);
  assert.ok(!seen.has(join(src, "node.js")));
  const nodeOnly = [...bare].filter((spec) => spec.startsWith("node:") || NODE_ONLY.has(spec.split("/").slice(0, 2).join("/")) || NODE_ONLY.has(spec));
  assert.deepEqual(nodeOnly, []);
  assert.ok(bare.has("@connectrpc/connect-web"));
});
