# The two commands of the README: `make run` serves Corpus, `make test` passes every check.
# Both share `make setup`, which is idempotent and does nothing when nothing changed.

PYTHON ?= python3

# Python compiles each module it imports once and keeps the bytecode in __pycache__ (git ignores
# it; pip would compile the whole environment at install, uv leaves it to first use). A machine
# that sets PYTHONDONTWRITEBYTECODE (this one does) makes every process compile every module it
# imports again: `import app.main` took 8.3 s that way against 4.4 s, paid by each `corpus`
# process the suite and the browser run start. The project's own commands keep their caches.
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
FRONTEND := frontend
SPA_SOURCES := $(shell find $(FRONTEND)/src $(FRONTEND)/public -type f 2>/dev/null) \
	$(wildcard $(FRONTEND)/index.html $(FRONTEND)/vite.config.ts $(FRONTEND)/tsconfig*.json)

.PHONY: setup build run test lint typecheck test-python test-frontend test-browser fuzz load fault schema openapi clean

setup: $(STAMP) $(FRONTEND)/node_modules/.package-lock.json

# Python 3.11+, a virtual environment, and the project with the versions it was tested with
# (constraints.txt: lower bounds live in pyproject.toml, the tested set here).
$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "Corpus needs Python 3.11 or newer (PYTHON=$(PYTHON))"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# uv (pinned in constraints.txt) installs the same pinned set as pip, in about a quarter of
	# pip's time on a clean clone (12 s against 45 s here): it resolves, downloads and links
	# wheels in parallel. Like `pip --no-compile`, it leaves byte-compiling to Python, which
	# compiles what it imports, once, on first use.
	$(BIN)/python -m pip install --quiet -c constraints.txt uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python -c constraints.txt -e '.[dev]'
	touch $@

$(FRONTEND)/node_modules/.package-lock.json: $(FRONTEND)/package.json $(FRONTEND)/package-lock.json
	@node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' \
		|| { echo "Corpus's web app needs Node.js 20 or newer"; exit 1; }
	cd $(FRONTEND) && npm ci --no-audit --no-fund
	touch $@

# The SPA is rebuilt only when its sources changed.
build: $(FRONTEND)/dist/index.html
$(FRONTEND)/dist/index.html: $(FRONTEND)/node_modules/.package-lock.json $(SPA_SOURCES)
	cd $(FRONTEND) && npm run build
	touch $@

run: setup build
	$(BIN)/corpus serve

lint: setup
	$(BIN)/ruff check app tests alembic scripts
	$(BIN)/ruff format --check app tests alembic scripts
	$(BIN)/lint-imports

typecheck: setup
	$(BIN)/mypy

test-frontend: setup build
	cd $(FRONTEND) && npm run lint && npm test

# One worker per core, each with its own embedded PostgreSQL; a module's tests stay on one
# worker, so a module-scoped server starts once. Modules are handed out in the suite's order,
# which puts the longest first (LONG_MODULES in tests/conftest.py), not sorted by their number
# of tests: a long module with few tests handed out last kept one worker busy a minute alone.
# pytest needs the Python environment only (its SPA tests serve a folder they write), so it does
# not wait about 30 s for npm's install and the web app's build: those run beside it.
test-python: $(STAMP)
	$(BIN)/pytest -n auto --dist loadscope --no-loadscope-reorder

# The built web app in Debian's Chromium against a real `corpus serve` (embedded PostgreSQL in a
# temporary folder, hash embeddings). Screenshots of every screen, both themes, desktop and phone
# width, stay in frontend/e2e/screenshots/ for inspection (git ignores them).
test-browser: setup build
	./scripts/ensure-chromium.sh
	cd $(FRONTEND) && CORPUS_PYTHON=$(CURDIR)/$(BIN)/python npm run test:browser

# The checks run side by side. pytest is the longest, and keeps only about one of the two
# cores busy on average (its workers wait on servers, child processes and PostgreSQL): mypy, the
# web app's checks and the browser run fill the other core instead of adding about 100 s after
# it. pytest is named first so that it starts first. (Not at a lower priority: under `nice` on a
# busy machine, the browser run's server starved past its 90 s bound.) --output-sync prints each
# check's output whole when that check ends; a failing check still fails `make test` (make waits
# for the others, then exits non-zero). Setup also runs two at a time: uv's and npm's installs
# overlap.
CHECKS := test-python test-browser typecheck test-frontend lint
test:
	+$(MAKE) --no-print-directory --jobs=5 --output-sync=target $(CHECKS)

# The OpenAPI schema fuzzed as each caller, thousands of cases (the suite runs a few per
# operation): no 5xx, no response that breaks the schema.
FUZZ_EXAMPLES ?= 60
fuzz: setup build
	CORPUS_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest tests/fuzz -p no:cacheprovider \
		-o log_cli=true --log-cli-level=INFO --log-cli-format='%(message)s'

# Mixed traffic (searches, uploads, asks extractive and with a scripted model, MCP calls,
# sign-ins) from LOAD_CLIENTS clients for LOAD_SECONDS against two `corpus serve` processes on
# 127.0.0.1; throughput and p50/p95/p99 per operation, non-zero on any error (docs/BENCHMARKS.md).
LOAD_CLIENTS ?= 16
LOAD_SECONDS ?= 180
load: $(STAMP)
	PYTHONPATH=. $(BIN)/python scripts/load.py --clients $(LOAD_CLIENTS) --seconds $(LOAD_SECONDS) \
		--json docs/load-latest.json

# The same load with a fault two fifths of the way in: PostgreSQL restarted, then (a run of its
# own) one of the two app processes killed. Requests may fail only cleanly, the service recovers
# by itself, and every acknowledged upload is read back afterwards.
FAULT_SECONDS ?= 60
fault: $(STAMP)
	PYTHONPATH=. $(BIN)/python scripts/load.py --clients $(LOAD_CLIENTS) --seconds $(FAULT_SECONDS) \
		--fault restart-postgres --json docs/fault-restart-postgres-latest.json
	PYTHONPATH=. $(BIN)/python scripts/load.py --clients $(LOAD_CLIENTS) --seconds $(FAULT_SECONDS) \
		--fault kill-app --json docs/fault-kill-app-latest.json

# Rewrite sql/schema.sql from a freshly migrated database (commit it with the migration).
schema: setup
	$(BIN)/python -m tests.db.schema_sql --write

# Rewrite frontend/openapi.json from the app, and the web app's typed client from it (commit both;
# tests/test_web_client.py and `npm run lint` fail while either is stale).
openapi: setup
	$(BIN)/python scripts/export_openapi.py
	cd $(FRONTEND) && npm run api:generate

clean:
	rm -rf $(VENV) $(FRONTEND)/node_modules $(FRONTEND)/dist
