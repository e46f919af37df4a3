"""Running a notebook's code cells without Jupyter: the one runner of the replay of the
solution (``autograder.replay``) and of the dry grader (``autograder.dry``).

Each cell runs with ``exec`` in one namespace shared by the notebook's cells, as in a
kernel; what it prints is swallowed; the check records its ``Test`` calls hand out go to a
list of its own (``collect``: ``checks.replay_into`` or ``checks.collect_into``); an optional
alarm stops a cell that runs too long. What the cell raised is returned, not raised: the
replay stops on it, the dry grader records it as the cell's error and goes on, as nbgrader does.
"""

from __future__ import annotations

import contextlib
import io
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Collector = Callable[[list[dict[str, Any]] | None], None]


class CellTimeoutError(Exception):
    """A cell ran past its time limit (``run_cell``'s ``timeout``)."""


@dataclass
class CellRun:
    """What one cell did."""

    name: str
    records: list[dict[str, Any]] = field(default_factory=list)
    error: BaseException | None = None


def _on_alarm(signum: int, frame: Any) -> None:
    raise CellTimeoutError("the cell ran past its time limit")


def new_namespace() -> dict[str, Any]:
    """The globals of a notebook's cells, as a fresh kernel has them."""
    return {"__name__": "__main__"}


def run_cell(
    code: str,
    name: str,
    namespace: dict[str, Any],
    collect: Collector,
    timeout: int | None = None,
) -> CellRun:
    """Run ``code`` (a cell called ``name`` in tracebacks) in ``namespace``; its records and
    the exception it raised, if any (also a ``CellTimeoutError`` after ``timeout`` seconds)."""
    run = CellRun(name)
    collect(run.records)
    if timeout:
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.alarm(timeout)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(code, f"<{name}>", "exec"), namespace)
    except BaseException as err:  # noqa: BLE001 - the caller decides what an error means
        run.error = err
    finally:
        if timeout:
            signal.alarm(0)
        collect(None)
    return run
