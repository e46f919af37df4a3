"""Autograding on a Dask cluster (``dask.distributed``): the instructor's side.

``grade`` connects to a scheduler (``tcp://host:port`` or a scheduler file), or starts a
``LocalCluster`` of worker processes (one thread each) on this machine, ships the seed
gradebook (the assignments and students, no grades) once to every worker, submits one
``course.tasks.Task`` per submission and, AS EACH RESULT ARRIVES, writes it here: the
autograded notebooks, the log, the submission's fields in the gradebook (through nbgrader's
API, ``course.gradebook.import_submission``, one connection for the run) and
reports/autograde.json, last (that record, with the sha256 of
the submission, is what a resumed run skips). This machine alone writes the gradebook; workers
grade against their own copy.

Faults: a worker that dies has its tasks rescheduled by Dask; a result is stored once per
(assignment, student), whichever copy arrives. A task that fails on a worker (no sandbox there,
...) is reported as an error (graded 0, as the local run grades a submission its grader could
not grade) and graded again by the next run. Ctrl-C keeps every result already received; the
next run grades only what is left.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from course import gradebook
from course.config import Course, CourseError
from course.grading import Result, write_report
from course.release import register
from course.tasks import Graded, Task, digest, grade_task, pack, unpack

if TYPE_CHECKING:
    from distributed import Client
    from nbgrader.api import Gradebook


WORKER_FAILURE = "grader error"


@contextmanager
def connect(scheduler: str | None, workers: int) -> Iterator[Client]:
    """A Client of the scheduler at ``scheduler`` (an address, or a scheduler file), or of a
    new LocalCluster of ``workers`` processes with one thread each."""
    from distributed import Client, LocalCluster

    if scheduler is None:
        with (
            LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                memory_limit=0,  # the sandbox limits each kernel; the worker itself is small
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client
        return
    try:
        if "://" in scheduler:
            client = Client(scheduler, timeout="30s")
        else:
            client = Client(scheduler_file=scheduler, timeout="30s")
    except (OSError, TimeoutError, ValueError) as err:
        raise CourseError(
            f"cannot reach the Dask scheduler {scheduler}: {err}\nStart one with `dask "
            "scheduler` (see the instructor guide) and give its address tcp://HOST:PORT or its "
            "--scheduler-file."
        ) from None
    with client:
        yield client


def seed_gradebook(course: Course, url: str, names: list[str], jobs: list[gradebook.Job]) -> bytes:
    """The gradebook every worker starts from, as SQLite bytes: the assignments (released
    from solutions/, with the main gradebook's due dates) and the students of ``jobs``, and
    nothing graded: its size does not grow with the class's grades, which never travel."""
    with tempfile.TemporaryDirectory(prefix="afz-seed-") as tmp:
        seed = Path(tmp) / "seed.db"
        seed_url = f"sqlite:///{seed}"
        register(course, names, sorted({s for _, s in jobs}), seed_url)
        with gradebook.open_gradebook(url) as main_gb, gradebook.open_gradebook(seed_url) as gb:
            for a in names:  # the due date, which late penalties and extensions need
                gb.update_or_create_assignment(a, duedate=main_gb.find_assignment(a).duedate)
        return seed.read_bytes()


def prior_states(url: str, jobs: list[gradebook.Job]) -> dict[gradebook.Job, gradebook.Fields]:
    """The fields of each submission of ``jobs`` the main gradebook already has (an extension,
    manual grades, comments, flags an instructor set; a regrade), read over one connection:
    the worker writes them into its copy of the seed before grading, so that the result is
    what grading in the main gradebook gives. Jobs without a submission are not listed."""
    out: dict[gradebook.Job, gradebook.Fields] = {}
    with gradebook.open_gradebook(url) as gb:
        for a in sorted({a for a, _ in jobs} & {x.name for x in gb.assignments}):
            wanted = {s for b, s in jobs if b == a}
            for sub in gb.find_assignment(a).submissions:
                if sub.student.id in wanted:
                    data = gradebook.export_submission(gb, a, sub.student.id)
                    if data is not None:
                        out[(a, sub.student.id)] = data
    return out


def check_workers(client: Client, sandbox: bool) -> None:
    """Refuse to start when a worker cannot sandbox (unless --no-sandbox), or none is there."""
    if not client.scheduler_info().get("workers"):
        try:
            client.wait_for_workers(1, timeout=60)
        except TimeoutError:
            raise CourseError(
                "no Dask worker joined the scheduler in 60 s: start some with "
                "`dask worker ADDRESS --nthreads 1` on the grading machines"
            ) from None
    if not sandbox:
        return
    from autograder.sandbox import check

    problems = {w: p for w, p in client.run(check).items() if p}
    if problems:
        raise CourseError(
            "these Dask workers cannot grade in the sandbox:\n"
            + "\n".join(f"  {w}: {p}" for w, p in sorted(problems.items()))
            + "\nInstall bubblewrap there (`make sandbox-deps`) and restart them."
        )


def store(course: Course, main: Gradebook, graded: Graded) -> Result:
    """Write one worker's result on this side, into the open main gradebook ``main``;
    reports/autograde.json last."""
    r = graded.result
    dest = course.autograded / r.student / r.assignment
    if dest.exists():
        shutil.rmtree(dest)
    unpack(graded.autograded, dest)
    log = course.reports / "logs" / r.assignment / f"{r.student}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(graded.log)
    score = None
    if graded.submission is not None:
        gradebook.import_submission(main, r.assignment, r.student, graded.submission)
        score = main.find_submission(r.assignment, r.student).score
    r.max_score = main.find_assignment(r.assignment).max_score
    r.score = score if r.status == "ok" and score is not None else 0.0
    r.worker = graded.worker
    write_report(course, [r])
    return r


def failed(course: Course, task: Task, error: BaseException) -> Result:
    """The record of a task that failed on the worker (not the learner's doing)."""
    r = Result(
        task.student,
        task.assignment,
        f"error: grading failed on the worker: {type(error).__name__}: {error}",
        outcome=WORKER_FAILURE,
        sha256=task.sha256,
    )
    write_report(course, [r])
    return r


def grade(
    course: Course,
    jobs: list[gradebook.Job],
    url: str,
    workers: int,
    sandbox: bool,
    scheduler: str | None,
    prepare: Callable[[], None] = lambda: None,
) -> list[Result]:
    """Grade ``jobs`` on the cluster; each result is stored as it arrives. ``prepare`` (the
    solutions replayed, the gradebook registered) runs once the workers are checked."""
    from distributed import as_completed
    from tqdm import tqdm

    timeout = float(os.environ.get("AFZ_STUDENT_TIMEOUT", "1800"))
    names = sorted({a for a, _ in jobs})
    files = {(a, s): pack(course.submitted / s / a) for a, s in jobs}
    results: dict[gradebook.Job, Result] = {}
    with connect(scheduler, workers) as client:
        check_workers(client, sandbox)
        prepare()
        seed_bytes = seed_gradebook(course, url, names, jobs)
        priors = prior_states(url, jobs)
        tasks = {
            job: Task(*job, files[job], digest(files[job]), timeout, sandbox, priors.get(job))
            for job in jobs
        }
        seed = client.scatter(seed_bytes, broadcast=True)
        futures = {
            client.submit(grade_task, t, seed, key=f"grade-{job[0]}-{job[1]}-{t.sha256[:16]}"): job
            for job, t in tasks.items()
        }
        bar = tqdm(total=len(futures), unit="notebook", desc="autograde", disable=None)
        errors = 0
        try:
            with gradebook.open_gradebook(url) as main:  # one connection for the whole run
                for future in as_completed(futures):
                    job = futures[future]
                    if job in results:  # a recomputed copy: stored already
                        continue
                    if future.status == "error":
                        results[job] = failed(course, tasks[job], future.exception())
                        errors += 1
                        bar.write(f"{job[0]}/{job[1]}: {results[job].status}", file=sys.stderr)
                    else:  # Ctrl-C waits until this result is stored whole (gradebook, report)
                        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
                        try:
                            results[job] = store(course, main, future.result())
                        finally:
                            signal.pthread_sigmask(signal.SIG_SETMASK, held)
                    running = sum(len(keys) for keys in client.processing().values())
                    left = len(futures) - len(results)
                    bar.set_postfix(
                        done=len(results), failed=errors, running=running, left=left, refresh=False
                    )
                    bar.update(1)
        except KeyboardInterrupt:
            bar.close()
            client.cancel(list(futures))
            left = len(futures) - len(results)
            print(
                f"\ninterrupted: {len(results)} submission(s) graded and saved, {left} left; "
                "run the same command again to grade only those",
                file=sys.stderr,
            )
            raise
        bar.close()
    return list(results.values())
