"""What the instructor hands out and reads: feedback, the grades export, the class summary.

- ``feedback``: nbgrader's HTML feedback for every autograded submission, into feedback/, each
  page sealed with a content security policy that lets it run no script (``seal``).
- ``grades``: one CSV row per student and assignment in the gradebook.
- ``write_summary``: reports/summary.csv, every student's outcome per assignment, with why.
"""

from __future__ import annotations

import csv
import html
import json
import re
import sys
import time
from pathlib import Path

from autograder.outcomes import escaped
from autograder.preprocessors.safe_feedback import FEEDBACK_CSP
from course.config import Course
from course.grading.nbgrader_command import Run, nbgrader_run

POLICY = html.escape(FEEDBACK_CSP, quote=False).replace('"', "&quot;")
CSP_META = f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
HEAD = re.compile(r"<head\b[^>]*>", re.IGNORECASE)
# the last line of a traceback nbgrader printed: "nbconvert.filters.x.InvalidNotebook: ..."
RAISED = re.compile(r"^\s*(?:\w+\.)*[A-Z]\w*(?:Error|Exception|Notebook|Timeout): \S")


def seal(page: Path) -> None:
    """Put the feedback content security policy first in the <head> of the HTML ``page``: a
    browser then runs no script of it, loads nothing from elsewhere and submits no form,
    whatever a learner's notebook managed to write into it."""
    text = page.read_text(encoding="utf-8", errors="replace")
    found = HEAD.search(text, 0, 65536)  # nbconvert's template opens the page with it
    at = found.end() if found else 0
    if not text.startswith(CSP_META, at):  # not sealed yet
        page.write_text(text[:at] + CSP_META + text[at:], encoding="utf-8")


def feedback(names: list[str] | None, course: Course) -> list[tuple[str, str, str]]:
    """HTML feedback for every autograded submission; goes on past a broken one.

    Each notebook's conversion has a time limit of its own inside the class's run (the setting
    feedback_timeout, ``SafeFeedback``): a notebook that runs past it loses its own page only,
    and the run goes on with the others. A submission left without a page for another reason
    is tried again on its own, to learn why. Returns the (assignment, student, why) of every
    submission without feedback.
    """
    from course.gradebook import open_gradebook

    with open_gradebook(course.gradebook_url):  # a clear error, not "NO FEEDBACK" per learner
        pass
    failed: list[tuple[str, str, str]] = []
    for a in course.assignments(names):
        students = sorted(p.parent.name for p in course.autograded.glob(f"*/{a}"))
        if not students:
            print(f"{a}: nothing autograded yet")
            continue
        each = course.settings.feedback_timeout
        start = time.time()
        run = nbgrader_run(
            ["generate_feedback", a, "--force"], course, timeout=each * len(students)
        )
        if run.rc != 0:
            for s in students:
                why = _feedback_failure(course, a, s, run, start)
                if why:
                    failed.append((a, s, why))
                    print(f"NO FEEDBACK {a}/{s}: {escaped(why)}", file=sys.stderr)
        for page in sorted(course.feedback.glob(f"*/{a}/*.html")):
            seal(page)
        print(f"feedback for {a} in {course.feedback}/<student>/{a}/")
    return failed


def _feedback_failure(
    course: Course, assignment: str, student: str, batch: Run, since: float
) -> str:
    """Why ``student`` has no feedback page after the class's run ``batch``, which started at
    ``since`` ("" if it wrote one): the reason that run recorded, else that of a run of its
    own."""
    each = course.settings.feedback_timeout
    stopped = f"stopped after {each:g} s ({course.settings.where('feedback_timeout')})"
    if student in batch.outcome.feedback:
        return stopped
    pages = (course.feedback / student / assignment).glob("*.html")
    if any(page.stat().st_mtime >= since for page in pages):
        return ""
    args = ["generate_feedback", assignment, "--student", student, "--force"]
    run = nbgrader_run(args, course, timeout=each)
    if run.rc == 0:
        return ""
    if run.grader_oom:
        limit = course.settings.where("grader_memory_mb")
        return f"went over {course.settings.grader_memory_mb} MiB ({limit})"
    if student in run.outcome.feedback or run.timed_out or run.rc == -9:
        return stopped
    lines = run.out.splitlines()
    raised = [x for x in lines if RAISED.match(x)]  # the exception's own line, if one was shown
    errors = raised or [x for x in lines if "ERROR" in x or "Error" in x]
    return (errors[-1] if errors else run.out.strip()[-300:]).strip()


def _load_json(path: Path, default: list) -> list:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return default


def score_table(course: Course) -> list[list]:
    """One row per (student, assignment) of the gradebook: student, assignment, score, max
    score, outcome and status (from reports/autograde.json), notes; a submission graded with
    an error scores 0, a student without a submission gets the outcome "no submission", and
    one whose notebook is in submitted/ but was never graded "not graded yet"."""
    from course import freshness
    from course.gradebook import every_score

    status = {
        (r["assignment"], r["student"]): r
        for r in _load_json(course.reports / "autograde.json", [])
    }
    every = list(every_score(course.gradebook_url))
    collected: dict[str, dict[str, str]] = {}
    for a in {row[1] for row in every}:
        scored = {s for s, b, score, _ in every if b == a and score is not None}
        collected[a] = freshness.states(course, a, scored)
    rows = []
    for student, a, score, max_score in every:
        r = status.get((a, student))
        waiting = collected.get(a, {}).get(student)
        if score is None and waiting:  # in submitted/, not graded yet: not "missing"
            score, state, outcome = 0.0, waiting, "not graded yet"
        elif score is None:
            score, state, outcome = 0.0, "no submission", "no submission"
        else:
            state = r["status"] if r else "ok"
            outcome = r.get("outcome", "graded") if r else "graded"
        if r and r["status"] != "ok":
            score = 0.0
        notes = "; ".join(r["notes"]) if r else ""
        rows.append([student, a, round(score, 2), max_score, outcome, state, notes])
    return sorted(rows)


def grades(course: Course, out: Path) -> None:
    """grades.csv: the rows of ``score_table``."""
    rows = score_table(course)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "assignment", "score", "max_score", "outcome", "status", "notes"])
        w.writerows(rows)
    print(f"wrote {len(rows)} row(s) to {out}")
    write_summary(course)


def write_summary(course: Course) -> Path:
    """reports/summary.csv: every student's outcome per assignment, with why.

    From the autograde report (graded, timed out, killed for memory, kernel died, ...) and the
    collect report (files rejected at collect, with the reason).
    """
    rows: dict[tuple[str, str], list] = {}
    for r in _load_json(course.reports / "autograde.json", []):
        why = "; ".join([r["status"]] * (r["status"] != "ok") + r.get("notes", []))
        rows[(r["student"], r["assignment"])] = [
            r["student"],
            r["assignment"],
            r.get("outcome", "graded" if r["status"] == "ok" else "grader error"),
            r["score"],
            r["max_score"],
            why,
        ]
    rejected = course.reports / "collect_rejected.csv"
    if rejected.exists():
        with rejected.open(newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                key = (r["student"], r["assignment"])
                if key not in rows:
                    rows[key] = [*key, "rejected", 0, "", f"{r['file']}: {r['reason']}"]
    path = course.reports / "summary.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "assignment", "outcome", "score", "max_score", "why"])
        w.writerows(sorted(rows.values()))
    counts: dict[str, int] = {}
    for row in rows.values():
        counts[row[2]] = counts.get(row[2], 0) + 1
    print(
        f"class summary in {path}: "
        + ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda x: -x[1]))
    )
    return path
