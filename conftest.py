"""Repository-wide pytest configuration.

`make test` runs pytest with --nbval, which re-executes every notebook it collects. Only the
chapters are meant for that: the student notebooks in exercises/ stop at
`raise NotImplementedError()`, and the nbgrader sources in solutions/ are checked by the
nbgrader tests instead. Never collect those notebooks, whatever paths pytest is given.
"""

from pathlib import Path

NOT_NBVAL = {"exercises", "solutions"}


def pytest_ignore_collect(collection_path: Path, config):
    if collection_path.suffix != ".ipynb":
        return None
    try:
        parts = collection_path.relative_to(config.rootpath).parts
    except ValueError:  # outside the repository: not ours to judge
        return None
    return True if NOT_NBVAL & set(parts) else None
