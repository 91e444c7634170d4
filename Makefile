# Every target installs what it needs: a fresh clone needs only python3 (>= 3.11) and make.
# `make help` lists the targets: the first line of the `## ` comment above each is its
# line there (the lines after it say more, here only).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

## buf's lint and breaking-change check of proto/ against the last release (make test too).
## (The last release: the newest image in proto/released/.)
LAST_RELEASE = $(shell ls proto/released/glintwick-v1-*.binpb | sort -V | tail -n 1)
.PHONY: buf release-proto
buf: $(STAMP)
	$(BIN)/buf lint
	$(BIN)/buf breaking --against $(LAST_RELEASE)

## Record proto/ as the API of release VERSION (default: pyproject.toml's version).
## It writes proto/released/glintwick-v1-VERSION.binpb, the image `buf breaking` compares with.
## Rerun it when the proto changes before the release ships; its breaks against the
## release before are listed in tests/integration/test_buf.py and docs/API.md.
VERSION ?= $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
release-proto: $(STAMP)
	$(BIN)/buf build -o proto/released/glintwick-v1-$(VERSION).binpb
	@echo "proto/released/glintwick-v1-$(VERSION).binpb written"

.PHONY: help install solver run serve-redis simulate solve test unit test-cluster lint typecheck pytest soak bench bench-durability faults clean proto redis-server chromium node ts-client loadtest docs-limits web-match lighthouse

## This list: each target and what it does, in one line.
help:
	@echo "make TARGET (the Makefile says more above each target):"
	@awk '/^## / { if (doc == "") doc = substr($$0, 4); next } \
	     /^\.PHONY:/ || /^[A-Z_]+ *[:?+]?= / || /^\t/ { next } \
	     /^[a-z][a-z-]*:/ && doc != "" { printf "  %-17s %s\n", substr($$1, 1, index($$1, ":") - 1), doc } \
	     { doc = "" }' $(firstword $(MAKEFILE_LIST))

## Create .venv: the project (editable) with its dev tools, the solver compiled by mypyc.
install: $(STAMP)

# setup.py compiles engine/solver/, engine/compiled.py's and clients/compiled.py's groups
# in place (mypyc): a changed solver or group is rebuilt here (build_stamp.py is written by
# that build)
SOLVER_SOURCES := $(filter-out engine/solver/build_stamp.py,$(wildcard engine/solver/*.py))
ENGINE_SOURCES := engine/compiled.py engine/loading.py engine/errors.py engine/cards.py \
	engine/melds.py engine/events.py engine/shuffle.py engine/views.py engine/game/phase.py \
	engine/game/hands.py engine/game/claims.py engine/game/dealing.py engine/game/moves.py \
	engine/game/transitions.py engine/game/codec.py engine/game/state.py
CLIENT_SOURCES := clients/compiled.py clients/bots/tracking.py clients/training/actions.py \
	clients/training/observation.py

$(STAMP): pyproject.toml setup.py $(SOLVER_SOURCES) $(ENGINE_SOURCES) $(CLIENT_SOURCES)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# compat: the checkout on sys.path by a .pth file, not setuptools' import hook,
	@# which type checkers cannot follow (a bot's mypy outside the checkout: docs/BOTS.md)
	$(BIN)/python -m pip install --quiet -e '.[dev]' --config-settings editable_mode=compat
	touch $(STAMP)

## Rebuild the compiled solver, rules engine and client group in place after an edit.
## (Until then the source runs: engine/loading.py; the groups: setup.py, engine/compiled.py,
## clients/compiled.py; `GLINTWICK_PURE_PYTHON=1 make solver` builds none.)
solver: | $(STAMP)
	$(BIN)/python setup.py --quiet build_ext --inplace
	@# the install is current again, unless its own files changed since
	@if [ $(STAMP) -nt pyproject.toml ] && [ $(STAMP) -nt setup.py ]; then touch $(STAMP); fi
	$(BIN)/python -c "import engine.solver as s; print('solver:', s.SOLVER_FORM)"
	$(BIN)/python -c "import engine.game as g; print('engine:', g.ENGINE_FORM)"
	$(BIN)/python -c "import clients.bots as b; print('clients:', b.CLIENTS_FORM)"

## The main job: serve gRPC on 127.0.0.1:50051 and HTTP on 127.0.0.1:8080, embedded store.
run: $(STAMP)
	$(BIN)/glintwick serve --store memory

## Serve with Redis (REDIS_URL=redis://host:port/0), N processes sharing the ports.
serve-redis: $(STAMP)
	$(BIN)/glintwick serve --store $${REDIS_URL:-redis://127.0.0.1:6379/0} --workers $${WORKERS:-2}

## Play 20 random games of each rule set in process and print their summaries.
simulate: $(STAMP)
	$(BIN)/glintwick simulate --ruleset whiskertrail --games 20 --seats 4
	$(BIN)/glintwick simulate --ruleset contract --games 20

## Solver queries as JSON lines on stdin, one JSON answer line each on stdout.
solve: $(STAMP)
	$(BIN)/glintwick solve

## Lint, type-check and the default test suite (what CI runs).
test: lint typecheck pytest

## ruff's lint and format check.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## mypy (strict) over the code and the tests.
typecheck: $(STAMP)
	$(BIN)/mypy

## The default test suite (slow tests aside): starts its own redis-server and Chromium.
## On one process per core (pytest-xdist; PYTEST_WORKERS=0 runs it in this one), a test
## file's tests on one process (their module fixtures are started once).
PYTEST_WORKERS ?= auto
pytest: $(STAMP) redis-server chromium node
	$(BIN)/pytest -m "not slow" -n $(PYTEST_WORKERS) --dist loadfile

## The quick tests, for the first hour: no Redis, no browser (a minute or two on 2 cores).
## The engine, the clients and the service in process, the properties, and the checks of
## the repository's own files that need neither (buf, the generated code, the layers, the
## manifests, the docs' events, error reasons and paths, the proto's comments, the page's caching).
UNIT_TESTS := tests/unit tests/property $(addprefix tests/integration/,test_buf.py \
	test_generated_code.py test_layers.py test_k8s_manifests.py test_event_docs.py \
	test_error_reasons.py test_proto_comments.py test_makefile.py test_docs_paths.py \
	test_limits_doc.py test_static_cache.py)
unit: $(STAMP)
	$(BIN)/pytest -m "not slow" -n $(PYTEST_WORKERS) --dist loadfile $(UNIT_TESTS)

## A whole contract match at the browser table against three bots, by clicks (slow).
## At the normal pace (800 ms a move), played promptly: at most 20 minutes, no round at the
## 200-turn valve; the time and each round's end in build/web/web-match.json.
web-match: $(STAMP) chromium
	$(BIN)/pytest -m slow -n 0 tests/e2e/web/test_web_match.py

## Lighthouse's accessibility, best-practices and performance scores of the browser table.
## tools/lighthouse/score.py: npm's lighthouse (npm ci of tools/lighthouse's lockfile) on a
## table against three house bots, headless Chromium; fails under 95/95/90; build/lighthouse/.
lighthouse: $(STAMP) chromium node
	cd tools/lighthouse && npm ci --no-audit --no-fund --loglevel=error
	PYTHONPATH=. $(BIN)/python tools/lighthouse/score.py

## Install Debian's redis-server if missing (the tests start their own on a free port).
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  echo "installing redis-server (Debian package)"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq redis-server >/dev/null; }

## The browser table's tests drive Debian's Chromium: install it if missing.
## (tests/e2e/web/, through Playwright, which cannot download its own browser here.)
chromium:
	@test -x /usr/bin/chromium || { \
	  echo "installing chromium (Debian package)"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

## Install Debian's nodejs and npm if missing (the Node.js example client's test).
## tests/e2e/test_node_client.py plays a game with clients/examples/node (npm ci of its lockfile).
node:
	@{ command -v node && command -v npm; } >/dev/null 2>&1 || { \
	  echo "installing nodejs and npm (Debian packages)"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nodejs npm >/dev/null; }

## Compile the typed TypeScript client of the OpenAPI document (tsc --strict, no cast).
## clients/examples/ts: its types generated from this checkout's document (openapi-typescript),
## its program compiled in build/ts-client (fails on a type error); tests/e2e/test_ts_client.py
## also runs it against a server.
ts-client: $(STAMP) node
	$(BIN)/python -m tests.support.ts_client build/ts-client

## 10,000 random games (all rule sets together) with every invariant checked (long).
soak: $(STAMP)
	GLINTWICK_SOAK_GAMES=$${GLINTWICK_SOAK_GAMES:-10000} $(BIN)/pytest -m slow -x -p no:cacheprovider --timeout=0

## The long Redis Cluster runs of the end-to-end tests (marked slow: not in `make test`).
## (`make test` runs the cluster's store contract, failover and quick replica tests.)
test-cluster: $(STAMP) redis-server
	$(BIN)/pytest -m slow -k cluster -p no:cacheprovider --ignore=tests/e2e/test_faults.py

## Every benchmark of bench/, printed and saved in bench/results/latest.json.
## (RLCard, which bench.bench_training compares with, is installed here: the bench's only.)
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet rlcard
	$(BIN)/python -m bench

## What each Redis durability mode costs and loses (docs/OPERATIONS.md, "Durability").
## Moves/s and the ratio to no persistence, in one run; what is lost when Redis is
## SIGKILLed or its primary fails over.
bench-durability: $(STAMP) redis-server
	$(BIN)/python -m bench.durability $(DURABILITY_ARGS)

## The fault campaign (docs/FAULTS.md): fails on any lost, doubled or unfinished game.
## 200 tables through server and Redis kills, a frozen Redis and clients dropping calls, on
## one Redis then on a Redis Cluster (a primary's failover too). FAULTS_TOPOLOGIES=cluster
## runs one; FAULTS_ARGS="--games 50 …" goes to each.
FAULTS_TOPOLOGIES ?= standalone cluster
faults: $(STAMP) redis-server
	@for topology in $(FAULTS_TOPOLOGIES); do \
		echo "faults: topology $$topology"; \
		$(BIN)/python -m loadtests.faults --topology $$topology $(FAULTS_ARGS) || exit 1; \
	done

## The load test (docs/LOADTEST.md): Redis, the server's processes and headless locust.
## Reports in build/loadtest/; fails on any failed request or a p99 over its limit.
## LOADTEST_* variables (LOADTEST_TABLES=40 LOADTEST_TIME=2m …) or
## LOADTEST_ARGS="--steps 5,10,20 --profile".
loadtest: $(STAMP) redis-server
	$(BIN)/python -m loadtests.run $(LOADTEST_ARGS)

## Remove .venv, build/, the compiled solver and the tools' caches.
clean:
	rm -rf $(VENV) build *.egg-info engine/*.so engine/solver/*.so engine/solver/build_stamp.py \
		clients/*.so clients/bots/*.so clients/training/*.so clients/*/build_stamp.py \
		.pytest_cache .mypy_cache .ruff_cache

## Write docs/API.md's default rate limits and quotas from the server's constants.
## (services/config.py; tests/integration/test_limits_doc.py fails while they differ)
docs-limits: $(STAMP)
	$(BIN)/python -m services.limits_doc

## Regenerate the Python code of proto/ and glintwick/v1/descriptors.binpb.
## (Both committed: `make test` checks they are current.)
proto: $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=. --mypy_out=. \
		--plugin=protoc-gen-mypy=$(BIN)/protoc-gen-mypy \
		--plugin=protoc-gen-mypy_grpc=$(BIN)/protoc-gen-mypy_grpc \
		--grpc_python_out=. --mypy_grpc_out=. proto/glintwick/v1/*.proto proto/glintwick/storage/v1/*.proto
	@# the API's descriptors with their comments (the _pb2 modules have none): the OpenAPI
	@# document's descriptions (services/openapi.py)
	$(BIN)/python -m grpc_tools.protoc -Iproto --include_source_info \
		--descriptor_set_out=glintwick/v1/descriptors.binpb proto/glintwick/v1/*.proto
