"""What happened to one graded submission, in words for the instructor's report.

``diagnose`` reads nbgrader's exit code and output, the submitted and the autograded
notebooks: it gives the status (``ok`` or ``error: <why>``, graded 0) and notes such as
*deleted test/locked cell(s) ... restored* or *a cell ran past the time limit*. ``outcome``
sorts a status into one of ``OUTCOMES``.
"""

from __future__ import annotations

import json
from pathlib import Path

from autograder import regions
from course.config import Course
from course.entries import check_notebook
from course.runner import SERVER_STOPPED, grader_memory_mb

OUTCOMES = (
    "graded",
    "timed out",
    "killed for memory",
    "kernel died",
    "kernel unresponsive",
    "sandbox failed",
    "grader error",
    "rejected",
    "no submission",
)
SANDBOX_FAILURE = "afz-grader kernel:"  # how autograder/kernel.py says it could not start


def locked_cells(path: Path) -> dict[str, str]:
    """grade_id -> source of the locked/test cells of a notebook (empty if unreadable)."""
    try:
        nb = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {
        regions.nbgrader_meta(cell).get("grade_id", ""): regions.source_of(cell)
        for cell in nb.get("cells", [])
        if regions.cell_kind(cell) in ("test", "locked")
    }


def _submission_notes(course: Course, submitted: Path) -> list[str]:
    """Missing or broken notebooks, deleted or edited test cells of one submission."""
    notes: list[str] = []
    assignment = submitted.name
    for nb in course.notebook_names(assignment):
        if not (submitted / nb).exists():
            notes.append(f"{nb} was not submitted")
            continue
        problem = check_notebook((submitted / nb).read_bytes())
        if problem:
            notes.append(f"{nb}: {problem}")
            continue
        released = locked_cells(course.exercises / assignment / nb)
        theirs = locked_cells(submitted / nb)
        deleted = sorted(set(released) - set(theirs))
        source = locked_cells(course.solutions / assignment / nb)  # with hidden tests
        edited = sorted(
            g for g in released if g in theirs and theirs[g] not in (released[g], source.get(g))
        )
        if deleted:
            notes.append(f"deleted test/locked cell(s) {', '.join(deleted)} restored")
        if edited:
            notes.append(f"edited test/locked cell(s) {', '.join(edited)} reset to the original")
    return notes


def _error_notes(autograded: Path) -> list[str]:
    """Time limits, memory errors and forbidden calls seen in the autograded notebooks."""
    notes: list[str] = []
    for nb_path in sorted(autograded.glob("*.ipynb")):
        nb = json.loads(nb_path.read_text())
        for cell in nb["cells"]:
            for o in cell.get("outputs", []):
                if o.get("output_type") != "error":
                    continue
                ename = o.get("ename", "")
                if ename == "CellTimeoutError":
                    notes.append("a cell ran past the time limit and was interrupted")
                elif ename == "MemoryError" or "not enough memory" in o.get("evalue", ""):
                    notes.append("a cell ran out of memory (kernel memory limit)")
                elif ename.endswith("ForbiddenCallError") or (
                    "cannot be imported here" in o.get("evalue", "")
                ):
                    notes.append("called a reference/built-in it must replace")
    return notes


def diagnose(
    course: Course,
    rc: int,
    out: str,
    submitted: Path,
    autograded: Path,
    oom: bool = False,
    grader_oom: bool = False,
) -> tuple[str, list[str]]:
    """(status, notes) of one ``nbgrader autograde`` run that exited with ``rc``; ``oom``: its
    kernel's sandbox went over its memory, ``grader_oom``: nbgrader's own processes did."""
    from autograder.sandbox import Limits

    notes = _submission_notes(course, submitted) + _error_notes(autograded)
    notes = list(dict.fromkeys(notes))
    if grader_oom:  # checked first: nbgrader then dies by SIGKILL, as on a timeout
        return (
            "error: killed for memory (nbgrader's own processes went over "
            f"AFZ_GRADER_MEMORY_MB={grader_memory_mb()} MiB with what this notebook printed or "
            "holds; an honest notebook needs far less); graded 0"
        ), notes
    if SERVER_STOPPED in out:  # not the learner's doing: a rerun grades it again
        return "error: the grader stopped during the grading (its nbgrader process died)", notes
    if rc == -9:
        return "error: killed after the per-student time limit (AFZ_STUDENT_TIMEOUT)", notes
    limit = Limits.from_env().memory_mb
    if oom and rc != 0:
        return (
            "error: killed for memory (its processes together went over the sandbox's "
            f"{limit} MiB); graded 0"
        ), notes
    if oom:
        notes.append(f"a process was killed for memory (the sandbox's {limit} MiB)")
    if rc != 0:
        if SANDBOX_FAILURE in out:
            why = next(x for x in out.splitlines() if SANDBOX_FAILURE in x)
            return f"error: the grading sandbox failed to start ({why.strip()})", notes
        if "DeadKernelError" in out or "Kernel died" in out or "kernel died" in out:
            return "error: the kernel died (e.g. os._exit or a crash); graded 0", notes
        if "UnresponsiveKernelError" in out or "became unresponsive" in out:
            return "error: the kernel stopped responding; graded 0", notes
        return "error: nbgrader autograde failed (see the log); graded 0", notes
    return "ok", notes


def outcome(status: str) -> str:
    """The one of ``OUTCOMES`` that ``status`` (from ``diagnose``) means."""
    for key, name in (
        ("time limit", "timed out"),
        ("killed for memory", "killed for memory"),
        ("sandbox failed", "sandbox failed"),
        ("kernel died", "kernel died"),
        ("stopped responding", "kernel unresponsive"),
    ):
        if key in status:
            return name
    return "graded" if status == "ok" else "grader error"
