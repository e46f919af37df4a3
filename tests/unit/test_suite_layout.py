"""The suite's own layout: what would break `make test` long after `make check` passed."""

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_modules_share_a_file_name():
    """pytest imports test modules by their file name (rootdir-relative, no packages): two
    test_x.py in two tiers stop the collection of the second with "import file mismatch", and
    `make check` collects only tests/unit, so only `make test` would see it."""
    where = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        where[path.name].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert clashes == {}, f"rename one of each: {clashes}"
