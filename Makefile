# Sounding: `make run` serves on :3000 with SQLite; `make test` runs the whole suite.
# Both create the virtual environment and install what they need on a fresh machine,
# at the exact versions (and hashes) of the locks in requirements/: never whatever an
# index serves that day. `make lock` refreshes the locks (docs/development.md).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMPS := .stamps
REQ := requirements
# Every Python package from a lock, each checked against its hashes. The venv's own pip
# (the one ensurepip ships with the Python) installs them: upgrading it would take
# whatever pip the index serves that day.
PIP = python -m pip install --quiet --require-hashes
# Sounding itself and the test plugin, whose dependencies the lock already installed;
# their build backend comes from the lock too (requirements/build.in).
PIP_LOCAL = python -m pip install --quiet --no-deps --no-build-isolation
# The test applications written for sentry-sdk 2.x run in this environment
# (tests/support/clients.py); sentry-sdk 3.x is in .venv.
SENTRY2 := .venvs/sentry-sdk-2

.PHONY: run test lint proto bench install test-deps clean lock test-clients

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Sounding needs Python 3.11 or newer"'
	$(PYTHON) -m venv $(VENV)

$(STAMPS)/install: pyproject.toml $(REQ)/run.txt | $(BIN)/python
	$(BIN)/$(PIP) -r $(REQ)/run.txt
	$(BIN)/$(PIP_LOCAL) -e .
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/test-deps: pyproject.toml $(REQ)/test.txt tests/plugin_pkg/pyproject.toml | $(BIN)/python
	$(BIN)/$(PIP) -r $(REQ)/test.txt
	$(BIN)/$(PIP_LOCAL) -e . ./tests/plugin_pkg
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/sentry-sdk-2: $(REQ)/sentry-sdk-2.txt
	rm -rf $(SENTRY2) && $(PYTHON) -m venv $(SENTRY2)
	$(SENTRY2)/bin/$(PIP) -r $(REQ)/sentry-sdk-2.txt
	@mkdir -p $(STAMPS) && touch $@

# The JavaScript OTLP exporter that tests/receiver/test_otlp_clients.py drives
# (node and npm from Debian when missing).
$(STAMPS)/js-deps: tests/js/package.json tests/js/package-lock.json
	@command -v npm >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq nodejs npm; }
	cd tests/js && npm ci --no-audit --no-fund --loglevel=error
	@mkdir -p $(STAMPS) && touch $@

install: $(STAMPS)/install

test-deps: $(STAMPS)/test-deps $(STAMPS)/sentry-sdk-2 $(STAMPS)/js-deps
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

# The real-client tests against each client's newest release, one client at a time, in
# environments of their own under .clients/ (tests/support/matrix.py): a table of what a
# new release broke. `make test-clients CLIENTS="sentry-sdk-3 sentry-javascript"` for some.
test-clients: test-deps
	$(BIN)/python -m tests.support.matrix $(CLIENTS)

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

# The locks, from pyproject.toml and requirements/*.in: what is locked stays at its
# version unless the ranges exclude it; `make lock UPGRADE=1` takes the newest each range
# allows, `make lock UPGRADE_PACKAGE=sqlalchemy` only that one's (docs/development.md).
# tests/deploy/test_lock.py fails while a lock disagrees with pyproject.toml.
LOCK = $(BIN)/uv pip compile --quiet --generate-hashes --universal --python-version 3.11 \
	$(if $(UPGRADE),--upgrade) $(if $(UPGRADE_PACKAGE),--upgrade-package $(UPGRADE_PACKAGE))
lock: $(STAMPS)/test-deps
	$(LOCK) pyproject.toml --extra test $(REQ)/build.in -o $(REQ)/test.txt
	$(LOCK) pyproject.toml $(REQ)/build.in -c $(REQ)/test.txt -o $(REQ)/run.txt
	awk '/^sentry-sdk==/{skip=1;next} skip && /^[ #]/{next} {skip=0; print}' \
		$(REQ)/test.txt > $(STAMPS)/sentry-sdk-2.constraints
	$(LOCK) $(REQ)/sentry-sdk-2.in -c $(STAMPS)/sentry-sdk-2.constraints -o $(REQ)/sentry-sdk-2.txt

clean:
	rm -rf $(VENV) .venvs .clients $(STAMPS) tests/js/node_modules
