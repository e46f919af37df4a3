"""Autograding throughput of the engine's two executors, threads and Dask, side by side.

    .venv/bin/python benchmarks/autograde_dask.py [--students 6] [--assignments A ...]
        [--rounds 2] [--quick]

The same class (every student submits the solution of each chosen assignment; default: 01
and 02) is graded from scratch five ways per round, one after the other (in reverse order
every other round; the median wall time of the rounds is used), each in its own temporary
course root whose gradebook already knows the assignments, through the one engine
(``course.grading.engine``: each task carries the submission's bytes, each result is stored here as
it arrives): the serial run (threads, 1 worker), the default (threads of this process, 2
workers), and Dask with 1, 2 and 4 worker processes (``--scheduler local``, a LocalCluster of
this machine). The scores of every run must agree. Reported: notebooks per minute of each;
the overhead of Dask over threads with the same number of workers (cluster start included);
the instructor-side cost of storing one result; and a table projecting the wall time of 300
and 3,000 learners x 6 assignments on 1, 4 and 16 machines of 16 cores. Target: the default
(threads, 2 workers) at most 5 % slower per notebook than the faster of the two executors
with 2 workers. Writes benchmarks/out/autograde_dask.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from course import gradebook, release
from course.config import Course
from course.grading.batch import autograde

REPO = Path(__file__).resolve().parents[1]
SERIAL, DEFAULT = "serial (threads, 1)", "threads, 2 (default)"
RUNS = {  # name -> (scheduler, workers)
    SERIAL: (None, 1),
    DEFAULT: (None, 2),
    "dask, 1": ("local", 1),
    "dask, 2": ("local", 2),
    "dask, 4": ("local", 4),
}
A06_SECONDS = 23.0  # assignment 06 trains: measured ~23 s per notebook (benchmarks/README.md)
LEARNERS = (300, 3000)
MACHINES = (1, 4, 16)
CORES_PER_MACHINE = 16
TARGET_SLOWER = 0.05  # the default against the faster executor, 2 workers each


def make_class(folder: Path, assignments: list[str], students: int, template: Path) -> Course:
    """A course root in ``folder``: solutions/ and exercises/ linked, the template gradebook
    (assignments and students registered once), every student submitting the solutions."""
    folder.mkdir()
    for name in ("solutions", "exercises"):
        (folder / name).symlink_to(REPO / name)
    shutil.copy(template, folder / "gradebook.db")
    course = Course(folder)
    for i in range(students):
        for a in assignments:
            nb = course.notebook_names(a)[0]
            dest = course.submitted / f"student{i + 1}" / a / nb
            dest.parent.mkdir(parents=True)
            shutil.copy(course.solutions / a / nb, dest)
    return course


def store_seconds(graded: Course, template: Path, rounds: int) -> float:
    """Median seconds of what the instructor's side does with the gradebook per result: write
    one submission's fields, as a worker sends them (here: exported from a graded run's
    gradebook), into the main gradebook (a fresh copy of the template, open for the run, as
    ``course.grading.engine`` keeps it) through nbgrader's API, and read its score."""
    with gradebook.open_gradebook(graded.gradebook_url) as gb:
        jobs = [(s.assignment.name, s.student.id) for a in gb.assignments for s in a.submissions]
        sent = {job: gradebook.export_submission(gb, *job) for job in jobs}
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        main = Path(tmp) / "main.db"
        shutil.copy(template, main)
        with gradebook.open_gradebook(f"sqlite:///{main}") as gb:
            for i in range(rounds):
                a, s = job = jobs[i % len(jobs)]
                start = time.perf_counter()
                gradebook.import_submission(gb, a, s, sent[job])
                _ = gb.find_submission(a, s).score
                times.append(time.perf_counter() - start)
    return statistics.median(times)


def projection(per_core_s: float, efficiency: float, store_s: float) -> list[dict]:
    """Projected wall hours for each class size and machine count (see the assumptions)."""
    rows = []
    for learners in LEARNERS:
        core_seconds = learners * (5 * per_core_s + A06_SECONDS)
        notebooks = learners * 6
        for machines in MACHINES:
            cores = machines * CORES_PER_MACHINE
            grading = core_seconds / (cores * efficiency)
            storing = notebooks * store_s  # one instructor process merges every result
            rows.append(
                {
                    "learners": learners,
                    "machines": machines,
                    "cores": cores,
                    "grading_h": round(grading / 3600, 2),
                    "instructor_store_h": round(storing / 3600, 2),
                    "wall_h": round(max(grading, storing) / 3600, 2),
                }
            )
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=6)
    p.add_argument("--assignments", nargs="*", default=["01_attention", "02_multi_head"])
    p.add_argument("--rounds", type=int, default=2, help="interleaved rounds (median wall)")
    p.add_argument("--quick", action="store_true", help="1 round, 2 students, assignment 01")
    args = p.parse_args()
    if args.quick:
        args.students, args.assignments, args.rounds = 2, ["01_attention"], 1
    os.environ.pop("AFZ_GRADEBOOK_URL", None)
    assignments = Course(REPO).assignments(args.assignments)
    students = [f"student{i + 1}" for i in range(args.students)]
    each: dict[str, list[float]] = {}
    scores: dict[str, dict[str, tuple[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="afz-bench-") as tmp:
        template = Path(tmp) / "template"
        template.mkdir()
        for name in ("solutions", "exercises"):
            (template / name).symlink_to(REPO / name)
        tcourse = Course(template)
        release.register(tcourse, assignments, students, tcourse.gradebook_url)
        template_db = template / "gradebook.db"
        courses = {}
        walls: dict[str, list[float]] = {name: [] for name in RUNS}
        for rnd in range(args.rounds):  # A B C, C B A, ...: a noisy machine slows all alike
            for name in list(RUNS) if rnd % 2 == 0 else list(RUNS)[::-1]:
                scheduler, workers = RUNS[name]
                folder = Path(tmp) / f"round{rnd}-{name.replace(' ', '').replace(',', '-')}"
                course = make_class(folder, assignments, args.students, template_db)
                start = time.perf_counter()
                results = autograde(assignments, course, workers, scheduler=scheduler)
                walls[name].append(time.perf_counter() - start)
                each.setdefault(name, []).extend(r.seconds for r in results)
                scores[name] = {f"{x.assignment}/{x.student}": (x.status, x.score) for x in results}
                courses[name] = course
        wall = {name: statistics.median(ts) for name, ts in walls.items()}
        store_s = store_seconds(courses["dask, 2"], template_db, rounds=12)
    first = scores[SERIAL]
    for name, got in scores.items():
        if got != first:
            raise SystemExit(f"{name} disagrees with the serial run:\n{got}\n{first}")
    n = len(first)
    per_min = {k: 60 * n / t for k, t in wall.items()}
    overhead = {w: wall[f"dask, {w}"] / wall[SERIAL if w == 1 else DEFAULT] - 1 for w in (1, 2)}
    per_core_s = wall[SERIAL] / n
    cores = os.cpu_count() or 1
    best = max(w for w in (1, 2, 4) if w <= cores)
    efficiency = min(1.0, wall[SERIAL] / wall[f"dask, {best}"] / best)
    table = projection(per_core_s, efficiency, store_s)

    print()
    print(
        f"class: {args.students} students x {len(assignments)} assignment(s) = {n} notebooks, "
        f"{cores} CPU cores, {args.rounds} interleaved round(s), median wall"
    )
    print(f"{'run':<18} {'wall s':>8} {'notebooks per minute':>22} {'median s/notebook':>18}")
    for name in RUNS:
        print(
            f"{name:<18} {wall[name]:8.1f} {per_min[name]:22.1f} "
            f"{statistics.median(each[name]):18.2f}"
        )
    for w in (1, 2):
        base = SERIAL if w == 1 else DEFAULT
        extra = (wall[f"dask, {w}"] - wall[base]) / n
        print(
            f"overhead of Dask over threads, {w} worker(s): {100 * overhead[w]:+.1f} % "
            f"({extra:+.2f} s per notebook, cluster start included)"
        )
    print(
        f"instructor-side store per result (merge + score): {store_s:.3f} s "
        f"(at most {60 / store_s:.0f} notebooks per minute from one instructor process)"
    )
    print()
    print(
        f"projection: {per_core_s:.2f} s per notebook per core (01-05, from the serial run), "
        f"06 at {A06_SECONDS:.0f} s, parallel efficiency {efficiency:.2f} "
        f"(measured with {best} Dask workers), {CORES_PER_MACHINE} cores per machine"
    )
    print(f"{'learners':>8} {'machines':>8} {'grading h':>10} {'storing h':>10} {'wall h':>8}")
    for row in table:
        print(
            f"{row['learners']:>8} {row['machines']:>8} {row['grading_h']:>10.2f} "
            f"{row['instructor_store_h']:>10.2f} {row['wall_h']:>8.2f}"
        )
    slower = wall[DEFAULT] / min(wall[DEFAULT], wall["dask, 2"]) - 1
    met = slower <= TARGET_SLOWER
    print(
        f"target met: {'yes' if met else 'no'} (the default, threads with 2 workers, "
        f"{100 * slower:.1f} % slower per notebook than the faster executor with 2; at most "
        f"{100 * TARGET_SLOWER:.0f} %)"
    )
    out = REPO / "benchmarks" / "out" / "autograde_dask.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "students": args.students,
                "assignments": assignments,
                "notebooks": n,
                "cpu_count": cores,
                "rounds": args.rounds,
                "wall_s": {k: round(v, 2) for k, v in wall.items()},
                "wall_s_each_round": {k: [round(x, 2) for x in v] for k, v in walls.items()},
                "notebooks_per_minute": {k: round(v, 2) for k, v in per_min.items()},
                "median_s_per_notebook": {
                    k: round(statistics.median(v), 2) for k, v in each.items()
                },
                "dask_overhead": {str(w): round(v, 4) for w, v in overhead.items()},
                "default_slower_than_best": round(slower, 4),
                "store_s_per_result": round(store_s, 4),
                "projection_assumptions": {
                    "per_notebook_core_s_01_05": round(per_core_s, 3),
                    "a06_s": A06_SECONDS,
                    "efficiency": round(efficiency, 3),
                    "cores_per_machine": CORES_PER_MACHINE,
                },
                "projection": table,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
