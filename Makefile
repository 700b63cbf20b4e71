# Tessera: `make run` starts the product with embedded defaults, `make test` runs every test.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# Delta Lake's jars for every Spark driver Tessera starts (pom.xml; engine/spark_config.py).
JARS_DIR := $(VENV)/share/tessera/jars
JARS_STAMP := $(JARS_DIR)/.installed-stamp
# The client at the lowest versions its requirements allow (tests/client/test_extras_versions.py).
CLIENT_LOWEST := $(VENV)/share/tessera/client-lowest
CLIENT_LOWEST_STAMP := $(CLIENT_LOWEST)/.installed-stamp

# Tests run against the machine's real PostgreSQL and Redis.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_BROKER_URL ?= redis://127.0.0.1:6379/15

.PHONY: help install frontend frontend-test frontend-lint api-types api-types-check chromium client-lowest run \
	test check lint typecheck format screenshots bench-catalog lock clean

help:
	@echo "make run    - set up .venv, migrate, start web + worker on \$$PORT (default 8000)"
	@echo "make test   - lint, type-check and run the whole test suite (browser and fault tests included)"
	@echo "make screenshots - regenerate docs/screenshots/ from the browser tests"
	@echo "make bench-catalog - fill a synthetic catalog on PostgreSQL and measure API latency"

$(STAMP): pyproject.toml client/pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q --upgrade "pip>=24"
	$(BIN)/python -m pip install --disable-pip-version-check -q -c constraints.txt -e '.[dev,spark]'
	$(BIN)/python -m pip install --disable-pip-version-check -q -c constraints.txt -e './client[pandas,sqlalchemy]'
	@touch $@

$(JARS_STAMP): pom.xml | $(STAMP)
	rm -rf $(JARS_DIR)
	mvn -q -B -f pom.xml dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory=$(abspath $(JARS_DIR))
	@touch $@

install: $(STAMP) $(JARS_STAMP)

$(CLIENT_LOWEST_STAMP): client/constraints-lowest.txt | $(STAMP)
	rm -rf $(CLIENT_LOWEST)
	$(PYTHON) -m venv $(CLIENT_LOWEST)
	$(CLIENT_LOWEST)/bin/python -m pip install --disable-pip-version-check -q \
		-r client/constraints-lowest.txt
	@touch $@

client-lowest: $(CLIENT_LOWEST_STAMP)

# The browser UI: built by Vite into frontend/dist, served by Django (no CDN, works offline).
FRONTEND_SOURCES := $(shell find frontend/src -type f 2>/dev/null) frontend/index.html \
	frontend/vite.config.ts frontend/tsconfig.json frontend/package.json \
	frontend/scripts/precompress.mjs core/planner/spark_builtins.txt
frontend/node_modules/.package-lock.json: frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
frontend/dist/index.html: frontend/node_modules/.package-lock.json $(FRONTEND_SOURCES)
	cd frontend && npm run build

frontend: frontend/dist/index.html

frontend-test: frontend/node_modules/.package-lock.json
	cd frontend && npm test

frontend-lint: frontend/node_modules/.package-lock.json
	cd frontend && npm run lint

# The front end's API types come from the server's OpenAPI document (drf-spectacular):
# `make api-types` regenerates both checked-in files, `make api-types-check` fails when
# either differs from what the server and openapi-typescript produce now.
API_SCHEMA := frontend/src/openapi/openapi.json
API_TYPES := frontend/src/openapi/schema.d.ts
define generate_api_types
	$(BIN)/python manage.py spectacular --format openapi-json --file $(1)
	cd frontend && npx --no-install openapi-typescript $(abspath $(1)) -o $(abspath $(2)) --silent
endef

api-types: install frontend/node_modules/.package-lock.json
	$(call generate_api_types,$(API_SCHEMA),$(API_TYPES))

api-types-check: install frontend/node_modules/.package-lock.json
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(MAKE) --no-print-directory api-types API_SCHEMA=$$tmp/openapi.json API_TYPES=$$tmp/schema.d.ts && \
	if diff -u $(API_SCHEMA) $$tmp/openapi.json && diff -u $(API_TYPES) $$tmp/schema.d.ts; then \
		echo "API types match the server's OpenAPI document."; \
	else \
		echo "The API types drifted from the server: run 'make api-types' and commit the result." >&2; \
		exit 1; \
	fi

# Debian's Chromium for the browser tests (Playwright's own download does not work here).
chromium:
	@scripts/ensure-chromium.sh

run: install frontend
	@scripts/run.sh

check: lint typecheck

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy .
	cd client && ../$(BIN)/mypy --strict src  # the client's own, stricter configuration

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: check api-types-check frontend-lint frontend frontend-test chromium client-lowest
	@scripts/test.sh --durations=40  # the slowest tests, to keep the suite inside CI's time
	@scripts/test-sqlite.sh  # the web-side hostile tests again on the embedded SQLite
	@scripts/test-faults.sh  # tests/faults: its own PostgreSQL and Redis (docs/faults.md)

screenshots: install frontend chromium
	rm -rf docs/screenshots
	TESSERA_SCREENSHOTS=$(CURDIR)/docs/screenshots scripts/test.sh tests/browser -p no:cacheprovider

bench-catalog: install
	DATABASE_URL=$(TEST_DATABASE_URL) $(BIN)/python bench/catalog_api.py

# Re-pin every dependency after changing pyproject.toml.
lock:
	$(BIN)/python -m pip freeze --exclude-editable --exclude tessera > constraints.txt

clean:
	rm -rf $(VENV) frontend/node_modules frontend/dist .mypy_cache .ruff_cache .pytest_cache .hypothesis
