"""Real nbval, with the tolerance plugin (tools/nbval_tolerance.py), on small notebooks: one
whose number moved within the tolerance of its metadata passes, one whose number moved past it
fails naming the number, one without a tolerance must match exactly, and a cell whose code
carries a test marker as a comment fails whatever it prints. (The plugin's pieces:
tests/unit/test_nbval_tolerance.py.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]


def run_nbval(
    tmp_path: Path, stored: str, printed: str, metadata: dict, comment: str = ""
) -> subprocess.CompletedProcess:
    """nbval, with the repository's conftest, on a one-cell notebook that prints `printed`
    and stores `stored`."""
    cell = nbformat.v4.new_code_cell(f"{comment}print({printed!r})", execution_count=1)
    cell.metadata.update(metadata)
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


# slow: starts Jupyter kernels
def test_nbval_passes_a_drift_within_the_tolerance_and_fails_a_planted_change(tmp_path):
    stored = "post-norm loss after 100 steps 1.6366"
    tolerance = {"nbval-tolerance": {"abs": 0.005}}
    within = run_nbval(tmp_path / "a", stored, "post-norm loss after 100 steps 1.6375", tolerance)
    assert within.returncode == 0, within.stdout[-3000:]
    planted = run_nbval(tmp_path / "b", stored, "post-norm loss after 100 steps 1.6466", tolerance)
    assert planted.returncode == 1, planted.stdout[-3000:]
    assert "1.6466 is not 1.6366 within abs=0.005" in planted.stdout
    exact = run_nbval(tmp_path / "c", stored, "post-norm loss after 100 steps 1.6375", {})
    assert exact.returncode == 1, exact.stdout[-3000:]
    # nbval's own marker as a tag: the output is not compared
    ignored = run_nbval(tmp_path / "d", stored, "7.3 ms", {"tags": ["nbval-ignore-output"]})
    assert ignored.returncode == 0, ignored.stdout[-3000:]
    # the same marker as a comment in the code, where a reader of the book would see it: refused
    comment = run_nbval(tmp_path / "e", stored, stored, {}, comment="# NBVAL_IGNORE_OUTPUT\n")
    assert comment.returncode == 1, comment.stdout[-3000:]
    assert "carries the test marker 'NBVAL_IGNORE_OUTPUT'" in comment.stdout
