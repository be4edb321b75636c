#!/bin/sh
# Builds the Go load generator (`make loadgen-go`) into build/loadgen-go/tafel-loadgen-go, from the
# repository's root, offline: Go, grpc-go, protobuf-go and their protoc plugins are Debian's
# packages (no module proxy is reachable from CI), so the build runs in GOPATH mode against
# /usr/share/gocode. The messages are generated from protos/ at build time, never committed;
# import paths are given on the command line (M options), so the protos need no go_package.
set -eu
OUT=build/loadgen-go
PACKAGES="golang-go golang-google-grpc-dev golang-google-protobuf-dev protoc-gen-go protoc-gen-go-grpc protobuf-compiler"
if ! command -v go >/dev/null 2>&1 || ! command -v protoc-gen-go-grpc >/dev/null 2>&1 \
  || ! command -v protoc-gen-go >/dev/null 2>&1 || [ ! -d /usr/share/gocode/src/google.golang.org/grpc ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $PACKAGES
  else
    echo "the Go load generator needs: apt-get install $PACKAGES" >&2
    exit 1
  fi
fi
PROTOS="tafel/games/v1/games.proto tafel/games/v1/reasons.proto tafel/connect4/v1/connect4.proto \
  tafel/plus4/v1/plus4.proto tafel/coloursquare/v1/coloursquare.proto tafel/play/v1/play.proto"
MAP=""
for proto in $PROTOS; do
  MAP="$MAP${MAP:+,}M$proto=tafel.dev/gen/$(dirname "$proto")"
done
rm -rf "$OUT/src"
mkdir -p "$OUT/src/tafel.dev/loadgen"
(cd protos && protoc -I . --go_out="../$OUT/src" --go_opt="$MAP" --go-grpc_out="../$OUT/src" --go-grpc_opt="$MAP" $PROTOS)
cp clients/loadgen/go/*.go "$OUT/src/tafel.dev/loadgen/"
ROOT=$(pwd)
cd "$OUT/src/tafel.dev/loadgen"
GO111MODULE=off GOPATH="$ROOT/$OUT:/usr/share/gocode" GOCACHE="$ROOT/$OUT/cache" GOFLAGS=-trimpath \
  go vet .
GO111MODULE=off GOPATH="$ROOT/$OUT:/usr/share/gocode" GOCACHE="$ROOT/$OUT/cache" GOFLAGS=-trimpath \
  go build -o "$ROOT/$OUT/tafel-loadgen-go" .
echo "built $OUT/tafel-loadgen-go ($(go version | cut -d' ' -f3))"
