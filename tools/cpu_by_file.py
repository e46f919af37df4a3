"""A pytest plugin: the CPU seconds each test file costs, counted with everything it starts.

    make test PYTEST_ARGS="--cpu-by-file=/tmp/cpu"     # or any pytest run of the suite

`make test` keeps both cores busy, so its wall time is the computing it does divided by the
cores; a test's duration says little (it waits for the others). This plugin puts each test
process in a cgroup v1 ``cpuacct`` group of its own, which every process it starts inherits
(grading kernels in their sandbox, Dask workers, Chromium, PostgreSQL: the sandbox limits
memory, pids and cpu, not cpuacct), and charges the group's CPU time to the test file running.
The processes of one run write their counts to ``DIR/run-<pid>/`` (pid: pytest's main
process), which the main process sums and prints as a table (a file's session fixtures are
charged to the file that first uses them).

Loaded by the repository's conftest.py; without ``--cpu-by-file`` it does nothing. Where the
process cannot make a cpuacct group (cgroup v2 only, no root) it says so and counts nothing.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

CPUACCT = Path("/sys/fs/cgroup/cpuacct")


class Counter:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.group = CPUACCT / f"afz-cpu-{os.getpid()}"
        self.group.mkdir(exist_ok=True)
        (self.group / "cgroup.procs").write_text(str(os.getpid()))
        self.files: dict[str, list[float]] = {}  # file -> [CPU s, wall s, tests]
        self.started: tuple[float, float] = (0.0, 0.0)

    def usage(self) -> float:
        return int((self.group / "cpuacct.usage").read_text()) / 1e9

    def start(self) -> None:
        self.started = (self.usage(), time.monotonic())

    def finish(self, nodeid: str) -> None:
        cpu, wall = self.started
        counts = self.files.setdefault(nodeid.split("::")[0], [0.0, 0.0, 0])
        counts[0] += self.usage() - cpu
        counts[1] += time.monotonic() - wall
        counts[2] += 1

    def write(self) -> None:
        record = {"total": self.usage(), "files": self.files}
        (self.out / f"{os.getpid()}.json").write_text(json.dumps(record))
        try:  # back to the parent group, so that this one can go
            (CPUACCT / "cgroup.procs").write_text(str(os.getpid()))
            self.group.rmdir()
        except OSError:
            pass


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-by-file",
        metavar="DIR",
        help="count the CPU seconds of each test file with all it starts (cgroup v1 cpuacct); "
        "the counts go to DIR and a table to the terminal",
    )


def pytest_configure(config: pytest.Config) -> None:
    out = config.getoption("--cpu-by-file")
    if not out:
        return
    main = not hasattr(config, "workerinput")
    if main:  # a folder of this run's own (`make test` runs two passes at once)
        folder = Path(out) / f"run-{os.getpid()}"
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.json"):
            old.unlink()
    else:
        folder = Path(config.workerinput["cpu_by_file_dir"])  # type: ignore[attr-defined]
    try:
        counter: Counter | None = Counter(folder)
    except OSError:  # no cgroup v1 cpuacct here, or not ours to write
        counter = None
    # pytest-xdist's main process only relays the workers' reports: it counts no test
    counting = None if main and _under_xdist(config) else counter
    hooks = _Hooks(counter, counting, folder, main)
    config.pluginmanager.register(hooks, "cpu_by_file_hooks")


class _Hooks:
    def __init__(
        self, counter: Counter | None, counting: Counter | None, folder: Path, main: bool
    ) -> None:
        self.counter = counter  # this process's group (None: nothing can be counted here)
        self.counting = counting  # the same, where this process runs tests
        self.folder = folder
        self.main = main

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        """pytest-xdist: tell each worker where the run's counts go."""
        node.workerinput["cpu_by_file_dir"] = str(self.folder)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        if self.counting:
            self.counting.start()

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        if self.counting:
            self.counting.finish(nodeid)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        if self.counter:
            self.counter.write()

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.main:
            return
        terminalreporter.write_sep("=", "CPU seconds by test file (cpuacct, with all started)")
        if self.counter is None:
            terminalreporter.write_line(
                f"no cgroup of {CPUACCT} could be made here: no CPU counted"
            )
            return
        for line in table(self.folder):
            terminalreporter.write_line(line)


def _under_xdist(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "numprocesses", None))


def counts(folder: Path) -> tuple[dict[str, list[float]], float]:
    """The counts of every process in ``folder`` summed by file (file -> [CPU s, wall s,
    tests]), and the CPU seconds of those processes' groups in all."""
    files: dict[str, list[float]] = {}
    total = 0.0
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text())
        total += record["total"]
        for name, values in record["files"].items():
            summed = files.setdefault(name, [0.0, 0.0, 0])
            for i, value in enumerate(values):
                summed[i] += value
    return files, total


def table(folder: Path) -> list[str]:
    """The counts of ``folder`` as lines of text, most CPU first."""
    files, total = counts(folder)
    counted = sum(c[0] for c in files.values())
    lines = [f"{'CPU s':>8} {'wall s':>8} {'tests':>6}  file"]
    for name, (cpu, wall, n) in sorted(files.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"{cpu:8.0f} {wall:8.0f} {n:6.0f}  {name}")
    lines.append(f"{counted:8.0f} {'':8} {'':6}  in tests; {total - counted:.0f} s outside them")
    return lines
