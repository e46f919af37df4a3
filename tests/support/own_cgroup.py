"""Each test process in a cgroup of its own, so that "what did this run leave behind?" has an
answer while other test processes grade beside it (``make test`` runs pytest-xdist workers).

The sandbox puts a kernel's cgroup below the cgroup of the command that launched it
(``autograder.sandbox``), and a process cannot leave its cgroup (only root outside the sandbox
can move it). So with the test process in ``<its cgroup>/afz-tests-<pid>``, every kernel any
of its commands started, and every process such a kernel forked, lives below that folder:
``support.sandbox_runs.sandbox_leftovers`` counts only those. Where no cgroup is writable
(``join`` returns False), leftovers are counted machine-wide, as a lone pytest may do.
"""

from __future__ import annotations

import os
from pathlib import Path

from autograder import sandbox

ROOT = sandbox.CGROUP_ROOT
CONTROLLERS = ("memory", "pids", "cpu")  # the v1 controllers the sandbox limits with
_joined: dict[Path, Path] = {}  # this process's cgroup folder -> the parent it came from
_names: set[str] = set()  # the same folders, as /proc/PID/cgroup names them


def join() -> bool:
    """Move this process into a fresh cgroup of its own (every v1 controller the sandbox uses,
    or the v2 tree); False, and nothing changed, where that is not possible."""
    own = sandbox._own_cgroup_paths()  # controller (or "" for v2's one tree) -> path
    name = f"afz-tests-{os.getpid()}"
    mounts = [ROOT / c for c in CONTROLLERS if c in own and (ROOT / c).is_dir()]
    paths = [(m, own[m.name]) for m in mounts]
    if not paths and "" in own and (ROOT / "cgroup.controllers").exists():
        paths = [(ROOT, own[""])]
    made: dict[Path, Path] = {}
    try:
        for mount, path in paths:
            parent = mount / path.lstrip("/")
            mine = parent / name
            mine.mkdir(exist_ok=True)
            made[mine] = parent
            (mine / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        _leave(made)
        return False
    _joined.update(made)
    _names.update(f"{path.rstrip('/')}/{name}" for _, path in paths)
    return bool(made)


def folders() -> list[Path]:
    """This process's own cgroup folders (empty when ``join`` did not happen)."""
    return list(_joined)


def holds(pid: int) -> bool:
    """Whether process ``pid`` is in this process's own cgroup or below it (False for a
    process that is gone)."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return False
    paths = {line.split(":", 2)[2] for line in lines}
    return any(p == n or p.startswith(n + "/") for p in paths for n in _names)


def leave() -> None:
    """Back to the parent cgroups; the own ones are removed when nothing is left in them."""
    _leave(dict(_joined))
    _joined.clear()
    _names.clear()


def _leave(made: dict[Path, Path]) -> None:
    for mine, parent in made.items():
        try:
            (parent / "cgroup.procs").write_text(str(os.getpid()))
            for child in sorted(mine.rglob("*"), key=lambda p: -len(p.parts)):
                if child.is_dir():
                    child.rmdir()  # fails (and keeps them) where processes are still inside
            mine.rmdir()
        except OSError:
            pass
