"""The per-notebook cost of grading: its stage timestamps, and the two cuts made to it.

- ``autograder.stamp`` writes a timestamp per stage only when ``AFZ_TIMING`` asks for it;
  ``benchmarks/grading_cost.py`` turns a grading's stamps into seconds per stage.
- ``course.runner.NBGRADER_MAIN`` starts nbgrader without jsonschema's "iri" checker (the
  grammar it builds on import cost about 1.3 s per nbgrader start) and passes its exit code on.
- ``LimitedExecute`` ends the kernel with a signal once the last cell has replied, instead of
  a shutdown request that ipykernel answers by tearing itself down (about 1.5 s).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import stamp
from autograder.nbgrader_plugins import LimitedExecute
from course.runner import NBGRADER_MAIN, nbgrader_env

ROOT = Path(__file__).resolve().parent.parent


def _benchmark():
    spec = importlib.util.spec_from_file_location(
        "grading_cost", ROOT / "benchmarks" / "grading_cost.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stamp_writes_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.delenv("AFZ_TIMING", raising=False)
    stamp("nothing")  # no file named: nothing written, no error
    path = tmp_path / "stamps.jsonl"
    monkeypatch.setenv("AFZ_TIMING", str(path))
    stamp("cell", kind="tests")
    stamp("cell done", kind="tests")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["stage"] for x in lines] == ["cell", "cell done"]
    assert lines[0]["kind"] == "tests" and lines[0]["t"] <= lines[1]["t"]


def test_stages_are_the_gaps_between_stamps():
    bench = _benchmark()
    names = [
        "spawn", "config", "execute", "kernel start", "launcher", "bwrap", "kernel ready",
        "cell", "cell done", "cell", "cell done", "kernel shutdown", "kernel gone",
        "executed", "verdicts done", "exit", "exited", "reaped",
    ]  # fmt: skip
    kinds = iter(["setup", "setup", "tests", "tests"])
    stamps = [
        {"t": float(i), "stage": n, **({"kind": next(kinds)} if n.startswith("cell") else {})}
        for i, n in enumerate(names)
    ]
    got = bench.stages(stamps, total=20.0)
    assert got["nbgrader start + imports"] == 1.0
    assert got["setup cells (imports)"] == 1.0 and got["tests"] == 1.0
    assert got["execution, other"] == (13 - 2) - 4 - 2  # executing, less kernel stages, cells
    assert got["instructor side, other"] == 20.0 - 17
    assert sum(got.values()) == 20.0
    with pytest.raises(SystemExit, match="no timestamps"):
        bench.stages(stamps[:5], total=5.0)


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


@pytest.mark.slow
def test_nbgrader_starts_without_the_iri_grammar_and_keeps_its_exit_code():
    ok = _nbgrader("--version", importtime=True)
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert "nbgrader version" in ok.stdout
    assert "jsonschema" in ok.stderr  # nbformat's validator was imported...
    assert "rfc3987_syntax.syntax_helpers" not in ok.stderr  # ...without the grammar's parser
    bad = ("autograde", "no_such_assignment", "--no-such-option")
    assert _nbgrader(*bad).returncode == _nbgrader(*bad, plain=True).returncode == 2


@pytest.mark.slow
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
