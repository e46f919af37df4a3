"""What happened in one nbgrader command, as records in its run folder (``AFZ_RUN``).

The processes of a grading write what they saw, and the instructor's tool reads the records
(``read``), never the text of a log:

- ``kernels/<name>.json``, one per kernel, by its launcher (``autograder.kernel``):
  ``sandbox`` ("bwrap" or "off"), ``failure`` (why it could not start the kernel),
  ``cgroup_version``, ``cgroup_dirs`` and ``uid`` (to clean up after a killed launcher),
  ``argv`` (the sandbox's command line), ``exit`` (the kernel's exit code, negative for a
  signal), ``ended_by_client`` (the client ended it, as at the end of every grading),
  ``oom_killed``, ``trouble`` (the grader's machine was failing) and ``finished``.
- ``execution.json``, by the executing preprocessor (``nbgrader_plugins.LimitedExecute``):
  ``error`` (the kind of what stopped the execution: "dead kernel", "unresponsive kernel",
  "uninterruptible kernel" (a cell went on running after the time limit's interrupt), "kernel
  start", or the exception's class name) and ``message``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .settings import run_folder

KERNELS = "kernels"
EXECUTION = "execution.json"


def _merge(path: Path, data: dict) -> None:
    old = {}
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except ValueError:
            old = {}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({**old, **data}))
    tmp.replace(path)


def kernel(name: str, **data: object) -> None:
    """Add ``data`` to the record of the kernel ``name`` (nothing outside a run)."""
    run = run_folder()
    if run is not None:
        _merge(run / KERNELS / f"{name}.json", data)


def execution(**data: object) -> None:
    """Add ``data`` to the run's execution record (nothing outside a run)."""
    run = run_folder()
    if run is not None:
        _merge(run / EXECUTION, data)


@dataclass
class Outcome:
    """The records of one run, read back."""

    kernels: list[dict] = field(default_factory=list)
    execution: dict = field(default_factory=dict)

    @property
    def oom_killed(self) -> bool:
        return any(k.get("oom_killed") for k in self.kernels)

    @property
    def sandbox_failure(self) -> str | None:
        """Why a kernel's launcher could not start the kernel (the first such record)."""
        return next((k["failure"] for k in self.kernels if k.get("failure")), None)

    @property
    def grader_trouble(self) -> str | None:
        return next((k["trouble"] for k in self.kernels if k.get("trouble")), None)

    @property
    def error(self) -> str:
        """What stopped the execution ("" : nothing did)."""
        return str(self.execution.get("error", ""))


def read(run: Path) -> Outcome:
    """The records of the run folder ``run``; an unreadable record counts as empty."""
    kernels = []
    for path in sorted((run / KERNELS).glob("*.json")):
        try:
            kernels.append({"name": path.stem, **json.loads(path.read_text())})
        except ValueError:
            continue
    try:
        execution = json.loads((run / EXECUTION).read_text())
    except (OSError, ValueError):
        execution = {}
    return Outcome(kernels, execution)
