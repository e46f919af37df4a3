"""Whether a learner's score in the gradebook is the score of the notebook in submitted/.

``autograde`` records in reports/autograde.json the sha256 of the files it graded (the
notebooks and ``timestamp.txt``, ``course.grading.task.digest``). A later ``collect`` that puts
other files into submitted/ leaves the gradebook's score behind: that submission is *not
graded since it was collected* until it is graded again; a submission that was collected and
never graded is *not graded yet*. Neither is "without a submission". A score that nbgrader
gave outside ``python -m course autograde`` has no record: it is behind when a file in
submitted/ is newer than everything nbgrader wrote into autograded/.
"""

from __future__ import annotations

import json
from pathlib import Path

from course.config import Course, CourseError

GRADED = "graded"
STALE = "not graded since it was collected again"
NOT_GRADED = "collected, not graded yet"


def states(course: Course, assignment: str, scored: set[str]) -> dict[str, str]:
    """{student: GRADED, STALE or NOT_GRADED} for every student with a submission of
    ``assignment`` in submitted/; ``scored``: the students the gradebook has a score of. A
    submission autograde recorded is graded when its files are the ones recorded, whatever
    the grading's outcome (a grader's error is graded again by autograde, not here)."""
    from course.grading.task import digest, pack

    recorded = _recorded(course, assignment)
    out = {}
    for folder in sorted(course.submitted.glob(f"*/{assignment}")):
        student = folder.parent.name
        if not folder.is_dir():
            continue
        sha = recorded.get(student, "")
        if sha:
            out[student] = GRADED if sha == digest(pack(folder)) else STALE
        elif student in scored:
            out[student] = _by_time(folder, course.autograded / student / assignment)
        else:
            out[student] = NOT_GRADED
    return out


def _recorded(course: Course, assignment: str) -> dict[str, str]:
    """{student: the sha256 autograde recorded} for ``assignment``."""
    path = course.reports / "autograde.json"
    try:
        records = json.loads(path.read_text()) if path.exists() else []
    except (OSError, ValueError) as err:
        raise CourseError(f"cannot read {path}: {err}; autograde again to write it") from None
    return {
        r["student"]: r.get("sha256") or ""
        for r in records
        if r.get("assignment") == assignment and "student" in r
    }


def _by_time(submitted: Path, autograded: Path) -> str:
    """GRADED when nbgrader wrote autograded/ after the newest file of submitted/."""
    newest = max((p.stat().st_mtime for p in submitted.rglob("*") if p.is_file()), default=0.0)
    graded = [p.stat().st_mtime for p in autograded.rglob("*") if p.is_file()]
    return GRADED if graded and max(graded) >= newest else STALE


def waiting(course: Course, assignment: str, scored: set[str]) -> dict[str, str]:
    """{student: STALE or NOT_GRADED}: the submissions whose score is not their notebook's."""
    return {s: v for s, v in states(course, assignment, scored).items() if v != GRADED}


def refusal(assignment: str, behind: dict[str, str]) -> str:
    """The error of an export that would carry scores that are not their notebooks'."""
    names = ", ".join(f"{s} ({why})" for s, why in sorted(behind.items()))
    return (
        f"{len(behind)} learner(s) of {assignment} have a notebook in submitted/ that their "
        f"gradebook score is not the score of: {names}. Grade them first (python -m course "
        f"autograde {assignment}) and export again; or give --allow-stale to export anyway "
        "(a learner not graded yet keeps what the LMS has, one graded before gets the earlier "
        "score)"
    )


def refuse_behind(course: Course, assignments: list[str], allow_stale: bool) -> None:
    """Before ``grades.csv``: a CourseError naming every learner whose score is not their
    collected notebook's, unless ``allow_stale`` (then a NOTE names them)."""
    from course.gradebook import every_score

    scored: dict[str, set[str]] = {}
    for student, a, score, _ in every_score(course.gradebook_url):
        if score is not None:
            scored.setdefault(a, set()).add(student)
    for a in assignments:
        behind = waiting(course, a, scored.get(a, set()))
        if behind and not allow_stale:
            raise CourseError(refusal(a, behind))
        if behind:
            names = ", ".join(f"{s} ({why})" for s, why in sorted(behind.items()))
            print(f"NOTE {a}: exported with --allow-stale although {names}")
