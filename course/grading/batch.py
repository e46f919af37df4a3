"""A class graded as one batch (``python -m course autograde``): what to grade, what was graded
already, and the results printed; every submission graded in the OS sandbox by the one engine.

Each submission is graded by its own ``nbgrader autograde <assignment> --student <id>``
process, so a crash is contained to one student. The engine (``course.grading.engine``) runs
those processes as tasks on threads of this process (the default) or on a Dask cluster
(``--scheduler``), and stores each result as it arrives.

reports/autograde.json records each result with the sha256 of the submission's files: with
``force=False`` a submission whose result is recorded for the same bytes is skipped (how a
run stopped by Ctrl-C resumes).
"""

from __future__ import annotations

import json
import sys
import time

from course import gradebook
from course.config import Course, CourseError
from course.grading import engine
from course.grading.submission import REGRADE_OUTCOMES, Result, grader_fingerprint
from course.grading.task import digest, pack
from course.release import register
from course.reports import write_summary

NO_SANDBOX_WARNING = (
    "WARNING: grading WITHOUT the sandbox (--no-sandbox). Every submission runs with the "
    "grader's own rights: it can read solutions/, the hidden tests and the gradebook, change "
    "the gradebook, the checking code and other learners' submissions, reach the network and "
    "stop the batch. Use it only for notebooks you trust (your own solutions)."
)


def replay_solutions(course: Course, names: list[str]) -> None:
    """The solution's value of every check, computed (or read from the replay cache) before
    any learner's notebook runs: a solution that fails its own test stops the batch here."""
    from autograder import replay

    for a in names:
        for nb in course.notebook_names(a):
            try:
                replay.expected_checks(course.solutions / a / nb)
            except replay.ReplayError as err:
                raise CourseError(f"cannot grade {a}: {err}") from None


def check_sandbox(sandbox: bool) -> None:
    """Refuse to grade without a working sandbox, unless the instructor said --no-sandbox."""
    from autograder import sandbox as sb

    if not sandbox:
        print(NO_SANDBOX_WARNING, file=sys.stderr)
        return
    problem = sb.check()
    if problem:
        raise CourseError(
            f"cannot grade in the sandbox: {problem}.\nGrading untrusted notebooks without it "
            "is unsafe; to grade anyway, pass --no-sandbox (see `python -m course autograde "
            "--help`)."
        )
    if sb.cgroup_version() is None:
        print(
            "note: no writable cgroup (v1 or v2) on this machine: the memory limit applies to "
            "each process of a sandbox, not to all of them together, and there is no process "
            "count limit but RLIMIT_NPROC",
            file=sys.stderr,
        )


def autograde(
    names: list[str] | None,
    course: Course,
    workers: int = 2,
    students: list[str] | None = None,
    *,
    scheduler: str | None = None,
    force: bool = True,
) -> list[Result]:
    """Autograde submitted/ (or only ``students``), ``workers`` submissions at a time.

    Without ``scheduler`` the work runs on threads of this process; with one, on the Dask
    scheduler there (``tcp://host:port`` or a scheduler file), or with ``"local"`` on a Dask
    LocalCluster of ``workers`` processes (``course.grading.engine``). ``force=False`` skips the
    submissions already graded with the same bytes (reports/autograde.json). Every notebook runs
    in the OS sandbox (``autograder.sandbox``) under the course's settings (``course.settings``:
    they travel with each task, so a remote worker grades under them too); the setting
    ``sandbox = false`` (``--no-sandbox``) runs learners' code with the grader's own rights.
    Returns the results of this run.
    """
    sandbox = course.settings.sandbox
    remote = scheduler not in (None, engine.LOCAL_CLUSTER)
    names = course.assignments(names)
    if remote and not sandbox:
        print(NO_SANDBOX_WARNING, file=sys.stderr)
    elif not remote:  # a remote cluster's workers are checked by course.grading.engine
        check_sandbox(sandbox)
    submitted = course.submitted
    all_students = (
        sorted(p.name for p in submitted.iterdir() if p.is_dir()) if submitted.is_dir() else []
    )
    students = students or all_students
    jobs = [(a, s) for a in names for s in students if (submitted / s / a).is_dir()]
    if not jobs:
        raise CourseError(
            f"nothing to grade: no submitted/<student>/<assignment>/ in {course.root}"
        )
    if not force:
        jobs = _skip_graded(course, jobs)
        if not jobs:
            print("nothing left to grade (--force grades again)")
            write_summary(course)
            return []
    url = course.gradebook_url

    def prepare() -> None:
        replay_solutions(course, sorted({a for a, _ in jobs}))
        register(course, names, sorted({s for _, s in jobs}), url)

    workers = max(1, min(workers, len(jobs)))
    start = time.perf_counter()
    results = engine.grade(course, jobs, url, workers, scheduler, prepare)
    elapsed = time.perf_counter() - start
    results.sort(key=lambda r: (r.assignment, r.student))
    for r in results:
        extra = f" ({'; '.join(r.notes)})" if r.notes else ""
        print(
            f"{r.assignment:<24} {r.student:<24} {r.score:5.1f}/{r.max_score:<5.1f} "
            f"{r.seconds:6.1f}s  {r.status}{extra}"
        )
    where = f"on the Dask cluster {scheduler}" if remote else f"with {workers} worker(s)"
    if scheduler == engine.LOCAL_CLUSTER:
        where += " (Dask LocalCluster)"
    print(f"autograded {len(results)} submission(s) {where} in {elapsed:.1f} s")
    write_summary(course)
    return results


def _sha256(course: Course, job: gradebook.Job) -> str:
    a, s = job
    return digest(pack(course.submitted / s / a))


def _skip_graded(course: Course, jobs: list[gradebook.Job]) -> list[gradebook.Job]:
    """``jobs`` without those recorded in reports/autograde.json for the same submission
    bytes and the same grader (the tests, ``helpers``, ``autograder``), and not a failure of
    the grader; prints what is skipped."""
    path = course.reports / "autograde.json"
    recorded = {
        (o["assignment"], o["student"]): o
        for o in (json.loads(path.read_text()) if path.exists() else [])
    }
    left, skipped = [], []
    graders = {a: grader_fingerprint(course, a) for a in {a for a, _ in jobs}}
    for job in jobs:
        old = recorded.get(job)
        if (
            old
            and old.get("sha256")
            and old.get("outcome") not in REGRADE_OUTCOMES
            and old.get("grader") == graders[job[0]]
            and old["sha256"] == _sha256(course, job)
        ):
            skipped.append(job)
        else:
            left.append(job)
    if skipped:
        shown = ", ".join(f"{a}/{s}" for a, s in skipped[:20])
        more = f" and {len(skipped) - 20} more" if len(skipped) > 20 else ""
        print(
            f"skipped {len(skipped)} submission(s) already graded with the same files and "
            "tests: "
            f"{shown}{more} (--force grades them again)"
        )
    return left
