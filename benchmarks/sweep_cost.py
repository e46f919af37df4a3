"""What the contract sweep adds to grading one notebook, side by side in one run.

    .venv/bin/python benchmarks/sweep_cost.py [--rounds 3] [--assignments A ...] [--quick]

For each assignment, the solution notebook is graded by the dry grader (``autograder/dry.py``:
the kernel forms and the verdicts of real grading, without Jupyter) with and without the
contract sweep (``autograder/contracts.py``), interleaved over ``--rounds``; the difference of
the medians is what the sweep's probes cost in the kernel. The same solution is then graded
once through the real pipeline, with the sweep, as ``python -m course autograde`` grades it
(``benchmarks/grading_cost.py``: nbgrader, the sandboxed kernel); the ratio printed is that
time over the same time less the sweep's cost, the growth the sweep brings to grading one
notebook. The target: at most 1.20 for assignments 01-05 (06 trains a model in every notebook).
The solutions' replays (with and without the sweep) are computed first and cached.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import grading_cost

from autograder import dry, replay
from course.config import Course

REPO = Path(__file__).resolve().parents[1]
TARGET_RATIO = 1.20


def dry_seconds(assignment: str, rounds: int) -> dict[bool, list[float]]:
    """Seconds of dry-grading the solution of ``assignment``, with (True) and without the
    sweep, interleaved."""
    course = Course(REPO)
    source = course.solutions / assignment / course.notebook_names(assignment)[0]
    notebook = {"solution": json.loads(source.read_text(encoding="utf-8"))}
    for sweep in (True, False):
        replay.expected_checks(source, sweep=sweep)  # cached before the clock starts
    found: dict[bool, list[float]] = {True: [], False: []}
    for r in range(rounds):
        for sweep in (True, False) if r % 2 == 0 else (False, True):
            start = time.perf_counter()
            graded = dry.grade(source, notebook, sweep=sweep, jobs=1)["solution"]
            found[sweep].append(time.perf_counter() - start)
            if graded.score != graded.max_score:
                raise SystemExit(f"{assignment}: the solution lost points: {graded.failed()}")
    return found


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--assignments", nargs="*", default=None, help="default: all of them")
    p.add_argument("--quick", action="store_true", help="1 round of assignment 01")
    args = p.parse_args()
    if args.quick:
        args.rounds, args.assignments = 1, ["01_attention"]
    assignments = Course(REPO).assignments(args.assignments)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        course = grading_cost.make_course(Path(tmp) / "course", assignments)
        grading_cost.start_server()
        for a in assignments:
            found = dry_seconds(a, args.rounds)
            added = statistics.median(found[True]) - statistics.median(found[False])
            real = grading_cost.grade_timed(course, a, Path(tmp), cold=False)
            ratio = real["total"] / max(real["total"] - added, 1e-9)
            rows.append((a, statistics.median(found[False]), added, real["total"], ratio))
    print("| assignment | dry grading without the sweep | the sweep adds | real grading "
          "with the sweep | growth |")  # fmt: skip
    print("|---|---|---|---|---|")
    for a, without, added, real, ratio in rows:
        print(f"| {a} | {without:.2f} s | {added:+.2f} s | {real:.2f} s | {ratio:.2f} |")
    checked = [r for r in rows if r[0] in grading_cost.TARGET_ASSIGNMENTS]
    met = all(r[4] <= TARGET_RATIO for r in checked)
    print(f"target met: {'yes' if met else 'NO'} (growth <= {TARGET_RATIO:.2f} for 01-05)")


if __name__ == "__main__":
    main()
