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
LINT_PATHS := $(wildcard helpers checks autograder tests benchmarks chapters _ext)
LINT_PATHS += $(wildcard course nbgrader_config.py tools solutions conftest.py)
# The tests' tiers are folders: tests/unit is the fast tier (`make check`); tests/grading and
# tests/book are the slow tier (their conftest.py marks each test `slow`).
# What `make test` hands to pytest, in one invocation: every tier, and the chapters.
# With --nbval, pytest also re-runs every notebook under these paths and compares its outputs
# with the stored ones; only chapters/ is listed, so exercises/ and solutions/ are not run.
TEST_PATHS := $(wildcard tests chapters)
NBVAL_ARGS := --nbval --nbval-current-env --nbval-sanitize-with chapters/sanitize.cfg
PYTEST_ARGS ?=
# Numbers from PyTorch's CPU kernels differ in their last bits between a CPU with AVX-512 and
# one with AVX2 only, and training runs carry the difference along. `make test` runs the tests
# marked cpu_kernels (the chapters under nbval, the training runs, the released values of the
# visible checks) twice: with the machine's own kernels, then with the kernels of another kind
# (tools/other_kernels.py: AVX2 on an AVX-512 machine, PyTorch's plain `default` kernels on an
# AVX2 one), so that a machine of either kind catches a drift that only the other would show.
OTHER_KERNELS = $$($(PY) tools/other_kernels.py)

# Quieten jupyter_core's platformdirs migration warning in every tool.
export JUPYTER_PLATFORM_DIRS := 1

.PHONY: help venv book corpus pdf pdf-deps browser-deps sandbox-deps postgres-deps cjk-font lint format typecheck check unit test test-kernels clean distclean
.PHONY: release verify-release check-release collect autograde feedback grades

help: ## List the targets
	@echo "Usage: make <target>"
	@echo
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-14s %s\n", $$1, $$2}'

# requirements.txt is the lock: every package of pyproject.toml's dependencies and extras at an
# exact version with its hashes, written by `make lock` (pip-compile); pip installs it in
# hash-checking mode. PyTorch's CPU build (torch==X+cpu) is not on PyPI: pip takes it from a
# find-links folder of its configuration when one holds it, else from TORCH_INDEX. That index is
# passed only when needed, since pip asks every index about every package (and retries an
# unreachable one for seconds each time). `make venv TORCH_INDEX=` never passes it.
LOCK := requirements.txt
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
# Shell code that prints "--extra-index-url $(TORCH_INDEX)" unless pip finds the locked torch
# wheel without an index (pip-compile needs the wheel even when torch is installed).
TORCH_INDEX_ARG = $(if $(TORCH_INDEX),$$($(PY) -m pip install --dry-run --no-index --no-deps -q \
	--ignore-installed \
	"$$(grep -m1 -o '^torch==[^ ]*' $(LOCK))" >/dev/null 2>&1 || echo --extra-index-url $(TORCH_INDEX)))

venv: $(STAMP) ## Create .venv and install the lock (requirements.txt) and this project (editable)

$(STAMP): $(LOCK) pyproject.toml
	@test -x $(PY) || { echo "Creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	@# The lock's pip first: the one a new venv brings (23.2 with Python 3.11) refuses the lock in
	@# hash mode, taking jsonschema[format-nongpl] for an unpinned requirement.
	awk '/^pip==/ {p = 1; print; next} p && /^ / {print; next} {p = 0}' $(LOCK) > $(VENV)/pip.txt
	$(PY) -m pip install --require-hashes --no-deps -r $(VENV)/pip.txt
	$(PY) -m pip install --require-hashes $(TORCH_INDEX_ARG) -r $(LOCK)
	$(PY) -m pip install --no-build-isolation --no-deps -e .
	@touch $@

# Written under the command in the lock's header.
LOCK_NOTE_1 := \# Installed by `make venv`; by hand: the pip pinned here, then pip install --require-hashes -r requirements.txt
LOCK_NOTE_2 := \# then pip install --no-deps -e . (the torch pin is the CPU build, not on PyPI; where pip
LOCK_NOTE_3 := \# finds no such wheel on its own, add --extra-index-url https://download.pytorch.org/whl/cpu).
# Keeps every version the lock already pins; LOCK_ARGS="--upgrade-package ruff" moves one
# (or --upgrade, all). The lock holds hashes for this Python (3.11) on Linux x86_64.
.PHONY: lock
lock: $(STAMP) ## Regenerate the lock requirements.txt from pyproject.toml (pip-compile)
	CUSTOM_COMPILE_COMMAND="make lock" $(BIN)/pip-compile --generate-hashes --allow-unsafe \
		--strip-extras --all-extras --no-emit-index-url --no-emit-find-links \
		$(TORCH_INDEX_ARG) $(LOCK_ARGS) --output-file $(LOCK) pyproject.toml
	sed -i 's|^#    make lock$$|&\n#\n$(LOCK_NOTE_1)\n$(LOCK_NOTE_2)\n$(LOCK_NOTE_3)|' $(LOCK)

# Two editions from one source: English in _build/html/, Chinese in _build/html/zh/ (the prose
# from locale/zh_CN/LC_MESSAGES/, code, outputs and figures from the same notebooks).
book: $(STAMP) cjk-font ## Build the HTML book, English in _build/html and Chinese in _build/html/zh (warnings are errors; notebooks are not executed)
	@mkdir -p _build && touch _build/.book-started
	rm -f _build/html/searchindex.js  # Sphinx would merge the new index into the stale one
	$(BIN)/jupyter-book build --all -W -n --keep-going .
	$(PY) tools/build_zh.py
	@mv _build/.book-started $(BOOK_STAMP)

# `make test` builds the book only when it is older than its sources: after `make book` (the
# README's first command) it is not built twice. $(BOOK_STAMP) carries the time the last whole
# build started; any file of the project newer than that (tests, caches and outputs aside: the
# build itself compiles the catalogs into .mo files), or a newer .venv, means the book is out of
# date.
BOOK_STAMP := _build/.book-built
NOT_BOOK_INPUTS := -path ./.git -o -path ./_build -o -path ./$(VENV) -o -path ./tests \
	-o -path ./benchmarks/out -o -name __pycache__ -o -name '.*_cache' -o -name '*.egg-info' \
	-o -name '*.mo'
BOOK_STALE = test ! -f $(BOOK_STAMP) -o $(STAMP) -nt $(BOOK_STAMP) \
	-o -n "$$(find . \( $(NOT_BOOK_INPUTS) \) -prune -o -type f -newer $(BOOK_STAMP) -print -quit)"
.PHONY: book-if-stale
book-if-stale: $(STAMP)
	@if $(BOOK_STALE); then $(MAKE) --no-print-directory book; \
	else echo "_build/html is up to date with its sources: not built again"; fi

# The book as two PDFs (English and Chinese) in _build/pdf/, printed by the browser tests'
# Chromium from the built site (tools/build_pdf.py: the whole edition on one page, math by the
# site's MathJax, the CJK font embedded, a PDF outline per page of the book). Builds the book
# first when it is not there; after an edit, `make book pdf`.
pdf: $(STAMP) browser-deps cjk-font ## Print both editions to PDF into _build/pdf (Chromium; builds the book first if missing)
	@test -f _build/html/zh/intro.html || $(MAKE) --no-print-directory book
	$(PY) tools/build_pdf.py

# After an edit to the English prose: extract its messages, merge them into the Chinese catalogs
# (new ones empty, changed ones fuzzy), then list what needs translating and any term problems.
.PHONY: i18n
i18n: $(STAMP) ## Update the Chinese catalogs from the English pages (sphinx-intl) and list what to translate
	$(BIN)/jupyter-book build . --builder custom --custom-builder gettext --path-output _build/i18n
	$(BIN)/sphinx-intl update -p _build/i18n/_build/gettext -l zh_CN -d locale
	$(PY) tools/i18n_check.py _build/i18n/_build/gettext
	$(PY) tools/term_report.py --flags-only

# The Chinese of the figures and of the web font is Noto Sans CJK SC, the Simplified Chinese face
# of Debian's fonts-noto-cjk (SIL OFL 1.1; helpers/pictures/plotting.py, _ext/cjk_webfont.py).
# Its two sans-serif collections (regular and bold) are unpacked from the package into .venv,
# not installed system-wide: a system CJK font would let Chromium draw the book's Chinese
# without the web font, and the browser tests check the pages as a reader without one sees
# them. Needs the apt lists (apt-get update, as root) to download the package. No-op when done.
CJK_FONT_DIR := $(VENV)/share/fonts/noto-cjk
CJK_FONT_FILES := NotoSansCJK-Regular.ttc NotoSansCJK-Bold.ttc
cjk-font: $(STAMP) ## Unpack Debian's fonts-noto-cjk (Noto Sans CJK SC) into .venv for figures and web font
	@if [ -f $(CJK_FONT_DIR)/NotoSansCJK-Bold.ttc ]; then exit 0; fi; \
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	if ! (cd "$$tmp" && apt-get download fonts-noto-cjk >/dev/null 2>&1); then \
		if [ "$$(id -u)" -ne 0 ]; then \
			echo "error: apt-get download fonts-noto-cjk failed; as root, run: apt-get update" >&2; \
			exit 1; \
		fi; \
		apt-get update -qq && (cd "$$tmp" && apt-get download fonts-noto-cjk); \
	fi; \
	dpkg-deb -x "$$tmp"/fonts-noto-cjk_*.deb "$$tmp/deb"; \
	mkdir -p $(CJK_FONT_DIR); \
	for f in $(CJK_FONT_FILES); do cp "$$tmp/deb/usr/share/fonts/opentype/noto/$$f" $(CJK_FONT_DIR)/.$$f.tmp; \
		mv $(CJK_FONT_DIR)/.$$f.tmp $(CJK_FONT_DIR)/$$f; done; \
	cp "$$tmp/deb/usr/share/doc/fonts-noto-cjk/copyright" $(CJK_FONT_DIR)/copyright; \
	echo "Unpacked Noto Sans CJK (fonts-noto-cjk) into $(CJK_FONT_DIR)"

# The Spanish–English corpus (helpers/data/bible/): verse pairs of two public-domain Bibles that
# Debian packages for SWORD, read with pysword (in the lock) and cleaned, aligned and split by
# tools/bible_corpus.py, which says how. Its output is committed, so that nothing else needs the
# packages or the network; this target rebuilds it byte for byte (compare PROVENANCE.md's
# checksums). Installs the two packages first if missing (apt-get, needs root).
CORPUS_PACKAGES := sword-text-web sword-text-sparv
corpus: $(STAMP) ## Rebuild helpers/data/bible/ (Spanish–English verse pairs) from Debian's SWORD Bibles (apt-get, needs root)
	@installed=$$(dpkg-query -W -f='$${Status}\n' $(CORPUS_PACKAGES) 2>/dev/null | grep -c 'ok installed' || true); \
	if [ "$$installed" -eq 2 ]; then exit 0; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
		echo "error: the Debian packages $(CORPUS_PACKAGES) are missing and installing them needs root. Run as root:" >&2; \
		echo "  apt-get update && apt-get install -y $(CORPUS_PACKAGES)" >&2; \
		exit 1; \
	fi; \
	echo "Installing Debian's $(CORPUS_PACKAGES) (the corpus's sources)"; \
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(CORPUS_PACKAGES)
	$(PY) tools/bible_corpus.py

# The browser tests (tests/book/test_browser.py) drive Debian's Chromium through Playwright for
# Python (pinned in requirements.txt); `playwright install` is never used. No-op when installed.
CHROMIUM := /usr/bin/chromium
browser-deps: ## Install Debian's Chromium for the browser tests if missing (apt-get, needs root)
	@if [ -x $(CHROMIUM) ]; then exit 0; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
		echo "error: $(CHROMIUM) is missing and installing it needs root. Run as root:" >&2; \
		echo "  apt-get update && apt-get install -y chromium" >&2; \
		exit 1; \
	fi; \
	echo "Installing Debian's chromium (for tests/book/test_browser.py)"; \
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium

# tests/book/test_pdf.py reads the PDFs back with Debian's poppler tools (pdftotext, pdffonts,
# pdfinfo, pdftohtml). No-op when installed.
pdf-deps: ## Install Debian's poppler-utils for the PDF tests if missing (apt-get, needs root)
	@if command -v pdftotext >/dev/null && command -v pdffonts >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
		echo "error: pdftotext/pdffonts are missing and installing them needs root. Run as root:" >&2; \
		echo "  apt-get update && apt-get install -y poppler-utils" >&2; \
		exit 1; \
	fi; \
	echo "Installing Debian's poppler-utils (for tests/book/test_pdf.py)"; \
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y poppler-utils

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

# tests/grading/test_postgres.py starts a throwaway PostgreSQL server (tests/support/postgres.py:
# initdb into a temporary folder, a Unix socket only) with Debian's server programs. No-op when
# installed.
postgres-deps: ## Install Debian's PostgreSQL server programs for the gradebook tests if missing (apt-get, needs root)
	@if compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
		echo "error: PostgreSQL (/usr/lib/postgresql/*/bin/initdb) is missing and installing it needs root. Run as root:" >&2; \
		echo "  apt-get update && apt-get install -y postgresql" >&2; \
		exit 1; \
	fi; \
	echo "Installing Debian's postgresql (for tests/grading/test_postgres.py)"; \
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql

lint: $(STAMP) ## Check style with ruff (lint and formatting)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)

format: $(STAMP) ## Apply ruff fixes and formatting in place
	$(BIN)/ruff check --fix $(LINT_PATHS)
	$(BIN)/ruff format $(LINT_PATHS)

# The type checker on the four packages: strict on the reference model and the test cells' checks,
# plain on the grader and the instructor tool. Settings in pyproject.toml ([tool.mypy]).
typecheck: $(STAMP) ## Type-check helpers, checks, autograder and course with mypy (strict on helpers and checks)
	$(BIN)/mypy

# The everyday tier: the fast tests of tests/unit; no book build, no browser, no nbval, none
# of the slow tier (tests/grading, tests/book). mypy runs beside the unit tests, which
# pytest-xdist spreads over the cores, a test file per process (-O: each one's output whole).
UNIT_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check: $(STAMP) sandbox-deps cjk-font lint ## Everyday check (under a minute): lint, then type check and the fast unit tests side by side
	@$(MAKE) --no-print-directory -j2 -O typecheck unit

unit: $(STAMP) ## Only the fast tests (tests/unit), on every core
	$(PY) -m pytest tests/unit -n $(UNIT_JOBS) --dist loadfile $(PYTEST_ARGS)

# pytest-xdist runs the tests on every core, a whole file per worker process (nbval runs a
# notebook's cells in order in one kernel; a file's fixtures are built once), the files in the
# order of tests/conftest.py (the longest first). Each worker sits in a cgroup of its own, so
# that a test of what grading leaves behind counts only its own processes.
#
# `make test` runs its parts side by side (make -j3 -O: each part's output whole, when it ends),
# since much of a grading test is waiting for kernels, and one pass alone leaves a core idle:
# the type check; the book when stale, then every test with this machine's kernels (the book
# tests read the site; tests/book/test_pdf.py prints the PDFs from it); and the cpu_kernels
# tests with the other kind of kernels, which need no book and start at once (on as many
# workers as the first pass: one was slower, and so were more workers than cores; the times
# measured are in docs/testing.md).
TEST_JOBS ?= $(UNIT_JOBS)
KERNEL_JOBS ?= $(TEST_JOBS)
XDIST_ARGS = -n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder
.PHONY: test-native test-other-kernels
test: $(STAMP) browser-deps pdf-deps sandbox-deps postgres-deps cjk-font lint ## Everything (CI): lint; then side by side the type check, the book if stale, every test (slow tier included) and nbval, and the cpu_kernels tests with other kernels
	@$(MAKE) --no-print-directory -j3 -O typecheck test-native test-other-kernels

test-native: book-if-stale
	$(PY) -m pytest $(TEST_PATHS) $(NBVAL_ARGS) $(XDIST_ARGS) $(PYTEST_ARGS)

test-other-kernels: $(STAMP)
	env $(OTHER_KERNELS) $(PY) -m pytest $(TEST_PATHS) $(NBVAL_ARGS) -m cpu_kernels \
		-n $(KERNEL_JOBS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

test-kernels: $(STAMP) ## Only the cpu_kernels tests, with the other kind of kernels (tools/other_kernels.py)
	env $(OTHER_KERNELS) $(PY) -m pytest $(TEST_PATHS) $(NBVAL_ARGS) -m cpu_kernels $(XDIST_ARGS) $(PYTEST_ARGS)

# Instructor workflow (nbgrader, see instructor_guide.md): thin wrappers around `python -m course`.
WORKERS ?= 2
SRC ?=
ASSIGNMENT ?=
release: $(STAMP) ## Regenerate exercises/ from solutions/ (nbgrader generate_assignment)
	$(PY) -m course release

verify-release: $(STAMP) ## Verify exercises/ equals a fresh generation and leaks no solution
	$(PY) -m course verify-release

# The name before verify-release ("check" is kept for `make check`), for one release
check-release: ## Deprecated: the old name of verify-release
	@echo "note: 'make check-release' is now 'make verify-release'; the old name goes in the next release" >&2
	@$(MAKE) --no-print-directory verify-release

collect: $(STAMP) ## Copy submissions (SRC=folder or .zip [ASSIGNMENT=..]) into submitted/
	@test -n "$(SRC)" || { echo "usage: make collect SRC=path/to/folder-or.zip [ASSIGNMENT=01_attention]" >&2; exit 2; }
	$(PY) -m course collect "$(SRC)" $(if $(ASSIGNMENT),--assignment $(ASSIGNMENT))

NO_SANDBOX ?=
autograde: $(STAMP) ## Autograde submitted/ in the sandbox with WORKERS workers (default 2)
	$(PY) -m course autograde --workers $(WORKERS) $(if $(NO_SANDBOX),--no-sandbox)

feedback: $(STAMP) ## Write HTML feedback for the autograded submissions into feedback/
	$(PY) -m course feedback

grades: $(STAMP) ## Export grades to grades.csv
	$(PY) -m course grades --out grades.csv

clean: ## Remove build outputs and caches (keeps .venv)
	rm -rf _build benchmarks/out .pytest_cache .ruff_cache .mypy_cache *.egg-info
	find . -path ./$(VENV) -prune -o -type d \( -name __pycache__ -o -name .ipynb_checkpoints \) -print0 \
		| xargs -0 rm -rf

distclean: clean ## Remove build outputs, caches and .venv
	rm -rf $(VENV)
