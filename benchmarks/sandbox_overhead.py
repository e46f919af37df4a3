"""What the grading sandbox costs: the same class graded with and without it, side by side.

    .venv/bin/python benchmarks/sandbox_overhead.py [--students 4] [--rounds 2] [--quick]

Each round grades the same class (every student submits the solution of each chosen
assignment) three ways, one after the other: without the sandbox and 1 worker, in the
sandbox with 1 worker, in the sandbox with 2 workers. Reported: the median seconds per
notebook with and without the sandbox (1 worker) and their ratio, and the speed-up of 2
sandboxed workers over 1. Targets: the sandbox adds at most 15 % per notebook; 2 workers are
at least 1.7x faster than 1. The scores of every run must agree. Writes
benchmarks/out/sandbox_overhead.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics

from autograde_parallel import REPO, grade_class

from course.config import Course


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=4)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--assignments", nargs="*", default=["01_attention", "02_multi_head"])
    p.add_argument("--quick", action="store_true", help="1 round, 2 students, assignment 01")
    args = p.parse_args()
    if args.quick:
        args.students, args.rounds, args.assignments = 2, 1, ["01_attention"]
    os.environ.pop("AFZ_GRADEBOOK_URL", None)
    assignments = Course(REPO).assignments(args.assignments)
    runs = {"off-1": (False, 1), "on-1": (True, 1), "on-2": (True, 2)}
    per_notebook: dict[str, list[float]] = {k: [] for k in runs}
    wall: dict[str, list[float]] = {k: [] for k in runs}
    reference = None
    for _ in range(args.rounds):
        for key, (sandbox, workers) in runs.items():
            seconds, scores, each = grade_class(
                assignments, args.students, workers, sandbox=sandbox
            )
            if reference is None:
                reference = scores
            elif scores != reference:
                raise SystemExit(f"{key} disagrees with the first run:\n{scores}\n{reference}")
            wall[key].append(seconds)
            per_notebook[key].extend(each)
    off = statistics.median(per_notebook["off-1"])
    on = statistics.median(per_notebook["on-1"])
    overhead = on / off - 1
    speedup = statistics.median(wall["on-1"]) / statistics.median(wall["on-2"])
    notebooks = len(reference or {})
    print()
    print(f"class: {args.students} students x {len(assignments)} assignment(s) = {notebooks} "
          f"notebooks, {args.rounds} round(s), {os.cpu_count()} CPU cores")  # fmt: skip
    print(f"median s per notebook, no sandbox, 1 worker: {off:6.2f}")
    print(f"median s per notebook, sandbox,    1 worker: {on:6.2f}")
    print(f"sandbox overhead per notebook: {100 * overhead:+.1f} %  (target: at most +15 %)")
    print(f"speed-up of 2 sandboxed workers over 1: {speedup:.2f}x  (target: at least 1.7x)")
    met = overhead <= 0.15 and speedup >= 1.7
    print(f"target met: {'yes' if met else 'no'}")
    out = REPO / "benchmarks" / "out" / "sandbox_overhead.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "students": args.students,
                "assignments": assignments,
                "rounds": args.rounds,
                "cpu_count": os.cpu_count(),
                "median_s_per_notebook": {"no_sandbox": round(off, 3), "sandbox": round(on, 3)},
                "overhead": round(overhead, 4),
                "wall_s": {k: [round(x, 2) for x in v] for k, v in wall.items()},
                "speedup_2_over_1": round(speedup, 3),
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
