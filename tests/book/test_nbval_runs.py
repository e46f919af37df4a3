"""Real nbval, with the tolerance plugin (tools/nbval_tolerance.py), on small notebooks: one
whose number moved within its tolerance passes, one whose number moved past it fails naming
the number, and one without a marker must match exactly. (The plugin's pieces:
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


# slow: starts Jupyter kernels
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
