"""Autograde one class with 1 and with 2 worker processes and print the speed-up.

    .venv/bin/python benchmarks/autograde_parallel.py [--students 6] [--assignments A ...]

Each student submits the solution notebook of every chosen assignment (default: 01 and 02).
Both runs grade the same class from scratch, each in its own temporary course root (the
repository's solutions/ and exercises/ linked in), through ``course.grading.batch`` (one
``nbgrader autograde`` process per submission, on threads of one process, each result stored
in the gradebook as it arrives: ``course.grading.engine``). The scores of the two runs must
agree. Writes benchmarks/out/autograde_parallel.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from course import release
from course.config import Course, load_settings
from course.grading.batch import autograde

REPO = Path(__file__).resolve().parents[1]


def grade_class(
    assignments: list[str], students: int, workers: int, sandbox: bool = True
) -> tuple[float, dict, list[float]]:
    """(wall seconds, {assignment/student: (status, score)}, seconds of each notebook)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for folder in ("solutions", "exercises"):
            (root / folder).symlink_to(REPO / folder)
        course = Course(root, load_settings(root, [f"sandbox={sandbox}"]))
        for i in range(students):
            for a in assignments:
                name = course.notebook_names(a)[0]
                dest = course.submitted / f"student{i + 1}" / a / name
                dest.parent.mkdir(parents=True)
                shutil.copy(course.solutions / a / name, dest)
        names = [f"student{i + 1}" for i in range(students)]
        release.register(course, assignments, names, course.gradebook_url)
        start = time.perf_counter()
        results = autograde(assignments, course, workers=workers)
        elapsed = time.perf_counter() - start
    scores = {f"{r.assignment}/{r.student}": (r.status, r.score) for r in results}
    return elapsed, scores, [r.seconds for r in results]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=6)
    p.add_argument("--assignments", nargs="*", default=["01_attention", "02_multi_head"])
    args = p.parse_args()
    os.environ.pop("AFZ_GRADEBOOK_URL", None)
    assignments = Course(REPO).assignments(args.assignments)
    times, scores = {}, {}
    for workers in (1, 2):
        times[workers], scores[workers], _ = grade_class(assignments, args.students, workers)
    if scores[1] != scores[2]:
        raise SystemExit(f"the two runs disagree:\n{scores[1]}\n{scores[2]}")
    jobs = len(scores[1])
    speedup = times[1] / times[2]
    print()
    print(f"class: {args.students} students x {len(assignments)} assignment(s) = {jobs} notebooks")
    print(f"CPU cores: {os.cpu_count()}")
    for w in (1, 2):
        print(f"{w} worker(s): {times[w]:6.1f} s  ({times[w] / jobs:4.1f} s per notebook)")
    print(f"speed-up of 2 workers over 1: {speedup:.2f}x")
    out = REPO / "benchmarks" / "out" / "autograde_parallel.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "students": args.students,
                "assignments": assignments,
                "notebooks": jobs,
                "cpu_count": os.cpu_count(),
                "seconds": {str(w): round(t, 2) for w, t in times.items()},
                "speedup_2_over_1": round(speedup, 2),
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
