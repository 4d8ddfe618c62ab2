# make demo | make test | make bench   -- each creates .venv when missing.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DB ?= demo/webometrics.db
DEMO_URL := sqlite:///$(abspath $(DEMO_DB))
FAST_TIER := not requires_postgres and not requires_redis and not requires_browser and not slow

.PHONY: demo test test-fast test-durations bench docs venv services lint clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip setuptools wheel
	$(BIN)/pip install --quiet -e '.[test]'
	@touch $(STAMP)

# System services the tests start themselves (PostgreSQL, Redis, Chromium), installed
# from Debian's packages when missing and when we may (root); never started here.
services:
	@bash scripts/ensure-services.sh

# lint and mypy first (every package, [tool.mypy] in pyproject.toml; cache in .mypy_cache):
# a lint finding, an unformatted file or a type error fails the target before the tests run
test: venv services lint
	$(BIN)/mypy
	@set -o pipefail; $(BIN)/python -m pytest; rc=$$?; \
	 if [ $$rc -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi; exit $$rc

# the fast tier: every test that needs no PostgreSQL, Redis or browser and is not slow
# (marks set from the fixtures a test uses: tests/conftest.py TIER_MARKS); the inner loop
test-fast: venv lint
	@set -o pipefail; $(BIN)/python -m pytest -m "$(FAST_TIER)"; rc=$$?; \
	 if [ $$rc -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi; exit $$rc

# measure every test's call time into tests/durations.json (tests/tiers.py): a call of a
# second or more puts the test in the slow tier. Run on an idle machine, then commit it.
test-durations: venv services
	$(BIN)/python -m pytest --store-durations -q

# ruff check, and ruff format as the one formatter (`# fmt: skip` keeps a hand-aligned line)
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

demo: venv
	@bash scripts/demo.sh "$(DEMO_URL)"

# the documentation site (MkDocs) in site/, after regenerating docs/reference and
# docs/measurements.md from the program and bench/results
docs: venv
	$(BIN)/python scripts/gen_docs.py
	$(BIN)/mkdocs build --strict --quiet
	@echo "documentation built in site/ (open site/index.html)"

bench: venv
	@for b in bench/*.py; do grep -q "__main__" $$b || continue; \
	  echo "== $$b"; $(BIN)/python $$b || exit $$?; done

clean:
	rm -rf $(VENV) demo site .pytest_cache build *.egg-info
