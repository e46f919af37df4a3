"""The course's commands run as an instructor runs them, and what sandboxes left running;
shared by tests/grading/test_sandbox.py and tests/grading/test_sandbox_parts.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psutil

from autograder import sandbox
from support import REPO, own_cgroup

# The tests' limits: lower than the defaults, so an attack that runs away ends sooner.
TEST_SETTINGS = ("cell_timeout=60", "kernel_memory_mb=2048")


def run_course(
    root: Path, *args: str, timeout: float = 900, settings: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    """``python -m course --root ROOT --set NAME=VALUE ... ARGS`` (``TEST_SETTINGS``, then
    ``settings``)."""
    options = [f"--set={s}" for s in (*TEST_SETTINGS, *settings)]
    return subprocess.run(
        [sys.executable, "-m", "course", "--root", str(root), *options, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def sandbox_leftovers() -> dict[str, set]:
    """Processes running as a sandbox user and sandbox cgroups, now: those below this test
    process's own cgroup (``support.own_cgroup``) where it has one, else on the whole machine."""
    mine = own_cgroup.folders()
    procs = set()
    for p in psutil.process_iter(["pid", "uids", "create_time"]):
        if not (p.info["uids"] and p.info["uids"].real >= sandbox.UID_BASE):
            continue
        if mine and not own_cgroup.holds(p.info["pid"]):
            continue
        procs.add((p.info["pid"], p.info["create_time"]))
    # kernels' and nbgrader commands' cgroups, in v1's controllers or v2's one tree
    where = mine or [Path("/sys/fs/cgroup")]
    groups = {p for top in where for p in top.rglob(sandbox.GROUP + "/*") if p.is_dir()}
    return {"processes": procs, "cgroups": groups}
