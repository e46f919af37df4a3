"""What happened in one nbgrader command, as records in its run folder (``AFZ_RUN``).

The processes of a grading write what they saw, and the instructor's tool reads the records
(``read``), never the text of a log:

- ``kernels/<name>.json``, one per kernel, by its launcher (``autograder.kernel``):
  ``sandbox`` ("bwrap" or "off"), ``failure`` (why it could not start the kernel),
  ``cgroup_version``, ``cgroup_dirs`` and ``uid`` (to clean up after a killed launcher),
  ``argv`` (the sandbox's command line), ``exit`` (the kernel's exit code, negative for a
  signal), ``ended_by_client`` (the client ended it, as at the end of every grading),
  ``oom_killed``, ``out_of_memory`` (a sign that a process of the kernel ran out of memory
  under its own limit: what it wrote, or its address space full), ``trouble`` (the grader's
  machine was failing) and ``finished``.
- ``execution.json``, by the executing preprocessor
  (``preprocessors.limited_execute.LimitedExecute``): ``error`` (the kind of what stopped the
  execution: "dead kernel", "unresponsive kernel", "uninterruptible kernel" (a cell went on
  running after the time limit's interrupt), "kernel start", or the exception's class name),
  ``message``, and ``output_capped`` (the bytes of output, counted against the setting
  output_mb, once the cap was reached).
- ``feedback.json``, by ``preprocessors.safe_feedback.SafeFeedback``: student -> why that
  student's feedback page was not written (its time limit).

``escaped`` makes text that a notebook may have written (the kernel's own output, names and
messages in nbgrader's log) safe to write into a log or onto a terminal.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .settings import run_folder

KERNELS = "kernels"
EXECUTION = "execution.json"
FEEDBACK = "feedback.json"


# Control characters (but the line feed and the tab), C1 controls included, and the Unicode
# marks that reorder how a line is shown (bidirectional embeddings, overrides and isolates).
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def escaped(text: str) -> str:
    """``text`` with its control characters written as escapes (``\\x1b``, ``\\u202e``): a
    terminal escape or a carriage return in a notebook's output shows as text in a log, and
    neither moves the cursor nor rewrites what a terminal shows."""
    return CONTROLS.sub(lambda m: ascii(m.group())[1:-1], text)


_merging = threading.Lock()  # the launcher's threads write the same record


def _merge(path: Path, data: dict) -> None:
    with _merging:
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


def feedback(student: str, why: str) -> None:
    """Note why ``student``'s feedback page was not written (nothing outside a run)."""
    run = run_folder()
    if run is not None:
        _merge(run / FEEDBACK, {student: why})


@dataclass
class Outcome:
    """The records of one run, read back."""

    kernels: list[dict] = field(default_factory=list)
    execution: dict = field(default_factory=dict)
    feedback: dict = field(default_factory=dict)  # student -> why no feedback page

    @property
    def oom_killed(self) -> bool:
        return any(k.get("oom_killed") for k in self.kernels)

    @property
    def out_of_memory(self) -> str | None:
        """The first sign that a kernel's process ran out of memory under its own limit."""
        return next((k["out_of_memory"] for k in self.kernels if k.get("out_of_memory")), None)

    @property
    def sandbox_failure(self) -> str | None:
        """Why a kernel's launcher could not start the kernel (the first such record)."""
        return next((k["failure"] for k in self.kernels if k.get("failure")), None)

    @property
    def grader_trouble(self) -> str | None:
        return next((k["trouble"] for k in self.kernels if k.get("trouble")), None)

    @property
    def output_capped(self) -> int:
        """The bytes of output counted when the cap was reached (0: it was not)."""
        value = self.execution.get("output_capped", 0)
        return value if isinstance(value, int) else 0

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
    return Outcome(kernels, _read_dict(run / EXECUTION), _read_dict(run / FEEDBACK))


def _read_dict(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
