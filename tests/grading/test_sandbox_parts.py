"""The grading sandbox's parts, each on its own: nbgrader held to its memory, no autograde
without a sandbox, nothing of the course mounted, the folders a learner may write, removal of
any tree, a grader's full disk, the system calls denied. (The attacked class through the real
workflow: tests/grading/test_sandbox.py.)"""

from __future__ import annotations

import os
import subprocess
import tempfile

import pytest
from support import REPO

from autograder import sandbox
from course.cli import main
from course.config import Course

A1 = "01_attention"
NB = "attention.ipynb"

pytestmark = pytest.mark.skipif(
    sandbox.check_quick() is not None, reason=f"no sandbox here: {sandbox.check_quick()}"
)


# ---------------------------------------------------------------------------------------
# Without a sandbox
# ---------------------------------------------------------------------------------------
def test_autograde_refuses_without_a_sandbox(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "check", lambda: "bwrap is not installed")
    (tmp_path / "solutions").symlink_to(REPO / "solutions")
    sub = tmp_path / "submitted" / "someone" / A1
    sub.mkdir(parents=True)
    (sub / NB).write_text((REPO / "exercises" / A1 / NB).read_text())
    assert main(["--root", str(tmp_path), "autograde", A1]) == 2
    err = capsys.readouterr().err
    assert "bwrap is not installed" in err and "--no-sandbox" in err
    assert not (tmp_path / "gradebook.db").exists()


def test_sandbox_mounts_nothing_of_the_course():
    argv = sandbox.bwrap_argv(
        ["true"], uid=123456, limits=sandbox.Limits(), read_only=sandbox.python_paths()
    )
    text = " ".join(argv)
    for secret in ("solutions", "gradebook", str(REPO / "course"), "autograder", "submitted"):
        assert secret not in text
    assert "--unshare-net" in argv and "--unshare-pid" in argv and "--die-with-parent" in argv


def test_a_read_only_tree_under_tmp_stays_visible(tmp_path):
    """CI clones the course under /tmp: the sandbox's own /tmp must not hide its venv."""
    tree = tmp_path / "checkout"
    tree.mkdir()
    (tree / "marker.txt").write_text("visible")
    passwd = sandbox.passwd_fd(123457)
    argv = sandbox.bwrap_argv(
        ["/bin/cat", str(tree / "marker.txt")],
        uid=123457,
        limits=sandbox.Limits(),
        read_only=[str(tree)],
        ro_data=[(passwd, "/etc/passwd")],
    )
    try:
        out = subprocess.run(argv, pass_fds=(passwd,), capture_output=True, text=True, timeout=60)
    finally:
        os.close(passwd)
    assert out.returncode == 0 and out.stdout == "visible", out.stderr


def test_a_submitted_file_in_a_sub_folder_is_writable_by_the_learner(tmp_path):
    """Folders made for the submission's own files belong to the learner, not to root."""
    src = tmp_path / "data.txt"
    src.write_text("x")
    fd = os.open(src, os.O_RDONLY)
    uid = 123458
    argv = sandbox.bwrap_argv(
        [
            "/bin/sh",
            "-c",
            f"echo y >> {sandbox.WORK}/data/more/data.txt && touch {sandbox.WORK}/data/new",
        ],
        uid=uid,
        limits=sandbox.Limits(),
        read_only=[],
        files=[(fd, f"{sandbox.WORK}/data/more/data.txt")],
    )
    try:
        out = subprocess.run(argv, pass_fds=(fd,), capture_output=True, text=True, timeout=60)
    finally:
        os.close(fd)
    assert out.returncode == 0, out.stderr


def test_a_tree_of_any_depth_is_removed(tmp_path):
    from autograder.kernel import remove_tree

    top = tmp_path / "deep"
    top.mkdir()
    here = os.getcwd()
    os.chdir(top)
    try:
        for _ in range(1500):  # deeper than Python's recursion limit
            os.mkdir("d")
            os.chdir("d")
    finally:
        os.chdir(here)
    remove_tree(top)
    assert not top.exists()


def test_a_kernel_that_died_on_a_full_grader_disk_is_the_graders_failure(monkeypatch):
    from autograder import kernel, outcomes
    from course.diagnose import diagnose, outcome
    from course.grading.nbgrader_command import Run

    monkeypatch.setattr(kernel, "MIN_FREE_MB", 1 << 40)  # every disk counts as full
    trouble = kernel.grader_trouble()
    assert trouble and "disk is full" in trouble
    records = outcomes.Outcome(
        kernels=[{"exit": -9, "ended_by_client": False, "trouble": trouble}],
        execution={"error": "dead kernel"},
    )
    status, _ = diagnose(Course(REPO), Run(1, "", outcome=records), REPO / "no", REPO / "no")
    assert outcome(status) == "sandbox failed"  # graded again by the next run, not a 0
    # The same death with a healthy disk is the learner's kernel dying: graded 0.
    records.kernels[0].pop("trouble")
    status, _ = diagnose(Course(REPO), Run(1, "", outcome=records), REPO / "no", REPO / "no")
    assert outcome(status) == "kernel died", status


def test_a_cell_that_goes_on_after_the_interrupt_is_named_in_the_status():
    """nbclient's CellTimeoutError (the kernel still busy after the interrupt's grace) is
    recorded as its own kind, and the status says what happened: not "see the log"."""
    from nbclient.exceptions import CellTimeoutError

    from autograder import outcomes
    from autograder.preprocessors.limited_execute import execution_error
    from course.diagnose import diagnose, outcome
    from course.grading.nbgrader_command import Run

    kind = execution_error(CellTimeoutError("Timeout waiting for IOPub output"))
    records = outcomes.Outcome(kernels=[{"exit": -15}], execution={"error": kind})
    status, _ = diagnose(Course(REPO), Run(1, "", outcome=records), REPO / "no", REPO / "no")
    assert "went on running when interrupted" in status and "graded 0" in status, status
    assert outcome(status) == "timed out"


SYSCALL_PROBE = """
import ctypes, errno, subprocess
libc = ctypes.CDLL(None, use_errno=True)
calls = {"unshare(CLONE_NEWUSER)": (272, 0x10000000), "setns": (308, 0, 0),
         "mount": (165, 0, 0, 0, 0, 0), "ptrace(PTRACE_ATTACH, 1)": (101, 16, 1, 0, 0),
         "bpf": (321, 0, 0, 0), "perf_event_open": (298, 0, 0, 0, 0, 0), "keyctl": (250, 0, 0),
         "init_module": (175, 0, 0, 0), "finit_module": (313, 0, 0, 0),
         "clone(CLONE_NEWUSER)": (56, 0x10000000 | 17, 0, 0, 0, 0),
         "process_vm_writev": (311, 1, 0, 0, 0, 0, 0), "userfaultfd": (323, 0),
         "io_uring_setup": (425, 8, ctypes.addressof(ctypes.create_string_buffer(120))),
         "io_uring_register": (427, 0, 0, 0, 0), "io_setup": (206, 8, 0),
         "kcmp": (312, 1, 1, 0, 0, 0), "pidfd_getfd": (438, 0, 0, 0),
         "lookup_dcookie": (212, 0, 0, 0), "quotactl": (179, 0, 0, 0, 0),
         "syslog": (103, 3, 0, 0), "settimeofday": (164, 0, 0), "clock_settime": (227, 0, 0),
         "adjtimex": (159, 0), "vhangup": (153,), "iopl": (172, 3), "ioperm": (173, 0, 8, 1),
         "modify_ldt": (154, 0, 0, 0), "memfd_secret": (447, 0), "fanotify_init": (300, 0, 0),
         "personality(ADDR_NO_RANDOMIZE)": (135, 0x0040000)}
for name, (nr, *args) in calls.items():
    ctypes.set_errno(0)
    r = libc.syscall(nr, *args)
    print("DENIED" if r == -1 and ctypes.get_errno() == errno.EPERM else "ALLOWED", name)
print("personality asked:", libc.syscall(135, 0xFFFFFFFF), libc.syscall(135, 0))
u = subprocess.run(["unshare", "--user", "--map-root-user", "true"], capture_output=True)
print("DENIED" if u.returncode else "ALLOWED", "unshare --user")
print("threads and processes:", subprocess.run(["echo", "fine"], capture_output=True).stdout)
"""


@pytest.mark.parametrize("with_filter", [True, False], ids=["filtered", "unfiltered"])
def test_the_sandbox_denies_the_system_calls_a_notebook_never_needs(with_filter):
    from autograder import seccomp

    uid = sandbox.sandbox_uid()
    passwd = sandbox.passwd_fd(uid)
    rules = sandbox.data_fd(seccomp.program() or b"") if with_filter else None
    argv = sandbox.bwrap_argv(
        [sandbox.python_executable(), "-I", "-c", SYSCALL_PROBE],
        uid=uid,
        limits=sandbox.Limits(),
        read_only=sandbox.python_paths(),
        ro_data=[(passwd, "/etc/passwd")],
        seccomp_fd=rules,
    )
    fds = (passwd,) if rules is None else (passwd, rules)
    out = subprocess.run(argv, pass_fds=fds, capture_output=True, text=True, timeout=120)
    for fd in fds:
        os.close(fd)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "threads and processes: b'fine" in out.stdout
    lines = [line for line in out.stdout.splitlines() if line.startswith(("DENIED", "ALLOWED"))]
    assert len(lines) == 31, out.stdout
    if with_filter:
        assert all(line.startswith("DENIED") for line in lines), out.stdout
        assert "personality asked: 0 0" in out.stdout  # asking, and the plain one, still work
    else:  # without the filter a user namespace, io_uring and no ASLR are there for the taking
        for name in ("unshare(CLONE_NEWUSER)", "io_uring_setup", "personality(ADDR_NO_RANDOMIZE)"):
            assert f"ALLOWED {name}" in lines, out.stdout


# The kernel's own filter, tried the way a notebook would get past Python's functions: the C
# library's fork and posix_spawn, and exec; then what an honest notebook needs.
PROCESS_PROBE = """
import ctypes, errno, os, subprocess, threading
libc = ctypes.CDLL(None, use_errno=True)
ctypes.set_errno(0)
child = libc.fork()
if child == 0:
    libc._exit(0)
print("DENIED" if child == -1 and ctypes.get_errno() == errno.EPERM else "ALLOWED", "fork")
argv = (ctypes.c_char_p * 2)(b"true", None)
spawned = libc.posix_spawn(ctypes.byref(ctypes.c_int()), b"/bin/true", None, None, argv, None)
print("DENIED" if spawned == errno.EPERM else "ALLOWED", "posix_spawn")
ctypes.set_errno(0)
libc.syscall(59, None, None, None)  # no program: if allowed, it fails with EFAULT
print("DENIED" if ctypes.get_errno() == errno.EPERM else "ALLOWED", "execve")
try:
    subprocess.run(["true"])
    print("subprocess ran")
except PermissionError as err:
    print("subprocess:", err)
import numpy, torch, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([1, 2])
plt.savefig("/tmp/plot.png")
found = []
workers = [threading.Thread(target=found.append, args=(i,)) for i in range(4)]
for w in workers:
    w.start()
for w in workers:
    w.join()
print("threads:", sorted(found), "torch:", torch.ones(50, 50).sum().item())
"""


@pytest.mark.parametrize("with_filter", [True, False], ids=["own filter", "without"])
def test_the_kernel_starts_no_process_and_keeps_threads_and_libraries(with_filter):
    """The grading kernel's start-up code installs its own filter over the sandbox's: no
    process (not even through the C library), threads, numpy, torch and matplotlib as usual."""
    from autograder import seccomp

    code = seccomp.kernel_start_code(then=PROCESS_PROBE) if with_filter else PROCESS_PROBE
    uid = sandbox.sandbox_uid()
    passwd = sandbox.passwd_fd(uid)
    rules = sandbox.data_fd(seccomp.program() or b"")
    argv = sandbox.bwrap_argv(
        [sandbox.python_executable(), "-c", code],
        uid=uid,
        limits=sandbox.Limits(),
        read_only=sandbox.python_paths(),
        ro_data=[(passwd, "/etc/passwd")],
        env={"HOME": sandbox.HOME, "MPLCONFIGDIR": "/tmp/matplotlib", "OMP_NUM_THREADS": "1"},
        seccomp_fd=rules,
    )
    try:
        out = subprocess.run(argv, pass_fds=(passwd, rules), capture_output=True, text=True)
    finally:
        os.close(passwd)
        os.close(rules)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "threads: [0, 1, 2, 3] torch: 2500.0" in out.stdout, out.stdout
    verdicts = [line for line in out.stdout.splitlines() if line.startswith(("DENIED", "ALLOWED"))]
    assert len(verdicts) == 3, out.stdout
    if with_filter:
        assert all(v.startswith("DENIED") for v in verdicts), out.stdout
        assert f"subprocess: [Errno 1] {seccomp.NO_PROCESS}" in out.stdout
    else:
        assert all(v.startswith("ALLOWED") for v in verdicts), out.stdout
        assert "subprocess ran" in out.stdout


def test_the_kernels_log_has_its_control_characters_escaped(monkeypatch):
    """What the kernel writes to its own stderr reaches the instructor's logs as text: a
    terminal escape, a carriage return or a bidirectional override is written as an escape,
    also when a chunk of the stream ends inside a character."""
    import io

    from autograder.kernel import _forward

    raw = "ok \x1b]0;owned\x07\x1b[2J\r\u202etxt.exe é\n".encode()
    cut = raw.index("é".encode()) + 1  # the stream's first read ends inside "é"
    chunks = [raw[:cut], raw[cut:]]

    class Stream:
        def read(self, size: int) -> bytes:
            return chunks.pop(0) if chunks else b""

    sink = io.BytesIO()
    monkeypatch.setattr("sys.stderr", io.TextIOWrapper(sink, encoding="utf-8"))
    _forward(Stream(), "k1")
    text = sink.getvalue().decode()
    assert text == "ok \\x1b]0;owned\\x07\\x1b[2J\\r\\u202etxt.exe é\n", repr(text)


def test_the_kernel_gets_the_course_packages_and_nothing_of_the_grader(tmp_path):
    from autograder.kernel import course_files

    files = dict((inside, here) for here, inside in course_files(tmp_path, A1))
    assert "checks/recorder.py" in files and "helpers/__init__.py" in files
    assert "helpers/attention.py" in files  # a stub for the exercise's own piece
    assert "cannot be imported here" in files["helpers/attention.py"].read_text()
    assert not [p for p in files if p.startswith("autograder") or "__pycache__" in p]
    assert not [p for p in files if p.startswith("helpers/weights")]


def test_a_run_folder_under_a_deep_tmpdir_goes_where_socket_paths_fit(tmp_path, monkeypatch):
    from course.grading import nbgrader_command

    deep = tmp_path / ("a-deep-temporary-folder-" * 4)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    assert nbgrader_command._short_tempdir() == "/tmp"
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    if len(str(tmp_path)) + nbgrader_command.SOCKET_NAME_ROOM <= nbgrader_command.SOCKET_PATH_MAX:
        assert nbgrader_command._short_tempdir() == str(tmp_path)


# ---------------------------------------------------------------------------------------
# The instructor's own process
# ---------------------------------------------------------------------------------------
def test_the_instructors_process_reads_learners_notebooks_only_under_collects_limits(
    tmp_path, capsys
):
    """The summary's notes (``course.diagnose``) and the similarity report read a submitted
    or autograded notebook in a child under collect_memory_mb: one that needs more is named,
    and this process never holds it."""
    import json

    from course.config import load_settings
    from course.diagnose import diagnose
    from course.grading.nbgrader_command import Run
    from course.similarity import similarity

    root = tmp_path / "course"
    root.mkdir()
    for folder in ("solutions", "exercises"):
        (root / folder).symlink_to(REPO / folder)
    honest = (REPO / "solutions" / A1 / NB).read_text()
    # 3 million empty lists: about 200 MiB once read, 9 MB on disk
    heavy = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    heavy = heavy.replace('"cells": []', '"cells": [' + ",".join(["[]"] * 3_000_000) + "]")
    for student, text in {"ann": honest, "bob": honest, "heavy": heavy}.items():
        for stage in ("submitted", "autograded"):
            (root / stage / student / A1).mkdir(parents=True)
            (root / stage / student / A1 / NB).write_text(text)
    course = Course(root, load_settings(root, ["collect_memory_mb=64"]))
    submitted, autograded = (root / s / "heavy" / A1 for s in ("submitted", "autograded"))
    status, notes = diagnose(course, Run(0, ""), submitted, autograded)
    assert status == "ok"
    assert any("not read for notes: needs more than 64 MiB" in n for n in notes), notes
    status, notes = diagnose(
        course, Run(0, ""), *(root / s / "ann" / A1 for s in ("submitted", "autograded"))
    )
    assert status == "ok" and notes == [], notes
    pairs = similarity(course, A1, tmp_path / "similarity")
    assert [(p.a, p.b) for p in pairs] == [("ann", "bob")]
    assert "heavy" in capsys.readouterr().out
