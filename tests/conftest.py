"""The test suite's layout, and the fixtures its folders share.

- ``unit/``: the fast tier, what `make check` runs (``pytest tests/unit``).
- ``grading/``: slow tests of grading (real nbgrader, the sandbox, Dask, the warm nbgrader,
  PostgreSQL, the typical mistakes graded);
- ``book/``: slow tests of the book and the chapters (the built site, Chromium, the editions,
  nbval, training runs, the benchmarks);
  every test collected under these two folders is marked ``slow`` here, so none needs a mark.
- ``support/``: helpers that several test modules share (a package, not tests);
  ``grading_cases/``: the table of typical mistakes and correct alternatives per assignment.

A test module imports ``support`` and ``grading_cases``, never another test module: this folder
is put on ``sys.path`` here (as pytest's default import mode also does for a conftest.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

TESTS = str(Path(__file__).resolve().parent)
SLOW_FOLDERS = tuple(Path(TESTS) / name for name in ("grading", "book"))
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
# The helpers' own asserts (e.g. a command's exit code) explain a failure as a test's do.
pytest.register_assert_rewrite("support")


def pytest_configure(config):
    # Each test process (pytest-xdist's workers are processes) in a cgroup of its own: what a
    # grading run left behind is then counted per process (support/own_cgroup.py).
    from support import own_cgroup

    own_cgroup.join()


def pytest_unconfigure(config):
    from support import own_cgroup

    own_cgroup.leave()


# The files that take longest (minutes each, in `make test`), longest first. pytest-xdist hands
# out whole files (--dist loadfile) in the order of collection: these go first, so that no
# long file starts when the other worker is nearly done.
LONGEST_FIRST = (
    "tests/grading/test_nbgrader.py",
    "tests/book/test_browser.py",
    "tests/grading/test_adversaries.py",
    "tests/grading/test_grading_cases.py",
    "tests/grading/test_distributed.py",
    "chapters/10_from_2017_to_today.ipynb",
    "chapters/11_a_real_language_pair.ipynb",
    "tests/grading/test_sandbox.py",
    "chapters/05_residual_and_layernorm.ipynb",
    "tests/grading/test_postgres.py",
    "tests/book/test_pdf.py",
    "chapters/09_putting_it_together.ipynb",
    "tests/book/test_benchmarks_smoke.py",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(item.path.is_relative_to(folder) for folder in SLOW_FOLDERS):
            item.add_marker(pytest.mark.slow)
    root = Path(str(config.rootpath))
    rank = {root / name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path, len(rank)))  # stable: order within a file


@pytest.fixture(scope="session", autouse=True)
def _share_dry_grading(tmp_path_factory, worker_id):
    """Under pytest-xdist, the workers share the dry grading of the table (grading_cases)."""
    import grading_cases

    if worker_id != "master":  # each worker's temporary folder is below the run's
        grading_cases.SHARED = tmp_path_factory.getbasetemp().parent


@pytest.fixture(scope="session")
def browser():
    """Chromium under Playwright, one per worker process for the whole session (see
    support/chromium.py for why no test starts a Playwright of its own)."""
    from playwright.sync_api import sync_playwright
    from support.chromium import CHROMIUM, CHROMIUM_ARGS

    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} not found: run `make browser-deps` (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def grading_env():
    """No AFZ_GRADEBOOK_URL of the caller's for the rest of the session (the grading tests
    grade into their own gradebooks); the caller's settings are put back at the end."""
    saved = {k: os.environ.get(k) for k in ("AFZ_GRADEBOOK_URL",)}
    os.environ.pop("AFZ_GRADEBOOK_URL", None)
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
