#!/usr/bin/env bash
# A copy of the peers' harness (../shared/peers) with one more peer, `bgioflat`: boardgame.io
# exactly as `boardgameio`, but storing its matches with its own durable storage, FlatFile
# (node-persist: a file per match, per log and per metadata, rewritten on every move), instead of
# the default InMemory one.
#
# Why: the peers keep their games in their server's memory, and a crashed process loses them;
# tafel commits every move to Redis before anyone sees it (and survives kill -9 of any process).
# This puts a durable boardgame.io beside the in-memory one in the same run
# (docs/benchmarks.md, "The peers keep their games in memory"):
#
#   tools/peers_flatfile.sh /tmp/peers-flat
#   PEERS_WORK=/tmp/peers-flat-work .venv/bin/python -m tools.bench_peers --peers-dir /tmp/peers-flat \
#       --peers boardgameio bgioflat colyseus --tafel go . TAFEL_LOADGEN_CLIENT=go
#
# The shared harness is left untouched; node-persist (an optional dependency of boardgame.io that
# its lock file leaves out) is installed into the copy's work folder, pinned.
set -euo pipefail

DEST="${1:?usage: tools/peers_flatfile.sh DEST (a new folder)}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="${TAFEL_PEERS:-$HERE/../shared/peers}"
NODE_PERSIST="node-persist@3.1.3"

[[ -x "$SRC/run.sh" ]] || { echo "no peers' harness at $SRC (TAFEL_PEERS)" >&2; exit 2; }
[[ ! -e "$DEST" ]] || { echo "$DEST exists: give a new folder" >&2; exit 2; }
mkdir -p "$DEST"
(cd "$SRC" && tar cf - --exclude=node_modules --exclude=.runs .) | (cd "$DEST" && tar xf -)
cp -r "$DEST/boardgameio" "$DEST/bgioflat"

python3 - "$DEST" <<'EOF'
import pathlib, sys
dest = pathlib.Path(sys.argv[1])

def edit(path: pathlib.Path, old: str, new: str) -> None:
    text = path.read_text()
    if old not in text:
        sys.exit(f"{path}: the harness changed ({old!r} not found); update tools/peers_flatfile.sh")
    path.write_text(text.replace(old, new, 1))

server = dest / "bgioflat" / "server.js"
edit(server,
     "delete process.env.FLATFILE_DIR; // force the default InMemory storage\n"
     "const { Server, Origins } = require('boardgame.io/server');",
     "// bgioflat (tafel tools/peers_flatfile.sh): boardgame.io's FlatFile storage, a fresh folder a run.\n"
     "const { Server, Origins, FlatFile } = require('boardgame.io/server');\n"
     "const fs = require('fs');\nconst os = require('os');\nconst path = require('path');")
edit(server,
     "const server = Server({ games: [ConnectFour], origins: [Origins.LOCALHOST] });",
     "const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bgioflat-'));\n"
     "  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));\n"
     "  const db = new FlatFile({ dir, logging: false, ttl: false });\n"
     "  const server = Server({ games: [ConnectFour], origins: [Origins.LOCALHOST], db });")
run = dest / "run.sh"
edit(run, "boardgameio|colyseus) ;;", "boardgameio|colyseus|bgioflat) ;;")
edit(run, 'if [[ "$PEER" == boardgameio ]]', 'if [[ "$PEER" == boardgameio || "$PEER" == bgioflat ]]')
EOF

# run.sh installs from the lock file when the work folder has no node_modules; install them now,
# then add node-persist, so that install never runs without it.
WORK="${PEERS_WORK:-${TMPDIR:-/tmp}/tafel-peers}"
mkdir -p "$WORK/bgioflat"
(cd "$DEST/bgioflat" && tar cf - .) | (cd "$WORK/bgioflat" && tar xf -)
(cd "$WORK/bgioflat" && npm ci --no-audit --no-fund --prefer-offline >&2 \
  && npm install --no-save --no-audit --no-fund --prefer-offline "$NODE_PERSIST" >&2)
echo "bgioflat ready in $DEST (work folder $WORK): run its run.sh with PEERS_WORK=$WORK" >&2
