"""A *dry* grader, without Jupyter or nbgrader: a fast stand-in for the course's own tests.

The course checks its tests with many wrong and many differently-written solutions
(``tests/grading_cases.py``). Grading each through nbgrader and a sandboxed kernel costs
seconds per notebook; this module grades them the same way in a fraction of that:

* each notebook runs in a process forked from one that has already imported NumPy, PyTorch
  and ``helpers`` (so every notebook starts from the same state, as a fresh kernel does),
  with the modules of this and later assignments absent (``autograder/pieces.py``);
* test cells run in their kernel form (``autograder/kernel_form.py``: hidden tests included,
  as nbgrader's autograde restores them, answers left out), and their checks are collected as
  the sandbox would publish them;
* the verdicts come from ``autograder/verdicts.py`` against the solution's replayed values,
  exactly as in real grading, and a test cell scores its points when its verdict passes.

It is not a sandbox: run only the course's own notebooks with it. ``tests/test_nbgrader.py``
grades a sample of the same notebooks through the real workflow and checks both agree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from autograder import cells, kernel_form, pieces, regions, replay, restore, scan, verdicts
from checks.record import MIME

ROOT = Path(__file__).resolve().parent.parent
CELL_TIMEOUT = 120


class Graded(NamedTuple):
    score: float
    max_score: float
    verdicts: dict[str, verdicts.Verdict]  # test grade_id -> verdict

    def failed(self) -> dict[str, str]:
        return {g: v.message for g, v in self.verdicts.items() if not v.passed}


def grade(
    source: Path,
    notebooks: dict[str, dict[str, Any]],
    *,
    timeout: int = CELL_TIMEOUT,
    jobs: int | None = None,
    sweep: bool = True,
) -> dict[str, Graded]:
    """Grade each of ``notebooks`` (name -> notebook JSON) of the assignment whose source
    notebook is ``source`` (``solutions/<a>/<nb>.ipynb``), ``jobs`` at a time (default: one
    per CPU core); ``sweep=False``: without the contract sweep (``autograder/contracts.py``)."""
    jobs = jobs or os.cpu_count() or 1
    source = Path(source).resolve()
    refs = replay.expected_checks(source, sweep=sweep)
    assignment = source.parent.name
    with tempfile.TemporaryDirectory(prefix="afz-dry-") as tmp:
        staging = Path(tmp) / "path"
        pieces.filtered_copy(ROOT / "helpers", staging / "helpers", assignment)
        # cells put back as released (the source has the same test and read-only cells)
        layout = json.loads(source.read_text("utf-8"))
        notebooks = {n: restore.restore(nb, layout)[0] for n, nb in notebooks.items()}
        todo = Path(tmp) / "notebooks.json"
        todo.write_text(json.dumps(notebooks), encoding="utf-8")
        out = Path(tmp) / "outputs.json"
        work = Path(tmp) / assignment
        work.mkdir()
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(staging), str(ROOT)]),
            "MPLBACKEND": "Agg",
            "OMP_NUM_THREADS": "1",
        }
        env.pop("CHECKS_MODE", None)
        command = [sys.executable, "-m", "autograder.dry", str(source), str(todo), str(out)]
        command += ["--timeout", str(timeout), "--jobs", str(jobs)]
        if not sweep:
            command.append("--no-sweep")
        done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"dry grading failed:\n{done.stderr[-3000:]}")
        outputs = json.loads(out.read_text(encoding="utf-8"))
    source_nb = json.loads(source.read_text("utf-8"))
    points = {g: p for g, (_, p) in regions.test_cells(source_nb).items()}
    results = {}
    for name, nb in notebooks.items():
        cells = outputs.get(name, {})
        reading = scan.Scan(nb, source_nb)
        judged = {
            g: verdicts.judge_test(
                g,
                refs.get(g, []),
                cells.get(g, []),
                refused=reading.interference(g),
                static=reading.forbidden(g, refs.get(g, [])),
                quiet=reading.looks_around(),
            )
            for g in points
        }
        score = sum(points[g] for g, v in judged.items() if v.passed)
        results[name] = Graded(float(score), float(sum(points.values())), judged)
    return results


# ---------------------------------------------------------------------------------------
# In the grading process
# ---------------------------------------------------------------------------------------
def _run(nb: dict[str, Any], tests: dict[str, str], timeout: int) -> dict[str, list[dict]]:
    """Execute ``nb``'s code cells in one namespace; the outputs of its test cells."""
    import checks

    namespace = cells.new_namespace()
    outputs: dict[str, list[dict]] = {}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = meta.get("grade_id")
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else text
        is_test = grade_id in tests
        if is_test:
            text = tests[grade_id]  # nbgrader restores the test cells, hidden tests included
        run = cells.run_cell(text, f"cell {grade_id}", namespace, checks.collect_into, timeout)
        error = None
        if run.error is not None:  # nbgrader goes on after any error
            error = {"output_type": "error", "ename": type(run.error).__name__}
            error["evalue"] = str(run.error)
        if is_test:
            cell_out = [
                {"output_type": "display_data", "data": {MIME: json.loads(json.dumps(r))}}
                for r in run.records
            ]
            outputs[grade_id] = cell_out + ([error] if error else [])
    return outputs


def _fork(nb: dict[str, Any], tests: dict[str, str], timeout: int) -> tuple[int, int]:
    """Start a child that runs one notebook from the parent's freshly imported state."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            data = json.dumps(_run(nb, tests, timeout)).encode()
        except BaseException as err:  # noqa: BLE001
            data = json.dumps({"__crash__": f"{type(err).__name__}: {err}"}).encode()
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)
        os._exit(0)
    os.close(write)
    return pid, read


def _collect(pid: int, read: int) -> dict[str, list[dict]]:
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    try:
        result = json.loads(data or b"{}")
    except ValueError:
        return {}
    return {} if "__crash__" in result else result  # a notebook that killed its process: 0


def _run_all(
    notebooks: dict[str, dict], tests: dict[str, str], timeout: int, jobs: int
) -> dict[str, dict[str, list[dict]]]:
    """Each notebook in a child of its own, ``jobs`` at a time."""
    results: dict[str, dict[str, list[dict]]] = {}
    running: list[tuple[str, int, int]] = []
    for name, nb in notebooks.items():
        if len(running) >= jobs:
            first, pid, read = running.pop(0)
            results[first] = _collect(pid, read)
        running.append((name, *_fork(nb, tests, timeout)))
    for name, pid, read in running:
        results[name] = _collect(pid, read)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("notebooks", type=Path, help="JSON: name -> notebook")
    parser.add_argument("out", type=Path)
    parser.add_argument("--timeout", type=int, default=CELL_TIMEOUT)
    parser.add_argument("--no-sweep", action="store_true", help="without the contract sweep")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    import IPython  # noqa: F401 - the kernel forms' last step asks it for a shell (none here)
    import numpy  # noqa: F401 - imported once, before the forks
    import torch

    import checks.recorder  # noqa: F401 - the test cells' Test and all it imports

    torch.set_num_threads(1)
    torch.broadcast_shapes((1, 2), (3, 1))  # its first call costs ~0.7 s; pay it once, here
    source = json.loads(args.source.read_text(encoding="utf-8"))
    tests = kernel_form.kernel_forms(source, sweep=not args.no_sweep)  # what the kernel runs
    notebooks = json.loads(args.notebooks.read_text(encoding="utf-8"))
    results = _run_all(notebooks, tests, args.timeout, max(1, args.jobs))
    args.out.write_text(json.dumps(results), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
