"""The slow tier's tests of the book and the chapters: the built site (no solution in it, both
editions, in Chromium), a Sphinx build in Chinese, real nbval, the released values replayed and
the training runs, the benchmarks' quick forms.

Every test collected in this folder is marked ``slow`` here (`make check` runs tests/unit only;
`make test` runs these), so no test of it needs the mark of its own.
"""

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.slow)
