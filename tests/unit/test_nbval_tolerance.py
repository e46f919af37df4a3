"""Chapter cells with an `nbval-tolerance` in their metadata compare their numbers within it.

The comparison is tools/nbval_tolerance.py, a pytest plugin that wraps nbval's; these tests call
its pieces (real nbval on small notebooks: tests/book/test_nbval_runs.py).
"""

from __future__ import annotations

import nbval_tolerance
import pytest
from nbval_tolerance import cell_tolerance, comment_marker, numbers_differ


def test_the_metadata_gives_abs_and_rel():
    assert cell_tolerance({}) is None
    assert cell_tolerance({"tags": ["book-run"]}) is None
    assert cell_tolerance({"nbval-tolerance": {"abs": 0.02}}) == (0.02, 0.0)
    assert cell_tolerance({"nbval-tolerance": {"rel": 0.1, "abs": 1e-3}}) == (1e-3, 0.1)


@pytest.mark.parametrize(
    "value",
    [{}, {"abs": "0.1"}, {"tol": 0.1}, {"abs": -1}, {"abs": True}, 0.02, None],
)
def test_a_bad_tolerance_says_how_to_write_it(value):
    if value is None:
        value = [0.1]
    with pytest.raises(ValueError, match='"abs": 0.01, "rel": 0.02'):
        cell_tolerance({"nbval-tolerance": value})


def test_a_marker_in_the_code_is_found():
    assert comment_marker("x = 1\nprint(x)") is None
    assert comment_marker("print('# NBVAL_SKIP is a comment only at the start')") is None
    assert comment_marker("# NBVAL_IGNORE_OUTPUT\nprint(time)") == "NBVAL_IGNORE_OUTPUT"
    assert comment_marker("x = 1\n  # NBVAL_TOLERANCE abs=0.02\n") == "NBVAL_TOLERANCE"
    assert comment_marker("#PYTEST_VALIDATE_IGNORE_OUTPUT") == "PYTEST_VALIDATE_IGNORE_OUTPUT"


def test_numbers_within_the_tolerance_agree_and_the_text_must_not_move():
    stored = "loss after 100 steps 1.6366\naccuracy   0.986\n"
    assert (
        numbers_differ("loss after 100 steps 1.6375\naccuracy   0.982\n", stored, (0.01, 0)) is None
    )
    # a number printed one character narrower in a right-aligned column
    assert numbers_differ("n    22\n", "n   122\n", (200, 0)) is None
    assert "1.7366 is not 1.6366" in numbers_differ(
        "loss after 100 steps 1.7366\naccuracy   0.986\n", stored, (0.01, 0)
    )
    assert numbers_differ("loss after 99 steps 1.6366", "loss after 100 steps", (1, 0))
    assert numbers_differ("gain 1.6366", "loss 1.6366", (1, 0)) == (
        "the text around the numbers differs"
    )
    assert numbers_differ("x 10.5", "x 10.0", (0, 0.1)) is None  # 0.5 <= 0.1 * 10
    assert numbers_differ("x 11.5", "x 10.0", (0, 0.1))


def test_the_wrappers_are_installed_once():
    from nbval.plugin import IPyNbCell

    compare, runtest = IPyNbCell.compare_outputs, IPyNbCell.runtest
    assert getattr(compare, "within_tolerance", False)
    assert getattr(runtest, "no_comment_markers", False)
    nbval_tolerance.pytest_configure(None)  # as when pytest configures again: not wrapped twice
    assert IPyNbCell.compare_outputs is compare
    assert IPyNbCell.runtest is runtest
