"""One submission as a task: what the engine (``course.grading.engine``) carries to a worker
(a thread here, or a Dask worker), and what the worker does with it.

A ``Task`` carries ONE submission as bytes (every file of ``submitted/<student>/<assignment>/``,
``timestamp.txt`` included), not a path on a shared disk, and the instructor's grading settings
(``autograder.settings``, without the gradebook URL): the worker grades under them, whatever its
own environment says. The worker (``grade_task``) needs only a checkout of the course
(``solutions/`` for the hidden tests and the replay of the expected checks, ``exercises/``, the
``.venv``: the instructor's course root for a thread, a Dask worker's own checkout of the
repository) and the seed gradebook of the run (SQLite bytes with the assignments and students,
shipped once to every worker; a submission graded before travels with its own state,
``Task.prior``): it makes a temporary course root, writes the submission into it, grades it with
``course.grading.submission.grade_one`` (the same sandbox and diagnosis as a local run) and
returns a ``Graded``: the autograded files, the ``Result``, the log and the submission's fields
in its gradebook (``course.gradebook.export_submission``: plain values, a few kilobytes), which
the instructor's side writes into the main gradebook. A Dask worker finds ``grade_task``,
``Task`` and ``Graded`` by this module's name, ``course.grading.task``: its checkout must be of
the instructor's commit.
"""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder.settings import Settings
from course import gradebook
from course.config import AUTOGRADED, RELEASE, REPO, SOURCE, SUBMITTED, Course
from course.gradebook import Fields
from course.grading.submission import Result, grade_one

Files = dict[str, bytes]  # path relative to the folder (POSIX) -> content


class WorkerSetupError(RuntimeError):
    """The worker machine cannot grade (no sandbox, no checkout of the assignment): not the
    learner's fault; the instructor's side reports it and a rerun grades the submission again."""


def pack(folder: Path) -> Files:
    """Every regular file under ``folder`` (symbolic links are not followed), by relative path."""
    files: Files = {}
    if not folder.is_dir():
        return files
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            files[path.relative_to(folder).as_posix()] = path.read_bytes()
    return files


def unpack(files: Files, folder: Path) -> None:
    """Write ``files`` under ``folder``; a path that would leave it is refused."""
    for name, data in files.items():
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts:
            raise ValueError(f"refusing to write {name!r} outside {folder}")
        dest = folder.joinpath(*rel.parts)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)


def digest(files: Files) -> str:
    """sha256 of the files' names and contents: equal exactly when the submission is."""
    h = hashlib.sha256()
    for name in sorted(files):
        data = files[name]
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


@dataclass(frozen=True)
class Task:
    """One submission to grade on a worker."""

    assignment: str
    student: str
    files: Files
    sha256: str
    settings: Settings  # the instructor's: limits, sandbox (not the worker's environment)
    prior: Fields | None = None  # its fields in the main gradebook, if it has them already
    sources: str | None = None  # the course root of solutions/ and exercises/ (None: REPO)


@dataclass
class Graded:
    """What a worker sends back for one ``Task``."""

    result: Result
    autograded: Files
    log: str
    submission: Fields | None  # its fields in the worker's gradebook (None: not graded)
    worker: str  # host:pid that graded it (a thread: this process)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _check_worker(task: Task) -> Path:
    """The course root to grade ``task`` with; WorkerSetupError when this machine cannot
    grade it as asked."""
    sources = Path(task.sources) if task.sources else REPO
    if not (sources / SOURCE / task.assignment).is_dir():
        raise WorkerSetupError(
            f"worker {worker_name()} has no {sources / SOURCE / task.assignment}: check out the "
            "course repository (the same commit as the instructor's) on that machine"
        )
    if (
        task.settings.sandbox
    ):  # the full check (a sandbox started) ran on every worker before the run
        from autograder import sandbox

        problem = sandbox.check_quick()
        if problem:
            raise WorkerSetupError(
                f"worker {worker_name()} cannot grade in the sandbox: {problem}; install "
                "bubblewrap there (`make sandbox-deps`) or restart the worker without it"
            )
    return sources


def grade_task(task: Task, seed: bytes) -> Graded:
    """Grade ``task`` in a temporary course root on this worker against a copy of ``seed``."""

    sources = _check_worker(task)
    with tempfile.TemporaryDirectory(prefix="afz-task-") as tmp:
        root = Path(tmp)
        for folder in (SOURCE, RELEASE):
            (root / folder).symlink_to(sources / folder)
        unpack(task.files, root / SUBMITTED / task.student / task.assignment)
        db = root / "gradebook.db"
        db.write_bytes(seed)
        if task.prior is not None:
            with gradebook.open_gradebook(f"sqlite:///{db}") as gb:
                gradebook.import_submission(gb, task.assignment, task.student, task.prior)
        course = Course(root, task.settings)
        job = (task.assignment, task.student)
        result = grade_one(job, course, f"sqlite:///{db}")
        result.sha256 = task.sha256
        log_path = course.reports / "logs" / task.assignment / f"{task.student}.log"
        log = log_path.read_text(errors="replace") if log_path.exists() else ""
        with gradebook.open_gradebook(f"sqlite:///{db}") as gb:
            submission = gradebook.export_submission(gb, task.assignment, task.student)
        return Graded(
            result=result,
            autograded=pack(root / AUTOGRADED / task.student / task.assignment),
            log=log,
            submission=submission,
            worker=worker_name(),
        )
