# Sounding: `make run` serves on :3000 with SQLite; `make test` runs the whole suite.
# Both create the virtual environment and install what they need on a fresh machine.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMPS := .stamps

.PHONY: run test lint proto bench install test-deps clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Sounding needs Python 3.11 or newer"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMPS)/install: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/test-deps: pyproject.toml tests/plugin_pkg/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]' ./tests/plugin_pkg
	@mkdir -p $(STAMPS) && touch $@

# The JavaScript OTLP exporter that tests/receiver/test_otlp_clients.py drives
# (node and npm from Debian when missing).
$(STAMPS)/js-deps: tests/js/package.json tests/js/package-lock.json
	@command -v npm >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq nodejs npm; }
	cd tests/js && npm ci --no-audit --no-fund --loglevel=error
	@mkdir -p $(STAMPS) && touch $@

install: $(STAMPS)/install

test-deps: $(STAMPS)/test-deps $(STAMPS)/js-deps
	@bash tests/setup_services.sh

run: $(STAMPS)/install
	$(BIN)/sounding serve

# Tests in TEST_WORKERS processes (pytest-xdist), each test file whole in one of them
# so that a module's shared collector starts once. TEST_WORKERS=0 runs in this process.
# 3 on these 2-core machines: 4 took 12-13 min of pytest at a load of about 5, and once
# left a collector 30 s without answering a request, past the test client's timeout.
TEST_WORKERS ?= 3
PACKAGES := sounding receiver processors exporters storage dashboard model runtime extensions

# Byte-compiled first: where PYTHONDONTWRITEBYTECODE is set (as on these machines) every
# collector a test starts would otherwise compile Sounding's sources again, about
# 0.35 s of CPU per start and some 600 starts per run. Python reads the .pyc files
# either way and recompiles one whose source changed.
test: test-deps
	$(BIN)/python -m compileall -q -j0 -x node_modules $(PACKAGES) proto tests bench
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=25 $(PYTEST_ARGS)

lint: $(STAMPS)/test-deps
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy $(PACKAGES)

# Regenerate the Python code of proto/sounding/**/*.proto (checked in; tests/proto
# fails while it is stale).
proto: $(STAMPS)/test-deps
	$(BIN)/python -m proto.generate

bench: $(STAMPS)/test-deps
	$(BIN)/python -m bench $(BENCH_ARGS)
	$(BIN)/python -m bench crons
	$(BIN)/python -m bench detectors

clean:
	rm -rf $(VENV) $(STAMPS) tests/js/node_modules
