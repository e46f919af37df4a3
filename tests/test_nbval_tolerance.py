"""Chapter cells marked `# NBVAL_TOLERANCE ...` compare their numbers within that tolerance.

The comparison is tools/nbval_tolerance.py, a pytest plugin that wraps nbval's; these tests call
its pieces and run real nbval on small notebooks, one whose number moved within its tolerance
(passes) and one whose number moved past it (fails, naming the number).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import nbval_tolerance
import pytest
from nbval_tolerance import cell_tolerance, numbers_differ

REPO = Path(__file__).resolve().parent.parent


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


def run_nbval(
    tmp_path: Path, stored: str, printed: str, marker: str
) -> subprocess.CompletedProcess:
    """nbval, with the repository's conftest, on a one-cell notebook that prints `printed`
    and stores `stored`."""
    cell = nbformat.v4.new_code_cell(f"{marker}\nprint({printed!r})", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=stored + "\n")]
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    tmp_path.mkdir(parents=True)
    nbformat.write(nb, tmp_path / "chapter.ipynb")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-p", "no:cacheprovider",
         "-p", "nbval_tolerance", "--rootdir", str(tmp_path), str(tmp_path / "chapter.ipynb")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO / "tools")},
    )  # fmt: skip


@pytest.mark.slow  # starts Jupyter kernels
def test_nbval_passes_a_drift_within_the_tolerance_and_fails_a_planted_change(tmp_path):
    stored = "post-norm loss after 100 steps 1.6366"
    within = run_nbval(tmp_path / "a", stored, "post-norm loss after 100 steps 1.6375",
                       "# NBVAL_TOLERANCE abs=0.005")  # fmt: skip
    assert within.returncode == 0, within.stdout[-3000:]
    planted = run_nbval(tmp_path / "b", stored, "post-norm loss after 100 steps 1.6466",
                        "# NBVAL_TOLERANCE abs=0.005")  # fmt: skip
    assert planted.returncode == 1, planted.stdout[-3000:]
    assert "1.6466 is not 1.6366 within abs=0.005" in planted.stdout
    exact = run_nbval(
        tmp_path / "c", stored, "post-norm loss after 100 steps 1.6375", "# no marker"
    )
    assert exact.returncode == 1, exact.stdout[-3000:]


def test_the_wrapper_is_installed_once():
    from nbval.plugin import IPyNbCell

    wrapped = IPyNbCell.compare_outputs
    assert getattr(wrapped, "within_tolerance", False)
    nbval_tolerance.pytest_configure(None)  # as when pytest configures again: not wrapped twice
    assert IPyNbCell.compare_outputs is wrapped
