"""A kernel that ran out of memory under its own limit, and died of it later, is diagnosed as
killed for memory: the launcher notes the sign (``autograder.kernel``), the status says it."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from support import REPO

from autograder import kernel, outcomes
from course import diagnose as diagnosis
from course.config import Course


class Chunks:
    """A stream that gives ``chunks`` one read at a time."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)

    def read(self, size: int) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""


def record(run: Path, name: str) -> dict:
    path = run / outcomes.KERNELS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def test_the_kernels_dying_words_about_memory_are_noted(tmp_path, monkeypatch):
    monkeypatch.setenv("AFZ_RUN", str(tmp_path))
    monkeypatch.setattr("sys.stderr", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    # A sign cut in two by the stream's reads, past the part that is logged.
    kernel._forward(Chunks(b"x" * 100, b"Traceback ...\nMemoryE", b"rror\n"), "k1", limit=10)
    assert record(tmp_path, "k1")["out_of_memory"] == "it wrote that memory ran out"
    for words in (b"FATAL ERROR: OUT OF MEMORY (src/msg.cpp:42)", b"std::bad_alloc"):
        kernel._forward(Chunks(words), "k2")
        assert record(tmp_path, "k2")["out_of_memory"]
    kernel._forward(Chunks(b"Error: no such file\n", b"MemoryView ok\n"), "k3")
    assert "out_of_memory" not in record(tmp_path, "k3")


class OneProcess:
    """A stand-in for the sandbox's cgroup: one process in it."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def pids(self) -> set[int]:
        return {self.pid}


def watched_with_limit(tmp_path: Path, name: str, pid: int, above_peak_mb: int) -> dict:
    """The record after watching ``pid`` under a limit ``above_peak_mb`` over its peak."""
    status = Path(f"/proc/{pid}/status").read_text()
    peak_mb = int(re.search(r"^VmPeak:\s+(\d+) kB", status, re.M).group(1)) >> 10
    done = threading.Event()
    watch = threading.Thread(
        target=kernel._watch_address_space,
        args=(name, OneProcess(pid), peak_mb + above_peak_mb, done),
    )
    watch.start()
    watch.join(timeout=1.0)  # it ends once it has noted; else it looks until told to stop
    done.set()
    watch.join()
    return record(tmp_path, name)


def test_a_full_address_space_is_noted_and_room_left_is_not(tmp_path, monkeypatch):
    monkeypatch.setenv("AFZ_RUN", str(tmp_path))
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        time.sleep(0.5)  # started: its peak no longer grows
        full = watched_with_limit(tmp_path, "full", child.pid, 8)
        assert full["out_of_memory"].startswith("a process used"), full
        assert "out_of_memory" not in watched_with_limit(tmp_path, "room", child.pid, 64)
    finally:
        child.kill()
        child.wait()


def test_a_kernel_dead_after_running_out_of_memory_is_killed_for_memory():
    records = outcomes.Outcome(
        kernels=[{"exit": -6, "ended_by_client": False, "out_of_memory": "a process used it"}],
        execution={"error": "dead kernel"},
    )
    run = diagnosis.Run(1, "", outcome=records)
    status, notes = diagnosis.diagnose(Course(REPO), run, REPO / "no", REPO / "no")
    assert diagnosis.outcome(status) == "killed for memory", status
    assert "ran out of memory" in status and "graded 0" in status, status
    # Without the sign, the same death is the kernel dying, as before.
    records.kernels[0].pop("out_of_memory")
    status, _ = diagnosis.diagnose(Course(REPO), run, REPO / "no", REPO / "no")
    assert diagnosis.outcome(status) == "kernel died", status
    # A kernel that ran out and lived on is graded, with a note that says so.
    records.kernels[0]["out_of_memory"] = "it wrote that memory ran out"
    status, notes = diagnosis.diagnose(
        Course(REPO), diagnosis.Run(0, "", outcome=records), REPO / "no", REPO / "no"
    )
    assert status == "ok" and any("ran out of memory" in n for n in notes), notes
