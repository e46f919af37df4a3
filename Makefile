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
LINT_PATHS := $(wildcard helpers autograder tests benchmarks chapters _ext)
LINT_PATHS += $(wildcard course.py nbgrader_config.py tools solutions conftest.py)
# What `make test` hands to pytest, in one invocation; extend here (e.g. nbval on chapters/).
# With --nbval, pytest also re-runs every notebook under these paths and compares its outputs
# with the stored ones; only chapters/ is listed, so exercises/ and solutions/ are not run.
TEST_PATHS := $(wildcard tests chapters)
NBVAL_ARGS := --nbval --nbval-current-env --nbval-sanitize-with chapters/sanitize.cfg
PYTEST_ARGS ?=

# Quieten jupyter_core's platformdirs migration warning in every tool.
export JUPYTER_PLATFORM_DIRS := 1

.PHONY: help venv book browser-deps sandbox-deps lint format test clean distclean
.PHONY: release check-release collect autograde feedback grades

help: ## List the targets
	@echo "Usage: make <target>"
	@echo
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-13s %s\n", $$1, $$2}'

venv: $(STAMP) ## Create .venv and install the pinned requirements and helpers (editable)

$(STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || { echo "Creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install -r requirements.txt
	$(PY) -m pip install -e . --no-deps
	@touch $@

book: $(STAMP) ## Build the HTML book into _build/html (warnings are errors; notebooks are not executed)
	$(BIN)/jupyter-book build --all -W -n --keep-going .

# The browser tests (tests/test_browser.py) drive Debian's Chromium through Playwright for Python
# (pinned in requirements.txt); `playwright install` is never used. No-op when it is installed.
CHROMIUM := /usr/bin/chromium
browser-deps: ## Install Debian's Chromium for the browser tests if missing (apt-get, needs root)
	@if [ -x $(CHROMIUM) ]; then exit 0; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
		echo "error: $(CHROMIUM) is missing and installing it needs root. Run as root:" >&2; \
		echo "  apt-get update && apt-get install -y chromium" >&2; \
		exit 1; \
	fi; \
	echo "Installing Debian's chromium (for tests/test_browser.py)"; \
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium

# Autograding runs every submission inside bubblewrap (autograder/sandbox.py); setpriv comes
# with util-linux. No-op when both are installed.
sandbox-deps: ## Install bubblewrap for the grading sandbox if missing (apt-get, needs root)
	@if command -v bwrap >/dev/null && command -v setpriv >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
		echo "error: bwrap is missing and installing it needs root. Run as root:" >&2; \
		echo "  apt-get update && apt-get install -y bubblewrap util-linux" >&2; \
		exit 1; \
	fi; \
	echo "Installing Debian's bubblewrap (the grading sandbox)"; \
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y bubblewrap util-linux

lint: $(STAMP) ## Check style with ruff (lint and formatting)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)

format: $(STAMP) ## Apply ruff fixes and formatting in place
	$(BIN)/ruff check --fix $(LINT_PATHS)
	$(BIN)/ruff format $(LINT_PATHS)

test: $(STAMP) browser-deps sandbox-deps lint book ## Run lint, build the book, then the whole test suite with pytest (+ nbval)
	$(PY) -m pytest $(TEST_PATHS) $(NBVAL_ARGS) $(PYTEST_ARGS)

# Instructor workflow (nbgrader, see instructor_guide.md): thin wrappers around course.py.
WORKERS ?= 2
SRC ?=
ASSIGNMENT ?=
release: $(STAMP) ## Regenerate exercises/ from solutions/ (nbgrader generate_assignment)
	$(PY) course.py release

check-release: $(STAMP) ## Check exercises/ equals a fresh generation and leaks no solution
	$(PY) course.py check-release

collect: $(STAMP) ## Copy submissions (SRC=folder or .zip [ASSIGNMENT=..]) into submitted/
	@test -n "$(SRC)" || { echo "usage: make collect SRC=path/to/folder-or.zip [ASSIGNMENT=01_attention]" >&2; exit 2; }
	$(PY) course.py collect "$(SRC)" $(if $(ASSIGNMENT),--assignment $(ASSIGNMENT))

NO_SANDBOX ?=
autograde: $(STAMP) ## Autograde submitted/ in the sandbox with WORKERS workers (default 2)
	$(PY) course.py autograde --workers $(WORKERS) $(if $(NO_SANDBOX),--no-sandbox)

feedback: $(STAMP) ## Write HTML feedback for the autograded submissions into feedback/
	$(PY) course.py feedback

grades: $(STAMP) ## Export grades to grades.csv
	$(PY) course.py grades --out grades.csv

clean: ## Remove build outputs and caches (keeps .venv)
	rm -rf _build benchmarks/out .pytest_cache .ruff_cache *.egg-info
	find . -path ./$(VENV) -prune -o -type d \( -name __pycache__ -o -name .ipynb_checkpoints \) -print0 \
		| xargs -0 rm -rf

distclean: clean ## Remove build outputs, caches and .venv
	rm -rf $(VENV)
