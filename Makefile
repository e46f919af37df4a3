# Attention from Zero: build, lint and test entry points.
# Everything runs from the project virtual environment in .venv (no activation needed).

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

# Python used to create .venv: python3.11 if present, else python3.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed

# Sources checked by ruff (only those that exist yet).
LINT_PATHS := $(wildcard helpers tests benchmarks chapters)
# What `make test` hands to pytest, in one invocation; extend here (e.g. nbval on chapters/).
TEST_PATHS := $(wildcard tests)
PYTEST_ARGS ?=

# Quieten jupyter_core's platformdirs migration warning in every tool.
export JUPYTER_PLATFORM_DIRS := 1

.PHONY: help venv book lint format test clean distclean

help: ## List the targets
	@echo "Usage: make <target>"
	@echo
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-10s %s\n", $$1, $$2}'

venv: $(STAMP) ## Create .venv and install the pinned requirements and helpers (editable)

$(STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || { echo "Creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install -r requirements.txt
	$(PY) -m pip install -e . --no-deps
	@touch $@

book: $(STAMP) ## Build the HTML book into _build/html (warnings are errors; notebooks are not executed)
	$(BIN)/jupyter-book build --all -W -n --keep-going .

lint: $(STAMP) ## Check style with ruff (lint and formatting)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)

format: $(STAMP) ## Apply ruff fixes and formatting in place
	$(BIN)/ruff check --fix $(LINT_PATHS)
	$(BIN)/ruff format $(LINT_PATHS)

test: $(STAMP) lint ## Run lint, then the whole test suite with pytest
	$(PY) -m pytest $(TEST_PATHS) $(PYTEST_ARGS)

clean: ## Remove build outputs and caches (keeps .venv)
	rm -rf _build benchmarks/out .pytest_cache .ruff_cache *.egg-info
	find . -path ./$(VENV) -prune -o -type d \( -name __pycache__ -o -name .ipynb_checkpoints \) -print0 \
		| xargs -0 rm -rf

distclean: clean ## Remove build outputs, caches and .venv
	rm -rf $(VENV)
