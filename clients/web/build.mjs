// Bundles the app (src/main.ts + the TypeScript SDK it imports) into dist/ with esbuild. The SDK's
// own dependencies (protobuf-es, connect) resolve from clients/typescript/node_modules, so the
// bundle holds one copy of each. The games' rules pages (docs/rules/, English, Dutch, German) go to
// dist/rules/ as Markdown and as HTML (rules.mjs), served by the web edge at /rules/.
import { build } from "esbuild";
import { copyFile, mkdir, rm } from "node:fs/promises";
import { buildRules } from "./rules.mjs";

await rm("dist", { recursive: true, force: true });
await mkdir("dist");
await build({
  entryPoints: { app: "src/main.ts" },
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  sourcemap: true,
  outdir: "dist",
  nodePaths: ["../typescript/node_modules"],
  logLevel: "warning",
});
await build({ entryPoints: { app: "src/app.css" }, bundle: true, minify: true, outdir: "dist", logLevel: "warning" });
await copyFile("index.html", "dist/index.html");
await copyFile("favicon.svg", "dist/favicon.svg");
await buildRules("../../docs/rules", "dist/rules");
