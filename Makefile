# Every target installs what it needs: a fresh clone needs only python3 (>= 3.11) and make.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

## buf's lint and breaking-change check of proto/ (against proto/released/; in `make test` too).
.PHONY: buf
buf: $(STAMP)
	$(BIN)/buf lint
	$(BIN)/buf breaking --against proto/released/glintwick-v1-0.2.0.binpb

.PHONY: install solver run serve-redis simulate solve test test-cluster lint typecheck pytest soak bench bench-durability faults clean proto redis-server chromium loadtest

install: $(STAMP)

# setup.py compiles engine/solver/ in place (mypyc): a changed solver is rebuilt here
# (build_stamp.py is written by that build, not a source)
SOLVER_SOURCES := $(filter-out engine/solver/build_stamp.py,$(wildcard engine/solver/*.py))

$(STAMP): pyproject.toml setup.py $(SOLVER_SOURCES)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# compat: the checkout on sys.path by a .pth file, not setuptools' import hook,
	@# which type checkers cannot follow (a bot's mypy outside the checkout: docs/BOTS.md)
	$(BIN)/python -m pip install --quiet -e '.[dev]' --config-settings editable_mode=compat
	touch $(STAMP)

## (Re)build the compiled solver in place after editing engine/solver/ (until then the
## source runs: engine/solver/loading.py); `GLINTWICK_PURE_PYTHON=1 make solver` builds none.
solver: | $(STAMP)
	$(BIN)/python setup.py --quiet build_ext --inplace
	@# the install is current again, unless its own files changed since
	@if [ $(STAMP) -nt pyproject.toml ] && [ $(STAMP) -nt setup.py ]; then touch $(STAMP); fi
	$(BIN)/python -c "import engine.solver as s; print('solver:', s.SOLVER_FORM)"

## The main job: serve gRPC on 127.0.0.1:50051 and HTTP on 127.0.0.1:8080, embedded store.
run: $(STAMP)
	$(BIN)/glintwick serve --store memory

## Serve with Redis (REDIS_URL=redis://host:port/0), N processes sharing the ports.
serve-redis: $(STAMP)
	$(BIN)/glintwick serve --store $${REDIS_URL:-redis://127.0.0.1:6379/0} --workers $${WORKERS:-2}

simulate: $(STAMP)
	$(BIN)/glintwick simulate --ruleset whiskertrail --games 20 --seats 4
	$(BIN)/glintwick simulate --ruleset contract --games 20

solve: $(STAMP)
	$(BIN)/glintwick solve

## Lint, type-check and the default test suite (what CI runs).
test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

## The suite on one process per core (pytest-xdist; PYTEST_WORKERS=0 runs it in this one),
## a test file's tests on one process (their module fixtures are started once).
PYTEST_WORKERS ?= auto
pytest: $(STAMP) redis-server chromium
	$(BIN)/pytest -m "not slow" -n $(PYTEST_WORKERS) --dist loadfile

## The tests start their own redis-server on a free port: install Debian's if missing.
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  echo "installing redis-server (Debian package)"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq redis-server >/dev/null; }

## The browser table's tests (tests/e2e/test_web.py) drive Debian's Chromium through
## Playwright (which cannot download its own browser here): install it if missing.
chromium:
	@test -x /usr/bin/chromium || { \
	  echo "installing chromium (Debian package)"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

## 10,000 random games (all rule sets together) with every invariant checked (long).
soak: $(STAMP)
	GLINTWICK_SOAK_GAMES=$${GLINTWICK_SOAK_GAMES:-10000} $(BIN)/pytest -m slow -x -p no:cacheprovider --timeout=0

## The long Redis Cluster runs of the end-to-end tests (marked slow: not in `make test`,
## which runs the cluster's store contract, failover and quick replica tests).
test-cluster: $(STAMP) redis-server
	$(BIN)/pytest -m slow -k cluster -p no:cacheprovider --ignore=tests/e2e/test_faults.py

bench: $(STAMP)
	$(BIN)/python -m bench

## What each durability mode costs (moves/s, ratio to no persistence, same run) and loses
## when Redis is SIGKILLed or its primary fails over (docs/OPERATIONS.md, "Durability").
bench-durability: $(STAMP) redis-server
	$(BIN)/python -m bench.durability $(DURABILITY_ARGS)

## The fault campaign (docs/FAULTS.md): 200 tables through server and Redis kills, a frozen
## Redis and clients dropping calls, on one Redis then on a Redis Cluster (a primary's
## failover too); fails on any lost, doubled or unfinished game. FAULTS_TOPOLOGIES=cluster
## runs one; FAULTS_ARGS="--games 50 …" goes to each.
FAULTS_TOPOLOGIES ?= standalone cluster
faults: $(STAMP) redis-server
	@for topology in $(FAULTS_TOPOLOGIES); do \
		echo "faults: topology $$topology"; \
		$(BIN)/python -m loadtests.faults --topology $$topology $(FAULTS_ARGS) || exit 1; \
	done

## Load test (docs/LOADTEST.md): Redis, the server's processes and headless locust, reports in
## build/loadtest/; fails on any failed request or a p99 over its limit. LOADTEST_* variables
## (LOADTEST_TABLES=40 LOADTEST_TIME=2m …) or LOADTEST_ARGS="--steps 5,10,20 --profile".
loadtest: $(STAMP) redis-server
	$(BIN)/python -m loadtests.run $(LOADTEST_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info engine/*.so engine/solver/*.so engine/solver/build_stamp.py \
		.pytest_cache .mypy_cache .ruff_cache

## Regenerate the Python code of proto/ and glintwick/v1/descriptors.binpb (committed;
## `make test` checks they are current).
proto: $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=. --mypy_out=. \
		--plugin=protoc-gen-mypy=$(BIN)/protoc-gen-mypy \
		--plugin=protoc-gen-mypy_grpc=$(BIN)/protoc-gen-mypy_grpc \
		--grpc_python_out=. --mypy_grpc_out=. proto/glintwick/v1/*.proto proto/glintwick/storage/v1/*.proto
	@# the API's descriptors with their comments (the _pb2 modules have none): the OpenAPI
	@# document's descriptions (services/openapi.py)
	$(BIN)/python -m grpc_tools.protoc -Iproto --include_source_info \
		--descriptor_set_out=glintwick/v1/descriptors.binpb proto/glintwick/v1/*.proto
