"""Where the seconds of grading one notebook go: a stage-by-stage breakdown per assignment.

    .venv/bin/python benchmarks/grading_cost.py [--rounds 3] [--assignments A ...] [--quick]
                                                [--compare-cold]

One student submits the solution notebook of every chosen assignment (default: 01-06) into a
temporary course root (as ``autograde_parallel.py`` builds it); the solutions are replayed
first (the grader's cache), then each submission is graded ``--rounds`` times, one at a time,
exactly as ``python -m course autograde`` grades it (``course.grading.submission.grade_one``:
its own ``nbgrader autograde`` process, the kernel in the bubblewrap sandbox). Every process of a
grading notes when it reaches each stage (``autograder.stamp``, switched on by
``AFZ_TIMING``), and the stages' seconds are the gaps between those notes:

    nbgrader start + imports   python -m nbgrader until nbgrader_config.py is loaded
    gradebook + sanitize       the gradebook's student and submission, the source's cells
                               put back, the submission copied to autograded/
    kernel launcher start      jupyter_client starts python -m autograder.kernel
    sandbox setup              cgroup, the filtered copy of helpers, the bwrap command line
    kernel boot                bwrap, ipykernel's start and the kernel_info handshake
    setup cells (imports)      the notebook's cells that are neither solution nor test
    learner code               the solution cells (here: the solution itself)
    tests                      the test cells, visible and hidden
    execution, other           between the cells (nbclient's own work)
    kernel shutdown            shutdown request until the launcher is gone
    verdicts                   judging the check records (the solution's values from cache,
                               numpy imported)
    nbgrader post-processing   nbgrader's other preprocessors, the notebook written, scores
                               saved in the gradebook, until the interpreter exits
    cleanup                    the run's cgroups removed, its temporary folder deleted
    instructor side, other     diagnose and the log written (course.grading.submission.grade_one)

nbgrader is forked from a warm server (``course.grading.forkserver``) that imported it once per
worker; that start is measured once, before the rounds, and printed apart. ``--compare-cold`` grades
every notebook a second time in each round with a cold ``python -m nbgrader``
(the setting ``warm_nbgrader = false``), interleaved, and prints both medians side by side.

Prints a table per assignment (median seconds of each stage over the rounds) and the median
seconds per notebook; the target is a median of at most 3 s per notebook for
assignments 01-05 on an idle core. Writes benchmarks/out/grading_cost.json (not with --quick).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from course import release
from course.config import Course
from course.grading import forkserver
from course.grading.batch import replay_solutions
from course.grading.nbgrader_command import nbgrader_env
from course.grading.submission import grade_one

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 3.0
TARGET_ASSIGNMENTS = (
    "01_attention",
    "02_multi_head",
    "03_positional_encoding",
    "04_encoder",
    "05_decoder",
)
# (stage, the stamp it starts at, the stamp it ends at)
GAPS = [
    ("nbgrader start + imports", "spawn", "config"),
    ("gradebook + sanitize", "config", "execute"),
    ("kernel launcher start", "kernel start", "launcher"),
    ("sandbox setup", "launcher", "bwrap"),
    ("kernel boot", "bwrap", "kernel ready"),
    ("kernel shutdown", "kernel shutdown", "kernel gone"),
    ("verdicts", "executed", "verdicts done"),
    ("nbgrader post-processing", "verdicts done", "exit"),
    ("interpreter exit", "exit", "exited"),
    ("cleanup", "exited", "reaped"),
]
CELLS = {"setup": "setup cells (imports)", "learner": "learner code", "tests": "tests"}
STAGES = [
    *(g[0] for g in GAPS[:5]),
    *CELLS.values(),
    "execution, other",
    *(g[0] for g in GAPS[5:]),
    "instructor side, other",
]


def stages(stamps: list[dict], total: float) -> dict[str, float]:
    """Seconds of every stage of one grading, from its stamps (the last of each name counts:
    a kernel started again after a failed start replaces the first)."""
    at = {s["stage"]: s["t"] for s in stamps}
    missing = {g[1] for g in GAPS} | {g[2] for g in GAPS} | {"execute", "executed"}
    missing -= set(at)
    if missing:
        raise SystemExit(f"no timestamps for {sorted(missing)}: did the grading run?")
    out = {name: at[end] - at[start] for name, start, end in GAPS}
    cells: dict[str, float] = defaultdict(float)
    began: dict[str, float] = {}
    for s in stamps:
        if s["stage"] == "cell":
            began[s["kind"]] = s["t"]
        elif s["stage"] == "cell done":
            cells[CELLS[s["kind"]]] += s["t"] - began.pop(s["kind"])
    out.update({name: cells[name] for name in CELLS.values()})
    inside = ("kernel launcher start", "sandbox setup", "kernel boot", "kernel shutdown")
    executing = at["executed"] - at["execute"]
    out["execution, other"] = executing - sum(out[k] for k in inside) - sum(cells.values())
    out["instructor side, other"] = total - (at["reaped"] - at["spawn"])
    return {k: round(out[k], 3) for k in STAGES}


def make_course(root: Path, assignments: list[str]) -> Course:
    """A course root with the repository's solutions/ and exercises/, and student ``s1``
    who submitted the solution of every assignment."""
    root.mkdir()
    for folder in ("solutions", "exercises"):
        (root / folder).symlink_to(REPO / folder)
    course = Course(root)
    for a in assignments:
        name = course.notebook_names(a)[0]
        dest = course.submitted / "s1" / a / name
        dest.parent.mkdir(parents=True)
        shutil.copy(course.solutions / a / name, dest)
    release.register(course, assignments, ["s1"], course.gradebook_url)
    replay_solutions(course, assignments)
    return course


def start_server() -> float:
    """Seconds to start this thread's nbgrader server (once per worker in a real run)."""
    forkserver.close_all()  # the release of the assignments started one
    start = time.perf_counter()
    forkserver.server_for(nbgrader_env(), REPO)
    return time.perf_counter() - start


def grade_timed(course: Course, a: str, tmp: Path, cold: bool) -> dict[str, float]:
    """The stages of one grading of ``s1``'s submission of ``a``."""
    stamps_file = tmp / f"stamps-{a}.jsonl"
    stamps_file.unlink(missing_ok=True)
    os.environ["AFZ_TIMING"] = str(stamps_file)
    settings = replace(course.settings, warm_nbgrader=not cold, notebook_timeout=900)
    start = time.perf_counter()
    try:
        result = grade_one((a, "s1"), Course(course.root, settings), course.gradebook_url)
    finally:
        del os.environ["AFZ_TIMING"]
    total = time.perf_counter() - start
    if result.status != "ok":
        raise SystemExit(f"{a}: the solution was not graded: {result.status}")
    stamps = [json.loads(x) for x in stamps_file.read_text().splitlines()]
    return {**stages(stamps, total), "total": round(total, 3)}


def measure(
    assignments: list[str], rounds: int, compare_cold: bool = False
) -> tuple[dict[str, dict[str, list[dict[str, float]]]], float]:
    """({"warm"/"cold": {assignment: [stages of each round]}}, the server's start in s);
    rounds interleave the assignments (and warm with cold)."""
    modes = ["warm", "cold"] if compare_cold else ["warm"]
    found: dict[str, dict[str, list[dict[str, float]]]] = {
        m: {a: [] for a in assignments} for m in modes
    }
    with tempfile.TemporaryDirectory() as tmp:
        course = make_course(Path(tmp) / "course", assignments)
        server_start = start_server()
        for r in range(rounds):
            for a in assignments:
                for m in modes if r % 2 == 0 else modes[::-1]:
                    found[m][a].append(grade_timed(course, a, Path(tmp), cold=m == "cold"))
    return found, server_start


def median_of(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--assignments", nargs="*", default=None, help="default: all of them")
    p.add_argument("--quick", action="store_true", help="1 round of assignment 01")
    p.add_argument(
        "--compare-cold",
        action="store_true",
        help="also grade each notebook with a cold nbgrader start, interleaved",
    )
    args = p.parse_args()
    if args.quick:
        args.rounds, args.assignments = 1, ["01_attention"]
    os.environ.pop("AFZ_GRADEBOOK_URL", None)
    assignments = Course(REPO).assignments(args.assignments)
    found, server_start = measure(assignments, args.rounds, args.compare_cold)
    runs = found["warm"]
    load = os.getloadavg()[0]
    print()
    print(f"{args.rounds} round(s), {os.cpu_count()} CPU cores, load average {load:.2f} at the end")
    print(f"the nbgrader server's start (once per worker, not per notebook): {server_start:.2f} s")
    for a in assignments:
        print(f"\n{a}: median seconds per stage")
        for stage in STAGES:
            print(f"  {stage:<28} {median_of(runs[a], stage):7.2f}")
        print(f"  {'total per notebook':<28} {median_of(runs[a], 'total'):7.2f}")
    graded = [a for a in assignments if a in TARGET_ASSIGNMENTS]
    totals = [r["total"] for a in graded for r in runs[a]]
    print()
    summary = {a: round(median_of(runs[a], "total"), 2) for a in assignments}
    print("median s per notebook: " + ", ".join(f"{a[:2]} {s:.2f}" for a, s in summary.items()))
    median = statistics.median(totals) if totals else None
    if median is not None:
        print(f"median s per notebook, 01-05: {median:.2f}  (target: at most {TARGET_S:.0f} s)")
    print(f"target met: {'yes' if median is not None and median <= TARGET_S else 'no'}")
    cold: dict[str, float] = {}
    if "cold" in found:
        cold = {a: round(median_of(found["cold"][a], "total"), 2) for a in assignments}
        print("\nmedian s per notebook, warm nbgrader vs cold start (interleaved):")
        for a in assignments:
            start_w = median_of(runs[a], "nbgrader start + imports")
            start_c = median_of(found["cold"][a], "nbgrader start + imports")
            print(
                f"  {a:<24} warm {summary[a]:5.2f}  cold {cold[a]:5.2f}"
                f"  (nbgrader start {start_w:.2f} vs {start_c:.2f})"
            )
        cold_totals = [r["total"] for a in graded for r in found["cold"][a]]
        if cold_totals:
            print(f"  01-05 median: warm {median:.2f}, cold {statistics.median(cold_totals):.2f}")
    if args.quick:  # too small to mean anything: keep the last real measurement
        return
    out = REPO / "benchmarks" / "out" / "grading_cost.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "rounds": args.rounds,
        "cpu_count": os.cpu_count(),
        "load_average_end": round(load, 2),
        "median_s_per_notebook_01_05": median,
        "median_s_per_notebook": summary,
        "nbgrader_server_start_s": round(server_start, 3),
        "median_s_per_notebook_cold": cold or None,
        "median_s_per_stage": {
            a: {s: round(median_of(runs[a], s), 3) for s in STAGES} for a in assignments
        },
        "runs": runs,
        "runs_cold": found.get("cold"),
    }
    out.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
