"""Autograding on a real Dask cluster: ``dask scheduler`` and two ``dask worker`` processes on
127.0.0.1, started with Dask's own command line from the .venv (``course.grading.engine``).

* a class of 12 submissions of assignment 01, adversarial ones among them
  (tests/support/submissions.py builds them), graded on the cluster while one worker process
  is killed in the middle of a task: the same grades, notes and autograded files as a local
  run of the same class, each submission exactly once in reports/autograde.json and in the
  gradebook, and nothing of the killed worker's grading left running (its nbgrader, kernel
  launcher and sandbox);
* Ctrl-C (SIGINT) of ``python -m course autograde``, on threads (the default) and with
  ``--scheduler``: what was graded is kept, the gradebook and reports/autograde.json agree,
  and a rerun grades only the rest;
* a worker that cannot sandbox (no bwrap on its PATH): the run stops with a clear error that
  names the worker;
* a worker started with other limits in its environment grades under the instructor's
  settings, which travel in each task (``autograder.settings``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from support import REPO
from support.submissions import (
    A1,
    FAKE_CHECKS,
    adversaries,
    insert_cell,
    make_root,
    read,
    submit,
)

from autograder import sandbox
from autograder.settings import Settings
from course import gradebook
from course.config import Course
from course.grading.batch import autograde
from course.grading.submission import Result

BIN = Path(sys.executable).parent
# 12 submissions: three controls and nine that try to break the grader or the grading.
CLASS = [
    "good",
    "partial",
    "own_way",
    "exit",
    "bomb",
    "deleted",
    "edited",
    "rawjson",
    "reference",
    "patcher",
    "sysexit",
    "fakepkg",
]
STAMP = "2026-02-28 12:00:00.000000 UTC"
NB1 = "attention.ipynb"


def write_class(root: Path, students: list[str]) -> Course:
    """``students`` (names of ``adversaries()``) submit assignment 01 in the course ``root``."""
    make_root(root)
    every = adversaries()
    for s in students:
        submit(root, s, A1, every[s][0])
    if "fakepkg" in students:  # its own helpers package beside the notebook, as a zip may
        fake = root / "submitted" / "fakepkg" / A1 / "helpers"
        fake.mkdir()
        (fake / "__init__.py").write_text("")
        (fake / "checks.py").write_text(FAKE_CHECKS)
    (root / "submitted" / "good" / A1 / "timestamp.txt").write_text(STAMP)
    return Course(root)


def _env(tmp: Path, path: str | None = None, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("AFZ_GRADEBOOK_URL", None)
    env["PATH"] = path or f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(REPO)
    env["TMPDIR"] = str(tmp)  # what a worker's graders leave is found by this path
    return {**env, **(extra or {})}


class Cluster:
    """A scheduler and its workers, real processes; ``stop`` ends them and what they left."""

    def __init__(
        self, folder: Path, workers: int, path: str | None = None, env: dict | None = None
    ) -> None:
        self.folder = folder
        self.tmp = folder / "tmp"
        self.tmp.mkdir(parents=True)
        self.file = folder / "scheduler.json"
        env = _env(self.tmp, path, env)
        self.procs = [
            subprocess.Popen(
                [BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port", "0"]
                + ["--no-dashboard", "--scheduler-file", self.file],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=(folder / "scheduler.log").open("w"),
            )
        ]
        deadline = time.monotonic() + 60
        while not self.file.exists():
            assert time.monotonic() < deadline, (folder / "scheduler.log").read_text()
            time.sleep(0.2)
        for w in range(workers):
            self.procs.append(
                subprocess.Popen(
                    [BIN / "dask", "worker", "--scheduler-file", self.file]
                    + ["--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=(folder / f"worker{w}.log").open("w"),
                )
            )
        from distributed import Client

        self.client = Client(scheduler_file=str(self.file), timeout="60s")
        self.client.wait_for_workers(workers, timeout=120)

    def stop(self) -> None:
        self.client.close()
        for proc in reversed(self.procs):
            proc.terminate()
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        # nbgrader runs a killed worker left behind (their own session, so not its children)
        for p in psutil.process_iter(["pid", "cmdline"]):
            if any(str(self.tmp) in arg for arg in p.info["cmdline"] or []):
                try:
                    os.killpg(p.info["pid"], signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("dask_cluster"), workers=2)
    yield c
    c.stop()


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> tuple[Course, dict[str, Result]]:
    """The class graded without Dask, by this one process (its pool of 2 threads)."""
    os.environ.pop("AFZ_GRADEBOOK_URL", None)
    course = write_class(tmp_path_factory.mktemp("local_class"), CLASS)
    return course, {r.student: r for r in autograde([A1], course, workers=2)}


def files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def _name(p: psutil.Process) -> str:
    try:
        return p.name()
    except psutil.Error:  # gone meanwhile
        return ""


def kill_a_busy_worker(
    client, nannies: list[subprocess.Popen], done: threading.Event
) -> tuple[int, list[psutil.Process]]:
    """SIGKILL the process of a worker once a grading of its runs in the sandbox; (its pid,
    the processes under it at that moment: its nbgrader server, the nbgrader command, the
    kernel's launcher, the sandbox)."""
    ours = {c.pid for n in nannies for c in psutil.Process(n.pid).children()}
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not done.is_set():
        busy = [w for w, keys in client.processing().items() if keys]
        if busy:
            pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
            assert pid in ours, f"worker {busy[0]} (pid {pid}) is not one of this test's"
            until = time.monotonic() + 60
            while time.monotonic() < until:  # until its grading runs in the sandbox
                tree = psutil.Process(pid).children(recursive=True)
                if any(_name(p) == "bwrap" for p in tree):
                    os.kill(pid, signal.SIGKILL)
                    return pid, tree
                time.sleep(0.05)
        time.sleep(0.1)
    raise AssertionError("no worker ever had a task to kill")


def submissions_in_gradebook(course: Course) -> list[str]:
    with gradebook.open_gradebook(course.gradebook_url) as gb:
        return sorted(s.student.id for s in gb.find_assignment(A1).submissions)


def report_entries(course: Course) -> list[tuple[str, str]]:
    path = course.reports / "autograde.json"
    return [(o["assignment"], o["student"]) for o in json.loads(path.read_text())]


def test_cluster_grades_like_a_local_run_despite_a_killed_worker(cluster, local_run, tmp_path):
    course = write_class(tmp_path / "class", CLASS)
    out: dict[str, list[Result]] = {}
    done = threading.Event()

    def run() -> None:
        try:
            out["results"] = autograde([A1], course, scheduler=str(cluster.file), force=False)
        finally:
            done.set()

    thread = threading.Thread(target=run)
    thread.start()
    killed, tree = kill_a_busy_worker(cluster.client, cluster.procs[1:], done)
    assert len(tree) >= 2, f"the worker was not grading when killed: {tree}"  # server, nbgrader
    gone, alive = psutil.wait_procs(tree, timeout=30)
    assert alive == [], f"the killed worker left these running: {alive}"

    # ... nor a sandbox cgroup (named after its kernel launcher's pid), once the launcher has
    # removed it (it waits for the killed processes to be reaped: seconds on a loaded machine)
    def left() -> list[Path]:
        groups = Path("/sys/fs/cgroup").rglob(f"{sandbox.GROUP}/k*")
        return [g for g in groups if any(g.name.startswith(f"k{p.pid}-") for p in tree)]

    deadline = time.monotonic() + 30
    while left() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert left() == [], left()
    thread.join(timeout=900)
    assert not thread.is_alive(), "the cluster run did not finish"
    results = {r.student: r for r in out["results"]}
    assert sorted(results) == sorted(CLASS)
    assert not psutil.pid_exists(killed) or psutil.Process(killed).status() == "zombie"
    assert all(not r.worker.endswith(f":{killed}") for r in results.values()), (
        "a result came from the killed worker"
    )
    local, local_results = local_run
    for s in CLASS:
        ours, theirs = results[s], local_results[s]
        assert (ours.status, ours.score, ours.max_score, ours.outcome, ours.notes) == (
            theirs.status,
            theirs.score,
            theirs.max_score,
            theirs.outcome,
            theirs.notes,
        ), s
        assert files(course.autograded / s / A1) == files(local.autograded / s / A1), s
        assert ours.sha256 == theirs.sha256, s
    assert results["good"].score == results["good"].max_score == 22
    assert results["partial"].score < 22 and results["patcher"].score < 22
    assert sorted(report_entries(course)) == sorted((A1, s) for s in CLASS)
    assert submissions_in_gradebook(course) == sorted(CLASS)
    stamped = course.autograded / "good" / A1 / "timestamp.txt"
    assert stamped.read_text() == STAMP
    assert (course.autograded / "fakepkg" / A1 / "helpers" / "checks.py").is_file()


SIGINT_CLASS = ["good", "partial", "own_way", "edited", "deleted"]


def _as_from_a_terminal() -> None:
    """Ctrl-C as an instructor's terminal delivers it: a test run started in the background
    (``nohup make test &``) ignores SIGINT, and a child would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.mark.parametrize("executor", ["threads", "dask"])
def test_ctrl_c_keeps_what_was_graded_and_a_rerun_grades_the_rest(executor, request, tmp_path):
    course = write_class(tmp_path / "class", SIGINT_CLASS)
    cmd = [*[sys.executable, "-m", "course", "--root", str(course.root)], "autograde", A1]
    if executor == "dask":
        cluster = request.getfixturevalue("cluster")
        cmd += ["--scheduler", str(cluster.file)]
        env = _env(cluster.tmp)
    else:
        cmd += ["--workers", "1"]
        # a TMPDIR too deep for a kernel's socket paths (over 107 bytes) must not matter
        deep = tmp_path / ("a-deep-temporary-folder-" * 3)
        deep.mkdir()
        env = _env(deep)
    report = course.reports / "autograde.json"
    first = subprocess.Popen(
        cmd,
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_as_from_a_terminal,
    )
    try:
        deadline = time.monotonic() + 300
        while not report.exists() and first.poll() is None:
            assert time.monotonic() < deadline, "nothing was graded in 300 s"
            time.sleep(0.1)
        first.send_signal(signal.SIGINT)
        output, _ = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 130, output
    assert "interrupted" in output
    graded = report_entries(course)
    assert 1 <= len(graded) < len(SIGINT_CLASS), output
    assert submissions_in_gradebook(course) == sorted(s for _, s in graded)

    second = subprocess.run(
        cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"skipped {len(graded)} submission(s) already graded" in second.stdout
    rest = len(SIGINT_CLASS) - len(graded)
    where = "on the Dask cluster" if executor == "dask" else "with 1 worker(s)"
    assert f"autograded {rest} submission(s) {where}" in second.stdout
    assert sorted(report_entries(course)) == sorted((A1, s) for s in SIGINT_CLASS)
    assert submissions_in_gradebook(course) == sorted(SIGINT_CLASS)


def test_a_worker_without_the_sandbox_stops_the_run_with_a_clear_error(tmp_path):
    course = write_class(tmp_path / "class", ["good"])
    bare = Cluster(tmp_path / "cluster", workers=1, path=str(BIN))  # no /usr/bin: no bwrap
    try:
        run = subprocess.run(
            [sys.executable, "-m", "course", "--root", str(course.root), "autograde", A1]
            + ["--scheduler", str(bare.file)],
            cwd=REPO,
            env=_env(bare.tmp),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    finally:
        bare.stop()
    assert run.returncode == 2, run.stdout + run.stderr
    assert "cannot grade in the sandbox" in run.stderr
    assert "bwrap is not installed" in run.stderr
    assert not (course.reports / "autograde.json").exists()


# What a worker's own machine might say: limits far above the instructor's, a run folder of
# its own with such settings, and a gradebook it must not touch. None of it may count.
WORKER_ENV = {
    "AFZ_CELL_TIMEOUT": "600",
    "AFZ_KERNEL_MEMORY_MB": "16000",
    "AFZ_GRADEBOOK_URL": "postgresql+psycopg2://nobody@127.0.0.1:1/nothing",
}
SLEEPER = "import time\n\ntime.sleep(60)\nprint('slept')"
HOG = "block = bytearray(3000 * 2**20)\nprint('allocated', len(block))"


def test_a_remote_worker_grades_under_the_instructors_settings(tmp_path, tmp_path_factory):
    """The instructor's grading.toml says 20 s a cell and 2048 MiB a kernel; the worker was
    started with 600 s, 16000 MiB, a run folder that says the same and a gradebook URL of its
    own. The sleeper's 60 s cell is interrupted (20 s, not 4: under make test's load the
    honest notebook's first cell, importing torch, once took over 4 s), the hog's 3000 MiB
    are refused, and the honest learner keeps full marks: the worker graded under the
    instructor's settings."""
    own = tmp_path / "worker_run"
    own.mkdir()
    (own / "settings.json").write_text(Settings(cell_timeout=600, kernel_memory_mb=16000).to_json())
    # (a short folder: the kernel's Unix sockets live under the worker's TMPDIR)
    folder = tmp_path_factory.mktemp("own_env")
    cluster = Cluster(folder, workers=1, env={**WORKER_ENV, "AFZ_RUN": str(own)})
    try:
        root = tmp_path / "class"
        make_root(root)
        (root / "grading.toml").write_text("cell_timeout = 20\nkernel_memory_mb = 2048\n")
        submit(root, "honest", A1, read(REPO / "solutions" / A1 / NB1))
        for student, code in {"sleeper": SLEEPER, "hog": HOG}.items():
            submit(
                root, student, A1, insert_cell(read(REPO / "solutions" / A1 / NB1), "softmax", code)
            )
        course = Course(root)
        assert course.settings.origin["cell_timeout"].endswith("grading.toml")
        results = {r.student: r for r in autograde([A1], course, scheduler=str(cluster.file))}
    finally:
        cluster.stop()
    assert all(r.worker and r.worker.split(":")[1] != str(os.getpid()) for r in results.values())
    assert results["honest"].status == "ok" and results["honest"].score == 22, results["honest"]
    sleeper, hog = results["sleeper"], results["hog"]
    assert "a cell ran past the time limit and was interrupted" in sleeper.notes, sleeper
    assert "a cell ran out of memory (kernel memory limit)" in hog.notes, hog
    printed = {s: outputs(course.autograded / s / A1 / NB1) for s in ("sleeper", "hog")}
    assert "KeyboardInterrupt" in printed["sleeper"] and "slept" not in printed["sleeper"]
    assert "MemoryError" in printed["hog"] and "allocated" not in printed["hog"]
    assert submissions_in_gradebook(course) == ["hog", "honest", "sleeper"]


def outputs(path: Path) -> str:
    """What the notebook at ``path`` printed, and the names of its errors (not their
    tracebacks, which quote the source)."""
    shown = []
    for cell in json.loads(path.read_text())["cells"]:
        for out in cell.get("outputs", []):
            text = out.get("text", "")
            shown.append(out.get("ename", "") + ("".join(text) if isinstance(text, list) else text))
    return "\n".join(shown)
