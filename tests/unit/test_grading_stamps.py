"""The per-notebook cost of grading, measured: ``autograder.stamp`` writes a timestamp per
stage only when ``AFZ_TIMING`` asks for it, and ``benchmarks/grading_cost.py`` turns a
grading's stamps into seconds per stage. (The two cuts made to that cost, measured on real
nbgrader and a real kernel: tests/grading/test_grading_cost.py.)"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from autograder import stamp

ROOT = Path(__file__).resolve().parents[2]


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
