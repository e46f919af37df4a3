"""Running one nbgrader command for a course root, and cleaning up after its sandboxes. Every
nbgrader command of the course runs here: ``autograde`` (``course.grading.submission``), and
also those of ``course.release``, ``course.validate`` and ``course.reports`` (feedback).

nbgrader runs as ``python -m nbgrader`` in the repository (so ``nbgrader_config.py`` applies),
with the course root and the gradebook URL given on its command line. Each command gets a run
folder of its own, named by ``AFZ_RUN``: the grading settings (``autograder.settings``), the
course root and the command's cgroup are written there for ``nbgrader_config.py`` and the
kernel launcher, and the kernels' outcome records come back from there
(``autograder.outcomes``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from autograder import outcomes, stamp
from autograder.settings import COURSE_FILE, RUN_VAR, Settings
from course.config import REPO, Course
from course.grading import forkserver

if TYPE_CHECKING:
    from autograder.sandbox import Cgroup

MAX_LOG_BYTES = 2_000_000
# In a run's output when its nbgrader server died under it (course.diagnose: a grader error)
SERVER_STOPPED = "[course] the nbgrader server stopped during the command"
# ``python -m nbgrader``, less the interpreter's teardown once nbgrader is done (about 0.8 s,
# freeing what it imported; benchmarks/grading_cost.py): its exit handlers run (logging
# flushed), its output is flushed, and it exits. (The other cost that graded nothing, the
# grammar of jsonschema's "iri" format check, the lock keeps out: pyproject.toml.)
NBGRADER_MAIN = """\
import atexit, json, os, sys, traceback
code = 1
try:
    run = os.environ.get("AFZ_RUN")
    cgroup = json.load(open(os.path.join(run, "course.json")))["grader_cgroup"] if run else []
    for procs in cgroup:  # into the command's own cgroup (course.grading.nbgrader_command)
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    from nbgrader.apps.nbgraderapp import main
    sys.argv[0] = "nbgrader"
    main()
    code = 0
except SystemExit as stop:
    code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
    if not isinstance(stop.code, (int, type(None))):
        print(stop.code, file=sys.stderr)
except BaseException:
    traceback.print_exc()
finally:
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
"""


@dataclass
class Run:
    """What one nbgrader command did: exit code, output, and what its processes recorded."""

    rc: int
    out: str
    grader_oom: bool = False  # nbgrader's own processes went over grader_memory_mb
    timed_out: bool = False  # killed after the command's time limit
    server_stopped: bool = False  # its nbgrader server died under it (not the learner's doing)
    outcome: outcomes.Outcome = field(default_factory=outcomes.Outcome)  # the kernels' records

    @property
    def oom_killed(self) -> bool:
        """A kernel's sandbox went over its memory."""
        return self.outcome.oom_killed


def grader_cgroup(memory_mb: int) -> Cgroup | None:
    """A fresh cgroup for one nbgrader command (``memory_mb``, the setting grader_memory_mb,
    and a process count), or None where this machine has no writable cgroup (then only the
    time limit holds). nbgrader holds and validates what a notebook printed: an honest
    autograde needs about 100 MiB, the largest notebook collect takes about 420 MiB."""
    from autograder.sandbox import Cgroup, Limits

    name = f"nbgrader-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    group = Cgroup.create(name, Limits(memory_mb=memory_mb, processes=256, cpu_cores=0))
    if group is not None:
        _remove_orphans(group)
    return group


def _remove_orphans(group: Cgroup) -> None:
    """Remove the command cgroups of instructor processes that are gone (killed before they
    could remove their own), with whatever is left in them; then the sandbox cgroups
    (``k<launcher pid>-...``) whose kernel launcher is gone. Killing an orphan command's
    cgroup kills a launcher that was still removing its sandbox's cgroup (a worker killed
    mid-grading), and nothing else would remove that one."""
    from autograder.sandbox import Cgroup

    for prefix, owner_of in (("nbgrader-", _command_owner), ("k", _launcher_owner)):
        for controller, folder in group.dirs.items():
            for other in folder.parent.glob(prefix + "*"):
                owner = owner_of(other.name)
                if not other.is_dir() or owner is None or _alive(owner):
                    continue
                Cgroup(group.version, {controller: other}).remove()


def _command_owner(name: str) -> int | None:
    """The instructor process of a command cgroup ``nbgrader-<pid>-<hex>``."""
    owner = name.split("-")[1]
    return int(owner) if owner.isdigit() else None


def _launcher_owner(name: str) -> int | None:
    """The kernel launcher of a sandbox cgroup ``k<pid>-<hex>``."""
    owner = name[1:].split("-")[0]
    return int(owner) if owner.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# A kernel's sockets are named in the run folder's runtime/ ("afz-<pid>-<n>-<port>", at most
# about 24 bytes with the slashes), and the path of a Unix socket holds at most 107 bytes. Under
# a deep TMPDIR every kernel would fail to start ("File name too long"): the run folder then
# goes to /tmp.
SOCKET_PATH_MAX = 107
SOCKET_NAME_ROOM = len("/afz-run-12345678/runtime/afz-4194304-999-99")


def _short_tempdir() -> str:
    """The temporary folder for a run folder whose sockets' paths fit (see above)."""
    tmp = tempfile.gettempdir()
    if len(os.fsencode(tmp)) + SOCKET_NAME_ROOM <= SOCKET_PATH_MAX:
        return tmp
    if os.path.isdir("/tmp") and os.access("/tmp", os.W_OK | os.X_OK):
        return "/tmp"
    return tmp  # nothing shorter: the kernel's start fails, diagnosed as the grader's error


def nbgrader_env() -> dict[str, str]:
    """This process's environment, with the venv's bin first (nbgrader runs ``alembic``)."""
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env.setdefault("PYTHONWARNINGS", "ignore")
    return env


def nbgrader(
    args: list[str],
    course: Course,
    url: str | None = None,
    log: Path | None = None,
    timeout: float | None = None,
    settings: Settings | None = None,
) -> tuple[int, str]:
    """Run ``nbgrader <args>`` for ``course``; (exit code, output)."""
    run = nbgrader_run(args, course, url, log, timeout, settings)
    return run.rc, run.out


def nbgrader_run(
    args: list[str],
    course: Course,
    url: str | None = None,
    log: Path | None = None,
    timeout: float | None = None,
    settings: Settings | None = None,
) -> Run:
    """``nbgrader <args>`` against the gradebook ``url`` (default: the course's), under
    ``settings`` (default: the course's), with what its kernels recorded.

    Output goes to a file, not a pipe, so nothing a kernel leaves behind can keep this waiting,
    and is read back with its control characters escaped (``outcomes.escaped``);
    on timeout the whole process group (nbgrader and its kernel launcher) is killed and the exit
    code is -9. nbgrader and the launcher run in a cgroup of their own (``grader_cgroup``): past
    the setting grader_memory_mb the kernel's OOM killer ends them and ``grader_oom`` is set.
    Afterwards every sandbox cgroup the run created is emptied and removed, even when its
    launcher was killed, and so is the command's own.
    """
    cmd = [
        sys.executable,
        "-c",
        NBGRADER_MAIN,
        *args,
        f"--CourseDirectory.root={course.root}",
        f"--CourseDirectory.db_url={url or course.gradebook_url}",
    ]
    settings = settings or course.settings
    with tempfile.TemporaryDirectory(prefix="afz-run-", dir=_short_tempdir()) as tmp:
        run_dir = Path(tmp)
        env = nbgrader_env()
        env["JUPYTER_RUNTIME_DIR"] = str(run_dir / "runtime")
        env[RUN_VAR] = str(run_dir)
        settings.write(run_dir)
        out_path = run_dir / "output.log"
        out_path.touch()
        note = ""
        grader = grader_cgroup(settings.grader_memory_mb)
        procs = [str(d / "cgroup.procs") for d in grader.dirs.values()] if grader else []
        (run_dir / COURSE_FILE).write_text(
            json.dumps({"root": str(course.root), "grader_cgroup": procs})
        )
        stamp("spawn")
        try:
            if settings.warm_nbgrader:
                rc, note = _run_warm(cmd[3:], env, out_path, timeout)
            else:
                rc = None
            if rc is None:
                rc = _run_cold(cmd, env, out_path, timeout)
        finally:
            grader_oom = grader.oom_killed() if grader is not None else False
            if grader is not None:
                grader.remove()  # and whatever of the command is still in it
        stamp("exited")
        with out_path.open("rb") as f:
            data = f.read(MAX_LOG_BYTES)
        # nbgrader logs names and messages a notebook chose: no terminal escape gets through
        out = outcomes.escaped(data.decode("utf-8", errors="replace"))
        if out_path.stat().st_size > MAX_LOG_BYTES:
            out += f"\n[course] output cut at {MAX_LOG_BYTES} bytes\n"
        timed_out = rc == -9 and not note and not grader_oom and timeout is not None
        if grader_oom:
            out += (
                f"\n[course] nbgrader's processes went over {settings.grader_memory_mb} MiB "
                "(the setting grader_memory_mb) and were killed\n"
            )
        elif timed_out:
            out += f"\n[course] killed after {timeout:.0f} s\n"
        out += note
        outcome = reap_sandboxes(run_dir)
    stamp("reaped")
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        shown = [sys.executable, "-m", "nbgrader", *cmd[3:]]  # what NBGRADER_MAIN runs
        log.write_text(" ".join(shown) + "\n\n" + out)
    return Run(rc, out, grader_oom, timed_out, bool(note), outcome)


def _run_cold(cmd: list[str], env: dict[str, str], out_path: Path, timeout: float | None) -> int:
    """A fresh interpreter for the command; its exit code, -9 when killed after ``timeout``."""
    with out_path.open("ab") as out_file:
        proc = subprocess.Popen(
            cmd,
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = -9
        _kill_group(proc.pid)  # whatever is left of the group (the kernel launcher) goes too
        proc.wait()
    return rc


def _run_warm(
    args: list[str], env: dict[str, str], out_path: Path, timeout: float | None
) -> tuple[int | None, str]:
    """The command forked from this thread's nbgrader server (``course.grading.forkserver``).

    (exit code, note for the log); the exit code is None when no server could start the
    command, which then runs cold.
    """
    try:
        server = forkserver.server_for(nbgrader_env(), REPO)
        rc, pid = server.run(args, env, REPO, out_path, timeout)
    except forkserver.ServerGone as err:
        if err.pid is None:
            return None, ""
        _kill_group(err.pid)
        return -9, f"\n{SERVER_STOPPED} ({err})\n"
    _kill_group(pid)
    return rc, ""


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def reap_sandboxes(run: Path) -> outcomes.Outcome:
    """Remove what the run's sandboxes left (their launcher may have been killed); the run's
    records, with each unfinished kernel's memory verdict read from its cgroup."""
    from autograder.sandbox import Cgroup

    outcome = outcomes.read(run)
    for info in outcome.kernels:
        if info.get("cgroup_version") and info.get("cgroup_dirs"):
            cgroup = Cgroup.from_dirs(info["cgroup_version"], info["cgroup_dirs"])
            if not info.get("finished"):
                info["oom_killed"] = cgroup.oom_killed()
            cgroup.remove()
    return outcome
