"""``validate``: a notebook's visible tests, run the way the grader runs them (for learners,
or for the instructor on one notebook)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from course.config import Course
from course.runner import nbgrader


def validation_passed(output: str) -> bool:
    """``nbgrader validate`` exits 0 even when tests fail: read its verdict from the output."""
    failed = ("VALIDATION FAILED", "THE CONTENTS OF", "THE TYPES OF", "[ValidateApp | ERROR]")
    return "Success! Your notebook passes all the tests." in output and not any(
        f in output for f in failed
    )


def validate(paths: list[Path], course: Course) -> bool:
    """Run the visible tests of each notebook, in the sandbox where this machine has one;
    print nbgrader's report. True when every notebook passed."""
    from autograder import sandbox as sb

    settings = replace(course.settings, sandbox=sb.check_quick() is None)
    ok = True
    for path in paths:
        rc, out = nbgrader(["validate", str(path.resolve())], course, settings=settings)
        passed = rc == 0 and validation_passed(out)
        ok &= passed
        lines = [x for x in out.splitlines() if not x.startswith("[") or "ERROR" in x]
        print("\n".join(lines).strip())
        print(f"{path}: {'PASSED' if passed else 'FAILED'}")
    return ok
