# Tessera: `make run` starts the product with embedded defaults, `make test` runs every test.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

# Tests run against the machine's real PostgreSQL and Redis.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_BROKER_URL ?= redis://127.0.0.1:6379/15

.PHONY: help install run test check lint typecheck format bench-catalog lock clean

help:
	@echo "make run    - set up .venv, migrate, start web + worker on \$$PORT (default 8000)"
	@echo "make test   - lint, type-check and run the whole test suite"
	@echo "make bench-catalog - fill a synthetic catalog on PostgreSQL and measure API latency"

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q --upgrade "pip>=24"
	$(BIN)/python -m pip install --disable-pip-version-check -q -c constraints.txt -e '.[dev,spark]'
	@touch $@

install: $(STAMP)

run: install
	@scripts/run.sh

check: lint typecheck

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: check
	@scripts/test.sh

bench-catalog: install
	DATABASE_URL=$(TEST_DATABASE_URL) $(BIN)/python bench/catalog_api.py

# Re-pin every dependency after changing pyproject.toml.
lock:
	$(BIN)/python -m pip freeze --exclude-editable --exclude tessera > constraints.txt

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
