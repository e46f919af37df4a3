"""Repository-wide pytest configuration.

`make test` runs pytest with --nbval, which re-executes every notebook it collects. Only the
chapters are meant for that: the student notebooks in exercises/ stop at
`raise NotImplementedError()`, and the nbgrader sources in solutions/ are checked by the
nbgrader tests instead. Never collect those notebooks, whatever paths pytest is given.
"""

from pathlib import Path

import pytest

NOT_NBVAL = {"exercises", "solutions"}

# Fixtures that start the slow parts (a class graded by real nbgrader in the sandbox, benchmark
# runs, a training run, a PostgreSQL server): every test that uses one is in the slow tier,
# which `make check` skips.
SLOW_FIXTURES = {
    "main_class",
    "adversarial_class",
    "attacked_class",
    "merge_runs",
    "runs",
    "copy_model",
    "pg_server",
}


def pytest_ignore_collect(collection_path: Path, config):
    if collection_path.suffix != ".ipynb":
        return None
    try:
        parts = collection_path.relative_to(config.rootpath).parts
    except ValueError:  # outside the repository: not ours to judge
        return None
    return True if NOT_NBVAL & set(parts) else None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)
