"""A warm nbgrader: one process imports nbgrader once and forks a fresh child per command.

Starting ``python -m nbgrader`` costs about a second of imports (nbgrader, nbconvert,
jupyter_client, SQLAlchemy) before it grades anything; a class pays it once per notebook. The
server pays it once per worker thread: it imports nbgrader, then waits. For each command it
forks a child, a copy of the freshly imported process that has run nothing, which becomes the
nbgrader command (its own session, its output in a file, the command's environment and
folder) and exits with nbgrader's exit code. No child sees another's state, since every child
is forked from the server, which never runs a command itself; the learner's code runs in the
kernel's sandbox as before, not here.

Protocol (one JSON object per line): the client sends ``{"args", "env", "cwd", "log"}``; the
server answers ``{"pid": ...}`` once the child runs and ``{"rc": ...}`` when it has exited
(``-N`` for a signal, as ``subprocess`` reports it). The server exits when its stdin closes;
children and server die with their parent (``PR_SET_PDEATHSIG``), so a killed worker leaves
no nbgrader running.

The setting ``warm_nbgrader = false`` starts every command cold instead
(``benchmarks/grading_cost.py`` compares the two).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

SERVER_MAIN = """\
import ctypes, json, os, signal, sys, traceback
ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the client
if os.getppid() != int(sys.argv[1]):
    os._exit(0)  # the client was gone before the line above
from nbgrader.apps.nbgraderapp import main
import autograder.preprocessors.limited_execute, autograder.preprocessors.restore_cells
import autograder.preprocessors.safe_feedback, autograder.preprocessors.verdicts
import course.config, nbclient, jupyter_client.manager
import nbconvert.exporters, nbgrader.preprocessors, sqlalchemy.dialects.sqlite
requests, answers = sys.stdin.buffer, sys.stdout.buffer
answers.write(b'{"ready": true}\\n'); answers.flush()
for line in requests:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setsid()
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # and with the server
            fd = os.open(job["log"], os.O_WRONLY | os.O_APPEND)
            os.dup2(fd, 1); os.dup2(fd, 2); os.close(fd)
            fd = os.open(os.devnull, os.O_RDONLY); os.dup2(fd, 0); os.close(fd)
            os.chdir(job["cwd"])
            os.environ.clear(); os.environ.update(job["env"])
            run = os.environ.get("AFZ_RUN")
            course = os.path.join(run, "course.json") if run else None
            cgroup = json.load(open(course))["grader_cgroup"] if course else []
            for procs in cgroup:  # into the command's own cgroup (course.grading.nbgrader_command)
                with open(procs, "w") as f:
                    f.write(str(os.getpid()))
            sys.argv = ["nbgrader", *job["args"]]
            code = 0
            main()
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
            if not isinstance(stop.code, (int, type(None))):
                print(stop.code, file=sys.stderr)
        except BaseException:
            code = 1
            traceback.print_exc()
        finally:
            import atexit
            atexit._run_exitfuncs()
            sys.stdout.flush(); sys.stderr.flush()
            os._exit(code)
    answers.write(json.dumps({"pid": pid}).encode() + b"\\n"); answers.flush()
    _, status = os.waitpid(pid, 0)
    rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    answers.write(json.dumps({"rc": rc}).encode() + b"\\n"); answers.flush()
"""
# What Python reads from the environment when it starts: a server started under other values
# would not be the process a cold start gives, so a change starts a new server.
STARTUP_VARS = ("PYTHONPATH", "PYTHONWARNINGS", "PYTHONHASHSEED", "PYTHONSAFEPATH")


class ServerGone(RuntimeError):
    """The server died or answered nonsense. ``pid``: the command's child, if one was started
    (it dies with the server); None when the caller can still start the command cold."""

    def __init__(self, message: str, pid: int | None = None) -> None:
        super().__init__(message)
        self.pid = pid


class Server:
    """One nbgrader fork server, used by one thread at a time."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.key = startup_key(env)
        self._pending = b""  # what was read from the server's stdout beyond the last line
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER_MAIN, str(os.getpid())],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            self._read(timeout=120)  # {"ready": true}: imports done
        except TimeoutError as err:
            self.close()
            raise ServerGone("nbgrader server did not start within 120 s") from err

    def run(
        self, args: list[str], env: dict[str, str], cwd: Path, log: Path, timeout: float | None
    ) -> tuple[int, int]:
        """Run ``nbgrader <args>``, its output appended to ``log``; (exit code, child's pid).

        The exit code is -9 when the child was killed after ``timeout`` seconds.
        """
        job = {"args": args, "env": env, "cwd": str(cwd), "log": str(log)}
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(job).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as err:
            raise ServerGone(f"nbgrader server: {err}") from err
        try:
            pid = int(str(self._read(timeout=30)["pid"]))
        except (TimeoutError, KeyError, ValueError) as err:
            self.close()
            raise ServerGone(f"nbgrader server did not start the command: {err!r}") from err
        try:
            try:
                rc = int(str(self._read(timeout)["rc"]))
            except TimeoutError:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self._read(timeout=30)
                rc = -9
        except ServerGone as err:
            raise ServerGone(str(err), pid) from err
        except (TimeoutError, KeyError, ValueError) as err:
            self.close()
            raise ServerGone(f"nbgrader server: {err!r}", pid) from err
        return rc, pid

    def _read(self, timeout: float | None) -> dict[str, object]:
        """The server's next answer (one line). Read from the pipe itself, not through the
        buffered ``proc.stdout``: a buffered readline may take in both answers of a command
        that ends at once (``pid`` and ``rc``), and select() would then wait on an empty pipe
        for the second one until the time limit ran out."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._pending:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                self.close()
                raise ServerGone(f"nbgrader server exited ({self.proc.wait()})")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        try:
            answer = json.loads(line)
        except ValueError as err:
            self.close()
            raise ServerGone(f"nbgrader server said {line[:200]!r}") from err
        if not isinstance(answer, dict):
            self.close()
            raise ServerGone(f"nbgrader server said {line[:200]!r}")
        return answer

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def startup_key(env: dict[str, str]) -> tuple[str, ...]:
    return tuple(env.get(name, "") for name in STARTUP_VARS)


_local = threading.local()
_servers: list[Server] = []
_lock = threading.Lock()


def server_for(env: dict[str, str], cwd: Path) -> Server:
    """This thread's server, started (again) if it is missing, dead or started under other
    start-up variables."""
    server: Server | None = getattr(_local, "server", None)
    if server is not None and (not server.alive() or server.key != startup_key(env)):
        server.close()
        server = None
    if server is None:
        server = Server(env, cwd)  # ServerGone if it cannot start
        _local.server = server
        with _lock:
            _servers[:] = [s for s in _servers if s.alive()] + [server]
    return server


@atexit.register
def close_all() -> None:
    """End every server of this process (at exit, and from tests)."""
    with _lock:
        servers, _servers[:] = list(_servers), []
    for server in servers:
        server.close()
    if hasattr(_local, "server"):
        del _local.server
