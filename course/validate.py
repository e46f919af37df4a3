"""``validate``: a notebook's visible tests, run the way the grader runs them (for learners,
or for the instructor on one notebook)."""

from __future__ import annotations

import importlib.util
import re
import sys
from dataclasses import replace
from pathlib import Path

from course.config import Course
from course.grading.nbgrader_command import nbgrader

# nbgrader cuts every line of its report at this width (90 by default), which cut the hints of
# the checks' messages: it gets room for whole lines, and its separators are drawn here again.
REPORT_WIDTH = 5000
SEPARATOR_WIDTH = 90
_SEPARATOR = re.compile(r"^\s*={20,}\s*$")
_PACKED = re.compile(r'(expected=")afz1:[A-Za-z0-9+/=]*(?:\.\.\.)?"?')
NOT_INSTALLED = (
    "nbgrader is not installed in this Python ({python}): `python -m course validate` runs "
    "`nbgrader validate`. Install the course's grading tools (`make venv`), or check the "
    "notebook without them: Kernel > Restart Kernel and Run All Cells in Jupyter runs every "
    "visible check."
)


def validation_passed(output: str) -> bool:
    """``nbgrader validate`` exits 0 even when tests fail: read its verdict from the output."""
    failed = ("VALIDATION FAILED", "THE CONTENTS OF", "THE TYPES OF", "[ValidateApp | ERROR]")
    return "Success! Your notebook passes all the tests." in output and not any(
        f in output for f in failed
    )


def report(output: str) -> str:
    """nbgrader's report for a reader: its log lines left out but for errors, every line
    whole, separators of a readable width, a test cell's packed solution values shortened."""
    lines = []
    for line in output.splitlines():
        if line.startswith("[") and "ERROR" not in line:
            continue
        if _SEPARATOR.match(line):
            line = "=" * SEPARATOR_WIDTH
        lines.append(_PACKED.sub(r'\1afz1:…"', line))
    return "\n".join(lines).strip()


def validate(paths: list[Path], course: Course) -> bool:
    """Run the visible tests of each notebook, in the sandbox where this machine has one;
    print nbgrader's report. True when every notebook passed."""
    if importlib.util.find_spec("nbgrader") is None:
        print(NOT_INSTALLED.format(python=sys.executable))
        return False
    from autograder import sandbox as sb

    settings = replace(course.settings, sandbox=sb.check_quick() is None)
    ok = True
    for path in paths:
        args = ["validate", str(path.resolve()), f"--Validator.width={REPORT_WIDTH}"]
        rc, out = nbgrader(args, course, settings=settings)
        passed = rc == 0 and validation_passed(out)
        ok &= passed
        print(report(out))
        print(f"{path}: {'PASSED' if passed else 'FAILED'}")
    return ok
