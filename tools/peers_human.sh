#!/usr/bin/env bash
# A copy of the peers' harness (../shared/peers) with Colyseus' side of the human-pace capacity
# benchmark added to its colyseus/ folder (the files in tools/peers_human/):
#   room_human.js   the peers' Connect Four room plus spectators (the stock room has none)
#   server_human.js the peers' server with that room
#   load_human.js   players at a human pace, every one connected through its game, spectators,
#                   matchmaking between games; a ramp of steps, then a hold
#   test_room_human.js   node --test: the room's spectators and matchmaking
#
#   tools/peers_human.sh DEST          # then: python -m tools.bench_capacity_peers --peers-dir DEST
#
# DEST is a new folder, or one this script made before (its files are refreshed, its node_modules
# kept). The Node dependencies come from the peers' committed lock file (npm ci --prefer-offline,
# as the harness's run.sh installs them). The shared harness is left untouched.
set -euo pipefail

DEST="${1:?usage: tools/peers_human.sh DEST (a new folder, or one made by this script)}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="${TAFEL_PEERS:-$HERE/../shared/peers}"
MARK=".peers_human"

[[ -x "$SRC/run.sh" ]] || { echo "no peers' harness at $SRC (TAFEL_PEERS)" >&2; exit 2; }
if [[ -e "$DEST" && ! -e "$DEST/$MARK" ]]; then
  echo "$DEST exists and was not made by tools/peers_human.sh: give a new folder" >&2
  exit 2
fi
command -v node >/dev/null || { echo "node not found" >&2; exit 2; }
mkdir -p "$DEST"
touch "$DEST/$MARK"
(cd "$SRC" && tar cf - --exclude=node_modules --exclude=.runs .) | (cd "$DEST" && tar xf -)
cp "$HERE"/tools/peers_human/*.js "$DEST/colyseus/"
if [[ ! -d "$DEST/colyseus/node_modules" ]]; then
  (cd "$DEST/colyseus" && npm ci --no-audit --no-fund --prefer-offline >&2)
fi
echo "colyseus at human pace ready in $DEST/colyseus" >&2
