"""The warm nbgrader (``course.grading.forkserver``): every command is a fresh child of one
server that imported nbgrader once, behaves as a cold ``python -m nbgrader`` would (exit code,
output, environment), and dies with its server, sandbox and all, so a killed worker leaves nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import psutil
import pytest
from support import REPO
from support.submissions import A1, make_root, read, submit

from autograder import sandbox
from course.config import Course
from course.grading import forkserver
from course.grading.batch import _skip_graded, autograde
from course.grading.nbgrader_command import nbgrader_run

CGROUPS = Path("/sys/fs/cgroup")


@pytest.fixture(autouse=True)
def fresh_servers():
    forkserver.close_all()
    yield
    forkserver.close_all()


def server_pid() -> int:
    return forkserver.server_for(forkserver_env(), REPO).proc.pid


def forkserver_env() -> dict[str, str]:
    from course.grading.nbgrader_command import nbgrader_env

    return nbgrader_env()


def stamps(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_command_is_a_fresh_child_with_its_own_environment(tmp_path, monkeypatch):
    course = Course(make_root(tmp_path / "course"))
    first = nbgrader_run(["db", "student", "add", "ann", "--last-name=Lee"], course)
    assert first.rc == 0, first.out
    server = server_pid()
    timing = tmp_path / "stamps.jsonl"
    monkeypatch.setenv("AFZ_TIMING", str(timing))  # set after the server started
    listed = [nbgrader_run(["db", "student", "list"], course) for _ in range(2)]
    assert server_pid() == server, "the server was not reused"
    children = {s["pid"] for s in stamps(timing) if s["stage"] == "config"}  # one per command
    assert len(children) == 2 and server not in children, children
    cold_settings = replace(course.settings, warm_nbgrader=False)
    cold = nbgrader_run(["db", "student", "list"], course, settings=cold_settings)
    assert [r.rc for r in listed] == [0, 0] == [cold.rc] * 2
    assert listed[0].out == listed[1].out == cold.out
    assert "ann" in cold.out and "Lee" in cold.out


def test_exit_codes_and_errors_are_those_of_a_cold_start(tmp_path):
    course = Course(make_root(tmp_path / "course"))
    bad = ["autograde", "no_such_assignment", "--no-such-option"]
    warm = nbgrader_run(bad, course)
    cold = nbgrader_run(bad, course, settings=replace(course.settings, warm_nbgrader=False))
    assert warm.rc == cold.rc == 2
    assert "unrecognized arguments: --no-such-option" in warm.out
    assert warm.out == cold.out


def test_a_dead_server_is_replaced_and_a_changed_interpreter_gets_a_new_one(tmp_path, monkeypatch):
    course = Course(make_root(tmp_path / "course"))
    nbgrader_run(["db", "student", "list"], course)
    first = server_pid()
    os.kill(first, signal.SIGKILL)
    psutil.Process(first).wait(timeout=10)
    again = nbgrader_run(["db", "student", "list"], course)
    assert again.rc == 0, again.out
    second = server_pid()
    assert second != first
    monkeypatch.setenv("PYTHONWARNINGS", "default")  # read when Python starts
    assert nbgrader_run(["db", "student", "list"], course).rc == 0
    assert server_pid() != second
    assert not psutil.pid_exists(second) or psutil.Process(second).status() == "zombie"


def cmd(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def sleeper_class(root: Path) -> Course:
    nb = read(REPO / "solutions" / A1 / "attention.ipynb")
    cell = {"cell_type": "code", "id": "sleeper", "metadata": {}, "execution_count": None}
    nb["cells"].insert(1, {**cell, "outputs": [], "source": "import time\ntime.sleep(300)"})
    submit(make_root(root), "sleeper", A1, nb)
    return Course(root)


def wait_for_sandbox(pid: int) -> list[psutil.Process]:
    """The processes under ``pid`` once one of them is a sandbox (bwrap) with its kernel."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        tree = descendants(pid)
        if any("bwrap" in cmd(p) for p in tree) and any("ipykernel" in cmd(p) for p in tree):
            return tree
        time.sleep(0.2)
    raise AssertionError("the grading never reached its sandbox")


def launchers(tree: list[psutil.Process]) -> list[int]:
    pids = [p.pid for p in tree if "autograder.kernel" in cmd(p)]
    assert pids, "no kernel launcher among the grading's processes"
    return pids


def launcher_cgroups(launchers: list[int]) -> list[Path]:
    """The sandbox cgroups the kernel launchers ``launchers`` created (named by their pid)."""
    groups = CGROUPS.rglob(sandbox.GROUP + "/k*")  # every controller (v1), or v2's one tree
    return [g for g in groups if any(g.name.startswith(f"k{pid}-") for pid in launchers)]


@pytest.mark.skipif(sandbox.check_quick() is not None, reason="no sandbox here")
def test_a_killed_grader_leaves_nothing_running(tmp_path):
    """As when a Dask worker is killed with SIGKILL: its nbgrader server, the nbgrader
    command, the kernel's launcher and the sandbox all go at once, and the sandbox's cgroups
    are removed (nothing of the killed process can clean up after it)."""
    course = sleeper_class(tmp_path / "course")
    proc = subprocess.Popen(
        [sys.executable, "-m", "course", "--root", str(course.root)]
        + ["autograde", "--workers", "1"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        tree = wait_for_sandbox(proc.pid)
        time.sleep(1)
        tree = descendants(proc.pid)
        started = launchers(tree)
        assert launcher_cgroups(started), "the sandbox has no cgroup to check"
        proc.kill()
        proc.wait()
        gone, alive = psutil.wait_procs(tree, timeout=20)
        assert alive == [], [(p.pid, cmd(p)[:200]) for p in alive]
        assert launcher_cgroups(started) == []
    finally:
        for p in descendants(proc.pid):
            p.kill()


@pytest.mark.skipif(sandbox.check_quick() is not None, reason="no sandbox here")
def test_a_killed_server_fails_its_grading_and_the_next_one_gets_a_new_server(tmp_path):
    """The server dies in the middle of a grading: the grading is reported as a grader error
    (not the learner's time limit), a rerun grades it again, and nothing of it is left
    running."""
    course = sleeper_class(tmp_path / "course")
    out: dict[str, list] = {}
    thread = threading.Thread(target=lambda: out.update(r=autograde([A1], course, workers=1)))
    thread.start()
    tree = wait_for_sandbox(os.getpid())
    servers = {s.proc.pid for s in forkserver._servers}  # the pool thread's, the caller's
    [server] = [
        p for p in tree if p.pid in servers and any("bwrap" in cmd(d) for d in descendants(p.pid))
    ]
    doomed = descendants(server.pid)
    started = launchers(doomed)
    server.kill()
    gone, alive = psutil.wait_procs(doomed, timeout=20)
    assert alive == [], [(p.pid, p.name()) for p in alive]
    thread.join(timeout=120)
    assert not thread.is_alive()
    [result] = out["r"]
    assert result.student == "sleeper" and result.status != "ok" and result.score == 0
    assert result.outcome == "grader error", result.status  # not a time limit: not theirs
    assert _skip_graded(course, [(A1, "sleeper")]) == [(A1, "sleeper")]  # a rerun grades it
    log = course.reports / "logs" / A1 / "sleeper.log"
    assert "the nbgrader server stopped" in log.read_text()
    assert launcher_cgroups(started) == []


@pytest.mark.skipif(sandbox.cgroup_version() is None, reason="no writable cgroup here")
def test_a_killed_instructor_process_leaves_no_command_cgroup_behind():
    """A command cgroup whose instructor process was killed (it could not remove it) goes
    with the next command's, whatever is still in it; so does a sandbox cgroup whose kernel
    launcher is gone (killed with that command while it removed its sandbox's cgroup). A
    sandbox cgroup whose launcher runs stays."""
    from autograder.sandbox import Cgroup, Limits
    from course.grading.nbgrader_command import grader_cgroup

    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = int(gone.stdout)
    orphan = Cgroup.create(f"nbgrader-{dead}-orphan", Limits(memory_mb=64, cpu_cores=0))
    assert orphan is not None and all(d.is_dir() for d in orphan.dirs.values())
    left = Cgroup.create(f"k{dead}-0rphan00", Limits(memory_mb=64, cpu_cores=0))
    running = Cgroup.create(f"k{os.getpid()}-running0", Limits(memory_mb=64, cpu_cores=0))
    assert left is not None and running is not None
    ours = grader_cgroup(2048)
    assert ours is not None
    try:
        assert not any(d.exists() for d in orphan.dirs.values())
        assert not any(d.exists() for d in left.dirs.values())
        assert all(d.is_dir() for d in running.dirs.values())
        assert all(d.is_dir() for d in ours.dirs.values())
    finally:
        ours.remove()
        running.remove()
