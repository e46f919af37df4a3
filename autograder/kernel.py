"""Kernel launcher of the ``afz-grader`` kernelspec: ipykernel inside the sandbox.

    python -m autograder.kernel -f CONNECTION_FILE [ipykernel options ...]

jupyter_client starts this (trusted, outside the sandbox) in the submission's autograded
folder. It needs the ``ipc`` transport (``c.KernelManager.transport = "ipc"``): the kernel's
sockets are Unix sockets in a small tmpfs of the sandbox's own, linked (through
``/proc/PID/root``) from the paths the client expects, so the client reaches the kernel although
the kernel has no network at all. The kernel runs ``seccomp.kernel_start_code``: from its first
line on it can start no process of its own.

Its limits come from the run's settings (``autograder.settings.of_run``: the folder
``AFZ_RUN`` of the nbgrader command that started it; the defaults outside one); ``sandbox =
false`` there (``python -m course autograde --no-sandbox``) runs the kernel with rlimits only.
It writes what became of each kernel as a record in that folder (``autograder.outcomes``): the
instructor's tool cleans up and diagnoses from the records. The sandbox itself gets none of it.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from . import outcomes, pieces, sandbox, seccomp, stamp
from .replay import KERNEL_SETTINGS
from .settings import NBGRADER_PID, Settings, of_run, run_folder

MAX_COPY_FILES = 50
MAX_COPY_BYTES = 64 * 1024 * 1024
# No history database: IPython would keep every cell the kernel ran, each test cell's kernel
# form included, in a file the next cells can read (checks.forget clears what it keeps in memory).
KERNEL_OPTIONS = ("--HistoryManager.enabled=False",)
LOG_BYTES = 64 * 1024  # of the kernel's own stdout/stderr passed on (the rest is dropped)


def _fail(message: str, name: str | None = None) -> int:
    """Say why the kernel could not start (in the log, and in the kernel's record); exit 3."""
    print(f"afz-grader kernel: {message}", file=sys.stderr, flush=True)
    outcomes.kernel(name or f"k{os.getpid()}", failure=message, finished=True)
    return 3


def _submission_files(folder: Path) -> list[Path]:
    """Regular files of the notebook's folder to copy into the sandbox (no links).

    None while grading: nbgrader has by then written into that folder the notebook with the
    hidden tests put back, and the source's other files (the visible checks' values), and
    no exercise reads a file. ``validate`` runs a learner's own folder, and gets it."""
    if grading():
        return []
    files: list[Path] = []
    total = 0
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file() or ".ipynb_checkpoints" in path.parts:
            continue
        total += path.stat().st_size
        if len(files) >= MAX_COPY_FILES or total > MAX_COPY_BYTES:
            break
        files.append(path)
    return files


# What a process that could not get memory writes on its way out: Python's exception, libzmq's
# and C++'s allocation failures, the C library's ENOMEM. A notebook may write these words
# itself, which changes only how its own kernel's death is described.
OUT_OF_MEMORY = re.compile(rb"MemoryError|OUT OF MEMORY|Cannot allocate memory|std::bad_alloc")


def _forward(stream, name: str, limit: int = LOG_BYTES) -> None:
    """Copy the first ``limit`` bytes of the kernel's output to our stderr, its control
    characters escaped (``outcomes.escaped``: no terminal escape reaches a log); drain the rest.
    A sign in any of it that memory ran out goes into the kernel's record (``out_of_memory``)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="backslashreplace")
    sent = 0
    tail = b""  # the end of the last chunk: a sign may straddle two
    noted = False
    while chunk := stream.read(65536):
        if not noted and OUT_OF_MEMORY.search(tail + chunk):
            outcomes.kernel(name, out_of_memory="it wrote that memory ran out")
            noted = True
        tail = chunk[-32:]
        if sent < limit:
            text = decoder.decode(chunk[: limit - sent])
            sys.stderr.buffer.write(outcomes.escaped(text).encode("utf-8"))
            sys.stderr.flush()
            sent += len(chunk)


def _watch_address_space(name: str, cgroup: sandbox.Cgroup, limit_mb: int, done) -> None:
    """Note in the kernel's record when a process of the sandbox has filled its address space
    (the per-process limit of ``limit_mb`` MiB): a kernel that ran out of memory and kept it
    may die later in a thread of its own (sending a message), with nothing said. ``VmPeak`` is
    a high-water mark: a look every 0.2 s sees it however short the peak was."""
    margin_kb = 32 * 1024  # what the next allocation, refused, would have added
    while not done.wait(0.2):
        for pid in cgroup.pids():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            peak = re.search(r"^VmPeak:\s+(\d+) kB", status, re.M)
            if peak and int(peak.group(1)) >= (limit_mb << 10) - margin_kb:
                outcomes.kernel(name, out_of_memory=f"a process used its {limit_mb} MiB")
                return


def grading() -> bool:
    """Whether nbgrader runs this kernel to grade (``autograde``), not to ``validate``."""
    return os.environ.get("NBGRADER_EXECUTION", "autograde") == "autograde"


def run_unsandboxed(args: list[str], limits: sandbox.Limits) -> int:
    """Only rlimits (memory per process, CPU time, file size): for ``--no-sandbox``."""
    sandbox.set_rlimits(limits)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ["PYTHONSAFEPATH"] = "1"  # the folder goes after the packages (kernel_start_code)
    if grading():
        os.environ["CHECKS_MODE"] = "record"
    else:
        os.environ.pop("CHECKS_MODE", None)
    real = package_dir("helpers")
    if real is not None:  # the filtered copy first on the path (it outlives this process)
        staging = Path(tempfile.mkdtemp(prefix="afz-h-", dir=run_folder()))
        pieces.filtered_copy(real, staging / "helpers", Path.cwd().name)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(staging), os.environ.get("PYTHONPATH")])
        )
    outcomes.kernel(f"k{os.getpid()}", sandbox="off")
    start = [sys.executable, "-c", seccomp.kernel_start_code()]
    os.execv(sys.executable, [*start, *KERNEL_OPTIONS, *args])
    return 0  # not reached


def run_sandboxed(connection_file: Path, rest: list[str], limits: sandbox.Limits) -> int:
    info = json.loads(connection_file.read_text())
    if info.get("transport") != "ipc":
        return _fail(
            "the sandboxed kernel has no network, so the client must use the ipc transport: "
            "set c.KernelManager.transport = 'ipc' (nbgrader_config.py does)"
        )
    ports = [info[k] for k in ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")]
    ip = Path(info["ip"])  # the client's socket path prefix: it connects to <ip>-<port>
    if not ip.is_absolute():
        return _fail(f"the ipc socket prefix {ip} must be absolute (c.KernelManager.ip)")
    name = f"k{os.getpid()}-{uuid.uuid4().hex[:8]}"
    uid = sandbox.sandbox_uid()
    links = [Path(f"{ip}-{port}") for port in ports]
    staging = None
    try:  # a failure here is the grader's (a full disk, say): the submission is graded again
        staging = Path(tempfile.mkdtemp(prefix="afz-h-"))  # this kernel's copy of helpers
        packages = course_files(staging, Path.cwd().name)
        cgroup = sandbox.Cgroup.create(name, limits)
    except OSError as err:
        remove_tree(staging)
        return _fail(f"the grader's machine could not prepare the kernel: {err}", name)
    outcomes.kernel(
        name,
        sandbox="bwrap",
        cgroup_version=cgroup.version if cgroup else None,
        cgroup_dirs={k: str(v) for k, v in cgroup.dirs.items()} if cgroup else {},
        uid=uid,
    )
    try:
        connection = json.dumps({**info, "ip": f"{SOCKETS}/ipc"}).encode()
        return _run_bwrap(name, uid, limits, rest, connection, packages, cgroup, links, ports)
    finally:
        oom = cgroup.oom_killed() if cgroup else False
        if cgroup is not None:
            cgroup.remove()
        outcomes.kernel(name, oom_killed=oom, finished=True)
        for link in links:
            link.unlink(missing_ok=True)
        remove_tree(staging)
        stamp("launcher done")


# The kernel's sockets live in a small tmpfs of the sandbox's own, at SOCKETS inside. The
# client reaches them through links at the paths it expects, which point into the sandbox
# (/proc/PID/root/...): no folder of the grader's disk is mounted, and the client's runtime
# folder (which may hold other kernels' connection files and keys) is never visible. Once the
# kernel has made its sockets the folder becomes root's (``_seal``) and takes nothing more.
SOCKETS = "/run/kernel"


def _run_bwrap(
    name: str,
    uid: int,
    limits: sandbox.Limits,
    rest: list[str],
    connection: bytes,
    packages: list[tuple[Path, str]],
    cgroup: sandbox.Cgroup | None,
    links: list[Path],
    ports: list[int],
) -> int:
    """Start the sandbox, link its sockets for the client, forward its output; its exit code."""
    fds: list[int] = []
    proc = None
    watched = threading.Event()  # set once the sandbox is over (finally)
    try:
        files = []
        cwd = Path.cwd()
        for path in _submission_files(cwd):
            files.append((_opened(path, fds), f"{sandbox.WORK}/{path.relative_to(cwd).as_posix()}"))
        inside = [(_opened(path, fds), relative) for path, relative in packages]
        passwd = sandbox.passwd_fd(uid)
        fds.append(passwd)
        connection_fd = sandbox.data_fd(connection)
        fds.append(connection_fd)
        rules = seccomp.program()
        filter_fd = sandbox.data_fd(rules) if rules is not None else None
        if filter_fd is not None:
            fds.append(filter_fd)
        info_read, info_write = os.pipe()
        fds.append(info_write)
        command = [sandbox.python_executable(), "-c", seccomp.kernel_start_code()]
        command += ["-f", f"{SOCKETS}/connection.json", *KERNEL_OPTIONS, *rest]
        argv = sandbox.bwrap_argv(
            command,
            uid=uid,
            limits=limits,
            read_only=sandbox.python_paths(),
            packages=inside,
            sockets=SOCKETS,
            files=files,
            ro_data=[(passwd, "/etc/passwd"), (connection_fd, f"{SOCKETS}/connection.json")],
            env=_environment(),
            seccomp_fd=filter_fd,
            info_fd=info_write,
        )

        def enter_limits() -> None:  # in the child, before bwrap starts: all it forks inherits
            if cgroup is not None:
                cgroup.join()
            # With a cgroup, memory is capped for all processes together; the address-space
            # limit per process stays as well, so one big allocation is a MemoryError.
            sandbox.set_rlimits(limits)

        stamp("bwrap")
        outcomes.kernel(name, argv=argv)
        if _ending["now"]:
            os.close(info_read)
            return 1  # ended before the sandbox started: only the cleanup
        proc = subprocess.Popen(
            argv,
            pass_fds=fds,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=enter_limits,
        )
        for fd in fds:
            os.close(fd)
        fds = []

        _ending["sandbox"] = proc
        if _ending["now"]:  # SIGTERM came while the sandbox was being set up
            proc.kill()
        reader = threading.Thread(target=_forward, args=(proc.stdout, name), daemon=True)
        reader.start()
        if cgroup is not None and limits.memory_mb > 0:
            args = (name, cgroup, limits.memory_mb, watched)
            threading.Thread(target=_watch_address_space, args=args, daemon=True).start()
        try:
            pid = sandbox.sandbox_pid(info_read, proc)
        finally:
            os.close(info_read)
        if pid is not None:
            sockets = Path(f"/proc/{pid}/root{SOCKETS}")
            for port, link in zip(ports, links, strict=True):
                link.unlink(missing_ok=True)
                link.symlink_to(sockets / f"ipc-{port}")
            threading.Thread(target=_seal, args=(sockets, ports, proc), daemon=True).start()
        rc = proc.wait()
        stamp("sandbox exited")
        reader.join(timeout=2)
        outcomes.kernel(name, exit=rc, ended_by_client=bool(_ending["now"]))
        if rc != 0 and not _ending["now"]:
            trouble = grader_trouble()
            if trouble:  # the kernel died, and the grader's machine was failing: not the learner
                print(f"afz-grader kernel: {trouble}", file=sys.stderr, flush=True)
                outcomes.kernel(name, trouble=trouble)
        return rc
    finally:
        for fd in fds:
            os.close(fd)
        watched.set()
        if proc is not None and proc.poll() is None:
            proc.kill()


def _opened(path: Path, fds: list[int]) -> int:
    """A read-only file descriptor of ``path``, also noted in ``fds`` (closed by the caller)."""
    fd = os.open(path, os.O_RDONLY)
    fds.append(fd)
    return fd


def _environment() -> dict[str, str]:
    """The sandboxed kernel's whole environment."""
    return {
        "HOME": sandbox.HOME,
        "USER": "learner",
        "PATH": f"{Path(sys.prefix) / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "JPY_PARENT_PID": "1",  # its parent is the PID namespace's init: no parent poller
        "OMP_NUM_THREADS": "1",
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "IPYTHONDIR": f"{sandbox.HOME}/.ipython",
        "PYTHONDONTWRITEBYTECODE": "1",
        # the notebook's folder is not first on the path: the kernel's start puts it where
        # a learner's Jupyter has it, after the course's packages (autograder/seccomp.py)
        "PYTHONSAFEPATH": "1",
        "PYTHONPATH": sandbox.PACKAGES,  # the course's packages, copied in
        "NBGRADER_EXECUTION": os.environ.get("NBGRADER_EXECUTION", "autograde"),
        # autograde: test cells hand results out and the grader judges; validate: the
        # visible checks judge at once, as in the learner's own Jupyter
        **({"CHECKS_MODE": "record"} if grading() else {}),
        # PyTorch's kernels as in the grader's replay of the solution (AVX2 on an AVX-512
        # CPU, say), so that a right answer gives the solution's values to the last bit.
        **{k: os.environ[k] for k in KERNEL_SETTINGS if k in os.environ},
    }


def _seal(folder: Path, ports: list[int], proc: subprocess.Popen, wait: float = 120.0) -> None:
    """Give the sandbox's socket ``folder`` (seen from here) to root once the kernel's sockets
    are in it (or it ended)."""
    wanted = [folder / f"ipc-{port}" for port in ports]
    deadline = time.monotonic() + wait
    while proc.poll() is None and time.monotonic() < deadline:
        if all(os.path.lexists(w) for w in wanted):
            break
        time.sleep(0.002)
    for change in (lambda: os.chown(folder, 0, 0), lambda: os.chmod(folder, 0o555)):
        try:
            change()
        except OSError:
            pass  # not root (the kernel runs as the grader's uid), or the folder is gone


MIN_FREE_MB = 64  # below this, the grader's own disk is failing


def grader_trouble() -> str | None:
    """Why the grader's machine, not the notebook, may have ended a kernel (a full disk)."""
    from jupyter_core.paths import jupyter_runtime_dir

    for folder in {tempfile.gettempdir(), jupyter_runtime_dir()}:
        if not os.path.isdir(folder):
            continue
        try:
            free = shutil.disk_usage(folder).free // (1024 * 1024)
        except OSError as err:
            return f"the grader's folder {folder} cannot be read ({err})"
        if free < MIN_FREE_MB:
            return f"the grader's disk is full ({free} MiB free in {folder})"
    return None


def remove_tree(path: Path | None) -> None:
    """Remove ``path`` whatever its depth (``shutil.rmtree`` recurses, and a tree deeper than
    Python's recursion limit would stay)."""
    if path is None or not os.path.lexists(path):
        return
    try:
        os.chmod(path, 0o700)  # a sealed folder (``_seal``)
        shutil.rmtree(path, ignore_errors=True)
    except (RecursionError, OSError):
        pass
    if os.path.lexists(path):
        subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)], check=False)


def package_dir(name: str) -> Path | None:
    """The folder of the course's package ``name`` (``helpers``, ``checks``) on this machine."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def course_files(staging: Path, assignment: str) -> list[tuple[Path, str]]:
    """What a learner's kernel imports of the course, as (file here, path below
    ``sandbox.PACKAGES``): the test cells' package ``checks``, and a copy of ``helpers`` in
    ``staging`` without the pieces this assignment (and later ones) ask the learner to write
    and without the chapters' pictures (``pieces.py``). The files are copied into the sandbox,
    not mounted; nothing of the grader is among them."""
    trees = []
    real = package_dir("helpers")
    if real is not None:
        trees.append(pieces.filtered_copy(real, staging / "helpers", assignment))
    checks = package_dir("checks")
    if checks is not None:
        trees.append(checks)
    found = []
    for tree in trees:
        for path in sorted(tree.rglob("*")):
            if path.is_file() and not path.is_symlink() and "__pycache__" not in path.parts:
                found.append((path, f"{tree.name}/{path.relative_to(tree).as_posix()}"))
    return found


# SIGTERM (from the client once the last cell has replied, or because nbgrader died) ends the
# sandbox; the launcher then removes its cgroup and folders and exits. The signal only sets a
# flag and kills the sandbox if it runs, so that it never cuts the set-up or the cleanup short.
_ending: dict[str, Any] = {"now": False, "sandbox": None}


def _on_sigterm(signum: int, frame: object) -> None:
    _ending["now"] = True
    proc = _ending["sandbox"]
    if proc is not None and proc.poll() is None:
        proc.kill()


def end_with_parent() -> None:
    """SIGTERM when nbgrader, which started this launcher, dies (``PR_SET_PDEATHSIG``), so a
    killed grading leaves nothing running."""
    import ctypes

    signal.signal(signal.SIGTERM, _on_sigterm)
    run = run_folder()
    pid_file = run / NBGRADER_PID if run is not None else None
    parent = int(pid_file.read_text()) if pid_file and pid_file.is_file() else os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # nbgrader died before the line above (or before we started)
        os.kill(os.getpid(), signal.SIGTERM)


def main(argv: list[str] | None = None) -> int:
    stamp("launcher")
    end_with_parent()
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        settings = of_run() or Settings()
    except (OSError, ValueError, TypeError) as err:
        return _fail(f"the run's settings cannot be read: {err}")
    limits = sandbox.Limits.of(settings)
    if not settings.sandbox:
        return run_unsandboxed(args, limits)
    if "-f" not in args or args.index("-f") + 1 >= len(args):
        return _fail("usage: python -m autograder.kernel -f CONNECTION_FILE [options]")
    i = args.index("-f")
    connection_file = Path(args[i + 1]).resolve()
    rest = args[:i] + args[i + 2 :]
    problem = sandbox.check_quick()
    if problem:
        hint = " (or grade with python -m course autograde --no-sandbox; see its help)"
        return _fail(problem + hint)
    return run_sandboxed(connection_file, rest, limits)


if __name__ == "__main__":
    sys.exit(main())
