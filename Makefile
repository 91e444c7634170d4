# Every target installs what it needs: a fresh clone needs only python3 (>= 3.11) and make.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install run serve simulate solve test lint typecheck pytest soak bench clean proto

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## The main job (for now: random games simulated in process, no server, no Redis).
run: simulate

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

pytest: $(STAMP)
	$(BIN)/pytest -m "not slow"

## 10,000 random games per rule set with every invariant checked (long).
soak: $(STAMP)
	GLINTWICK_SOAK_GAMES=$${GLINTWICK_SOAK_GAMES:-10000} $(BIN)/pytest -m slow -x -p no:cacheprovider

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache

## Regenerate the Python code of proto/ (committed; `make test` checks it is current).
proto: $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=. --mypy_out=. \
		--plugin=protoc-gen-mypy=$(BIN)/protoc-gen-mypy \
		--plugin=protoc-gen-mypy_grpc=$(BIN)/protoc-gen-mypy_grpc \
		--grpc_python_out=. --mypy_grpc_out=. proto/glintwick/v1/*.proto
