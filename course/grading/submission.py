"""One submission graded: ``grade_one`` runs its ``nbgrader autograde`` and says what happened
(a ``Result``); ``write_report`` records results in reports/autograde.json with the
fingerprint of the grader that gave them. The one engine (``course.grading.engine``) grades
every submission through this module, on a worker thread or a Dask worker
(``course.grading.task``).
"""

from __future__ import annotations

import functools
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder.fingerprint import fingerprint
from course.config import Course
from course.diagnose import diagnose, outcome
from course.gradebook import Job
from course.grading.nbgrader_command import Run, nbgrader_run

KERNEL_START_ATTEMPTS = 3


@dataclass
class Result:
    """One graded submission, as reports/autograde.json lists it."""

    student: str
    assignment: str
    status: str  # "ok", or "error: <why>" (graded 0)
    score: float = 0.0
    max_score: float = 0.0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    outcome: str = "graded"  # graded, timed out, killed for memory, ... (diagnose.OUTCOMES)
    sha256: str = ""  # of the submission's files (course.grading.task.digest)
    grader: str = ""  # of what grades it: the assignment's source, helpers, autograder
    worker: str = ""  # host:pid of the Dask worker that graded it ("" for the local pool)


def grade_one(job: Job, course: Course, url: str) -> Result:
    """Grade one submission against the gradebook ``url`` under the course's settings (at
    most ``notebook_timeout`` seconds); its log goes to reports/logs/."""
    a, s = job
    start = time.perf_counter()
    log = course.reports / "logs" / a / f"{s}.log"
    timeout = course.settings.notebook_timeout
    run = Run(1, "")
    for _attempt in range(KERNEL_START_ATTEMPTS):
        run = nbgrader_run(["autograde", a, "--student", s, "--force"], course, url, log, timeout)
        # A kernel that dies before answering kernel_info never ran learner code: with kernels
        # started side by side, jupyter_client's free-port pick can race ("Address already in
        # use"). That is the grader's fault, not the learner's, so try again.
        started = run.outcome.error != "kernel start" or run.outcome.sandbox_failure
        if run.rc == 0 or started:
            break
    status, notes = diagnose(course, run, course.submitted / s / a, course.autograded / s / a)
    seconds = round(time.perf_counter() - start, 2)
    return Result(s, a, status, seconds=seconds, notes=notes, outcome=outcome(status))


# Outcomes that say nothing about the learner's notebook: such a result is graded again.
REGRADE_OUTCOMES = ("grader error", "sandbox failed")


def grader_fingerprint(course: Course, assignment: str) -> str:
    """A hash of everything that decides a grade besides the submission: the assignment's
    source notebooks (tests, hidden tests, points), ``helpers``, ``checks``, ``autograder``,
    ``nbgrader_config.py`` and the settings that limit a grading (a longer time limit may
    turn a 0 into a grade). A result recorded under another fingerprint is graded again."""
    return _grader_fingerprint(course.solutions, assignment, course.settings.grading_key())


@functools.cache  # hashed once per process and assignment: one run grades with one grader
def _grader_fingerprint(solutions: Path, assignment: str, limits: str) -> str:
    sources = sorted((solutions / assignment).rglob("*.ipynb"))
    return fingerprint(f"grader {limits}", files=sources)


def write_report(course: Course, results: list[Result]) -> None:
    """reports/autograde.json: these results, and the earlier ones of other submissions,
    one entry per (assignment, student); replaced atomically (an interruption leaves the
    old file or the new one)."""
    path = course.reports / "autograde.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    old = json.loads(path.read_text()) if path.exists() else []
    keep = {(r.assignment, r.student) for r in results}
    graders = {a: grader_fingerprint(course, a) for a in {r.assignment for r in results}}
    for r in results:
        r.grader = r.grader or graders[r.assignment]
    merged = [o for o in old if (o["assignment"], o["student"]) not in keep]
    merged += [asdict(r) for r in results]
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(merged, indent=1, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
