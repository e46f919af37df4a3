"""The one grading engine: submissions out as tasks, each result stored as it arrives.

``grade`` turns every submission into a ``course.grading.task.Task`` (its files as bytes, the
instructor's limits, its fields in the main gradebook if it has some) and hands the tasks to
an executor; ``grade_task`` grades each in a temporary course root against a copy of the seed
gradebook and sends back a ``Graded``. The seed of a cluster of other machines holds the
assignments and students and no grades (it travels); on this machine (threads, or a Dask
LocalCluster) it is the main SQLite gradebook itself, copied. AS EACH
RESULT ARRIVES, this process writes it: the autograded notebooks, the log, the submission's
fields in the main gradebook (nbgrader's API, ``course.gradebook.import_submission``, one
connection for the run) and reports/autograde.json, last (that record, with the sha256 of the
submission, is what a resumed run skips). Only this process writes the main gradebook.

Two executors, one protocol (``submit`` / ``as_completed``, as ``concurrent.futures`` and a
Dask ``Client`` share it):

* ``Threads`` (the default, one machine): threads of this process, each running one
  ``nbgrader autograde`` at a time;
* ``Dask`` (``--scheduler ADDRESS``, or ``local`` for a LocalCluster of this machine): the
  workers of a cluster that may span machines; each needs its own checkout of the course.

Faults: a task that fails (no sandbox on a worker, ...) is reported as an error (graded 0) and
graded again by the next run; on Dask a worker that dies has its tasks rescheduled, and a
result is stored once per (assignment, student), whichever copy arrives. Ctrl-C keeps every
result already stored (one being stored is finished first) and cancels the rest; the next run
grades only what is left.
"""

from __future__ import annotations

import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import as_completed as futures_completed
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from course import gradebook
from course.config import Course, CourseError, sqlite_path
from course.grading.submission import Result, write_report
from course.grading.task import Graded, Task, digest, grade_task, pack, unpack
from course.release import register

if TYPE_CHECKING:
    from distributed import Client
    from nbgrader.api import Gradebook


WORKER_FAILURE = "grader error"
LOCAL_CLUSTER = "local"  # --scheduler local: a Dask LocalCluster of this machine


class Executor(Protocol):
    """Where tasks run: ``submit`` a function, ``as_completed`` its futures."""

    remote: bool  # the workers use their own checkout of the course, not the instructor's

    def share(self, data: bytes) -> Any: ...
    def submit(self, fn: Callable[..., Graded], *args: Any, key: str) -> Any: ...
    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]: ...
    def cancel(self, futures: list[Any]) -> None: ...
    def running(self) -> int: ...


class Threads:
    """``workers`` threads of this process (``concurrent.futures``)."""

    remote = False

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self.pool = pool
        self.futures: list[Future[Graded]] = []

    def share(self, data: bytes) -> Any:
        return data

    def submit(self, fn: Callable[..., Graded], *args: Any, key: str) -> Future[Graded]:
        future = self.pool.submit(fn, *args)
        self.futures.append(future)
        return future

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        return futures_completed(list(futures))

    def cancel(self, futures: list[Any]) -> None:
        for future in futures:
            future.cancel()

    def running(self) -> int:
        return sum(f.running() for f in self.futures)


class Dask:
    """The workers of a Dask cluster (``distributed.Client``)."""

    def __init__(self, client: Client, remote: bool) -> None:
        self.client = client
        self.remote = remote

    def share(self, data: bytes) -> Any:
        return self.client.scatter(data, broadcast=True)

    def submit(self, fn: Callable[..., Graded], *args: Any, key: str) -> Any:
        return self.client.submit(fn, *args, key=key)

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        from distributed import as_completed

        return iter(as_completed(list(futures)))

    def cancel(self, futures: list[Any]) -> None:
        self.client.cancel(futures)

    def running(self) -> int:
        return sum(len(keys) for keys in self.client.processing().values())


@contextmanager
def executor(scheduler: str | None, workers: int, sandbox: bool) -> Iterator[Executor]:
    """Threads of this process (``scheduler`` None), a Dask LocalCluster of ``workers``
    processes (``"local"``), or the Dask scheduler at ``scheduler`` (an address, or a
    scheduler file); a cluster's workers are checked first (``check_workers``)."""
    if scheduler is None:
        pool = ThreadPoolExecutor(workers, thread_name_prefix="afz-grade")
        try:
            yield Threads(pool)
        finally:  # after Ctrl-C, what runs is left to finish on its own (its result is lost)
            pool.shutdown(wait=sys.exc_info()[0] is None, cancel_futures=True)
        return
    with connect(None if scheduler == LOCAL_CLUSTER else scheduler, workers) as client:
        check_workers(client, sandbox)
        yield Dask(client, remote=scheduler != LOCAL_CLUSTER)


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


@contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Ctrl-C pressed while the block runs is raised when it ends. Not a signal mask: another
    thread of this process (a Dask client's, an executor's) may take the signal, and Python
    then raises it in the main thread all the same, in the middle of the block. Called from
    another thread (``grade`` run in a thread of the caller's), it does nothing: Python raises
    Ctrl-C in the main thread only, so the block cannot be cut."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, _frame: pressed.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt


def grade(
    course: Course,
    jobs: list[gradebook.Job],
    url: str,
    workers: int,
    scheduler: str | None,
    prepare: Callable[[], None] = lambda: None,
) -> list[Result]:
    """Grade ``jobs`` on the executor ``scheduler`` names, under the course's settings (each
    task carries them); each result is stored as it arrives. ``prepare`` (the solutions
    replayed, the gradebook registered) runs once the executor is up (and a cluster's workers
    checked)."""
    from tqdm import tqdm

    names = sorted({a for a, _ in jobs})
    files = {(a, s): pack(course.submitted / s / a) for a, s in jobs}
    results: dict[gradebook.Job, Result] = {}
    settings = course.settings.for_workers()
    with executor(scheduler, workers, settings.sandbox) as run:
        prepare()
        main_file = sqlite_path(url)
        if run.remote or main_file is None:
            seed_bytes = seed_gradebook(course, url, names, jobs)
        else:  # threads of this process: the main gradebook, registered by prepare(), as seed
            seed_bytes = main_file.read_bytes()
        priors = prior_states(url, jobs)
        sources = None if run.remote else str(course.root)
        tasks = {
            job: Task(*job, files[job], digest(files[job]), settings, priors.get(job), sources)
            for job in jobs
        }
        seed = run.share(seed_bytes)
        futures = {
            run.submit(grade_task, t, seed, key=f"grade-{job[0]}-{job[1]}-{t.sha256[:16]}"): job
            for job, t in tasks.items()
        }
        bar = tqdm(total=len(futures), unit="notebook", desc="autograde", disable=None)
        errors = 0
        try:
            with gradebook.open_gradebook(url) as main:  # one connection for the whole run
                for future in run.as_completed(futures):
                    job = futures[future]
                    if job in results:  # a recomputed copy: stored already
                        continue
                    error = future.exception()
                    if error is not None:
                        results[job] = failed(course, tasks[job], error)
                        errors += 1
                        bar.write(f"{job[0]}/{job[1]}: {results[job].status}", file=sys.stderr)
                    else:  # Ctrl-C waits until this result is stored whole (gradebook, report)
                        with ctrl_c_held():
                            results[job] = store(course, main, future.result())
                    left = len(futures) - len(results)
                    bar.set_postfix(
                        done=len(results),
                        failed=errors,
                        running=run.running(),
                        left=left,
                        refresh=False,
                    )
                    bar.update(1)
        except KeyboardInterrupt:
            bar.close()
            run.cancel(list(futures))
            left = len(futures) - len(results)
            print(
                f"\ninterrupted: {len(results)} submission(s) graded and saved, {left} left; "
                "run the same command again to grade only those",
                file=sys.stderr,
            )
            raise
        bar.close()
    return list(results.values())
