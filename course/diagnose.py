"""What happened to one graded submission, in words for the instructor's report.

``diagnose`` reads what the nbgrader command recorded (``course.grading.nbgrader_command.Run``: its
exit code, whether it was killed, the kernels' and the execution's records of
``autograder.outcomes``), the submitted and the autograded notebooks, never the text of its log:
it gives the status (``ok`` or ``error: <why>``, graded 0) and notes such as *deleted test/locked
cell(s) ... restored* or *a cell ran past the time limit*. ``outcome`` sorts a status into one
of ``OUTCOMES``.
"""

from __future__ import annotations

import json
from pathlib import Path

from autograder import regions
from autograder.outcomes import escaped
from course.config import Course
from course.entries import check_notebook, limits_problem, run_limited
from course.grading.nbgrader_command import Run

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
                elif regions.is_test_cell(cell):
                    note = _refusal_note(cell, ename, str(o.get("evalue", "")))
                    if note:
                        notes.append(note)
    return notes


def _refusal_note(cell: dict, ename: str, message: str) -> str | None:
    """What a test cell's verdict refused, in one line for the instructor: the call, the cell
    and the line, as the verdict names them (``None``: not a refusal)."""
    grade_id = regions.nbgrader_meta(cell).get("grade_id", "?")
    if ename.endswith("ForbiddenCallError"):
        first = message.split(". ")[0].split("\n")[0][:300]
        return f"{grade_id} refused: {first}"
    if "cannot be imported here" in message:
        module = message.split(" cannot be imported here")[0].split()[-1]
        return f"{grade_id}: the code it calls imports the course's {module}, absent while graded"
    return None


def _reading_notes(run: Run) -> list[str]:
    """What the grader's reading noted of the learner's code (it costs nothing)."""
    notes = run.outcome.execution.get("reading_notes", [])
    return [f"note: {n}"[:400] for n in notes[:20] if isinstance(n, str)]


def _notebook_notes(course: Course, submitted: Path, autograded: Path) -> list[str]:
    """The notes of the submitted and autograded notebooks, read in a child under collect's
    limits (``entries.run_limited``): this process never parses a learner's notebook."""
    settings = course.settings
    notes, failure = run_limited(
        lambda: _submission_notes(course, submitted) + _error_notes(autograded),
        settings.collect_memory_mb,
        settings.collect_timeout,
    )
    if failure:
        return [f"its notebooks were not read for notes: {limits_problem(failure, settings)}"]
    return [str(n) for n in notes]


def _output_notes(course: Course, run: Run) -> list[str]:
    """Whether the notebook printed past the output cap (its tests' results are kept)."""
    if not run.outcome.output_capped:
        return []
    return [
        f"printed more than the output limit ({course.settings.where('output_mb')}): the rest "
        "of its output was not kept; the tests' results were, and were graded"
    ]


def diagnose(course: Course, run: Run, submitted: Path, autograded: Path) -> tuple[str, list[str]]:
    """(status, notes) of the ``nbgrader autograde`` command ``run`` of one submission."""
    settings = course.settings
    notes = _notebook_notes(course, submitted, autograded) + _reading_notes(run)
    notes += _output_notes(course, run)
    notes = [escaped(n) for n in dict.fromkeys(notes)]  # the notebook chose some of their words
    rc, oom, kernels = run.rc, run.oom_killed, run.outcome
    if run.grader_oom:  # checked first: nbgrader then dies by SIGKILL, as on a timeout
        return (
            "error: killed for memory (nbgrader's own processes went over "
            f"{settings.grader_memory_mb} MiB ({settings.where('grader_memory_mb')}) with what "
            "this notebook printed or holds; an honest notebook needs far less); graded 0"
        ), notes
    if run.server_stopped:  # not the learner's doing: a rerun grades it again
        return "error: the grader stopped during the grading (its nbgrader process died)", notes
    if run.timed_out or rc == -9:
        return (
            f"error: killed after the per-submission time limit of "
            f"{settings.notebook_timeout:g} s ({settings.where('notebook_timeout')})"
        ), notes
    limit = settings.kernel_memory_mb
    if oom and rc != 0:
        return (
            "error: killed for memory (its processes together went over the sandbox's "
            f"{limit} MiB); graded 0"
        ), notes
    if oom:
        notes.append(f"a process was killed for memory (the sandbox's {limit} MiB)")
    elif kernels.out_of_memory:
        notes.append(f"a process ran out of memory ({kernels.out_of_memory})")
    if rc != 0:
        if kernels.sandbox_failure:
            why = kernels.sandbox_failure
            return f"error: the grading sandbox failed to start (afz-grader kernel: {why})", notes
        if kernels.grader_trouble:  # the kernel died while the grader's machine was failing
            why = kernels.grader_trouble
            return f"error: the grading sandbox failed (afz-grader kernel: {why})", notes
        if kernels.error == "dead kernel" and kernels.out_of_memory:
            # It kept what it had filled, and died when a thread of the kernel could get no
            # more (the kernel's messages need memory too).
            return (
                f"error: killed for memory: the kernel died after it ran out of memory (each "
                f"of its processes may use {limit} MiB, {settings.where('kernel_memory_mb')}); "
                "graded 0"
            ), notes
        if kernels.error in ("dead kernel", "kernel start"):
            return "error: the kernel died (e.g. os._exit or a crash); graded 0", notes
        if kernels.error == "uninterruptible kernel":
            return (
                f"error: a cell ran past the time limit of {settings.cell_timeout:g} s "
                f"({settings.where('cell_timeout')}) and went on running when interrupted; "
                "graded 0"
            ), notes
        if kernels.error == "unresponsive kernel":
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
