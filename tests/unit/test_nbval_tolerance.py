"""Chapter cells marked `# NBVAL_TOLERANCE ...` compare their numbers within that tolerance.

The comparison is tools/nbval_tolerance.py, a pytest plugin that wraps nbval's; these tests call
its pieces (real nbval on small notebooks: tests/book/test_nbval_runs.py).
"""

from __future__ import annotations

import nbval_tolerance
import pytest
from nbval_tolerance import cell_tolerance, numbers_differ


def test_the_marker_gives_abs_and_rel():
    assert cell_tolerance("x = 1\nprint(x)") is None
    assert cell_tolerance("# NBVAL_TOLERANCE abs=0.02\nprint(1)") == (0.02, 0.0)
    assert cell_tolerance("  # NBVAL_TOLERANCE rel=0.1 abs=1e-3") == (1e-3, 0.1)


@pytest.mark.parametrize(
    "line",
    [
        "# NBVAL_TOLERANCE",
        "# NBVAL_TOLERANCE abs=x",
        "# NBVAL_TOLERANCE tol=0.1",
        "# NBVAL_TOLERANCE abs=-1",
    ],
)
def test_a_bad_marker_says_how_to_write_it(line):
    with pytest.raises(ValueError, match="NBVAL_TOLERANCE abs=0.01 rel=0.02"):
        cell_tolerance(line)


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


def test_the_wrapper_is_installed_once():
    from nbval.plugin import IPyNbCell

    wrapped = IPyNbCell.compare_outputs
    assert getattr(wrapped, "within_tolerance", False)
    nbval_tolerance.pytest_configure(None)  # as when pytest configures again: not wrapped twice
    assert IPyNbCell.compare_outputs is wrapped
