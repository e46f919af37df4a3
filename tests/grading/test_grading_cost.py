"""The per-notebook cost of grading: the two cuts made to it (its stage timestamps:
tests/unit/test_grading_stamps.py).

- nbgrader starts without jsonschema's "iri" checker (the grammar it builds on import cost
  about 1.3 s per nbgrader start; the lock keeps its package out), and
  ``course.grading.nbgrader_command.NBGRADER_MAIN`` passes nbgrader's exit code on.
- ``LimitedExecute`` ends the kernel with a signal once the last cell has replied, instead of
  a shutdown request that ipykernel answers by tearing itself down (about 1.5 s).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat

from autograder.preprocessors.limited_execute import LimitedExecute
from course.grading.nbgrader_command import NBGRADER_MAIN, nbgrader_env

ROOT = Path(__file__).resolve().parents[2]


def _nbgrader(*args: str, importtime: bool = False, plain: bool = False):
    flags = ["-X", "importtime"] if importtime else []
    main = ["-m", "nbgrader"] if plain else ["-c", NBGRADER_MAIN]
    return subprocess.run(
        [sys.executable, *flags, *main, *args],
        cwd=ROOT,
        env=nbgrader_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_nbgrader_starts_without_the_iri_grammar_and_keeps_its_exit_code():
    ok = _nbgrader("--version", importtime=True)
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert "nbgrader version" in ok.stdout
    assert "jsonschema" in ok.stderr  # nbformat's validator was imported...
    assert "rfc3987_syntax" not in ok.stderr  # ...without the grammar's parser
    bad = ("autograde", "no_such_assignment", "--no-such-option")
    assert _nbgrader(*bad).returncode == _nbgrader(*bad, plain=True).returncode == 2


def test_the_kernel_is_ended_at_once_after_the_last_cell(tmp_path, monkeypatch):
    """A kernel that is asked to shut down runs its exit handlers (ipykernel tears down);
    one ended by the grader does not get the chance: the marker file stays absent."""
    marker = tmp_path / "ran_exit_handlers"
    stamps = tmp_path / "stamps.jsonl"
    monkeypatch.setenv("AFZ_TIMING", str(stamps))
    code = f"import atexit, pathlib\n_ = atexit.register(pathlib.Path({str(marker)!r}).touch)"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    ex = LimitedExecute(kernel_name="python3", timeout=60, startup_timeout=60)
    ex.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    assert nb.cells[0].outputs == []
    assert ex.km is None  # nbclient's own cleanup ran (connection files, channels)
    assert not marker.exists(), "the kernel was shut down politely, not ended"
    at = {s["stage"]: s["t"] for s in map(json.loads, stamps.read_text().splitlines())}
    assert at["kernel gone"] - at["kernel shutdown"] < 5.0
