"""An LMS download planned once its files are placed: a roster that names none of its
learners refused, the assignment told from the notebooks' names, files of learners the roster
lacks rejected (with the nearest learner), earlier attempts set aside, each learner's
submission time (``timestamp.txt``) from what the LMS gives, and their notebooks to check.
"""

from __future__ import annotations

import difflib
import zipfile
from datetime import datetime
from pathlib import Path

from course.collect.notebooks import check_notebooks
from course.collect.placing import Found, place_all
from course.collect.plan import LATE, Keep, Plan, Rows
from course.config import Course, CourseError
from course.entries import Entry, max_notebook_bytes, read
from course.lms import (
    KEYS,
    ROSTERS,
    Placed,
    canvas_name,
    guess_assignment,
    nbgrader_timestamp,
    notebook_for,
    to_utc,
)
from course.roster import TIME, Index, Learner


def lms_plan(
    source: Path,
    entries: list[Entry],
    zf: zipfile.ZipFile | None,
    course: Course,
    assignment: str | None,
    layout: str,
    learners: list[Learner],
    timezone: str,
) -> Plan:
    """An LMS download: a row per file, the notebooks to store (student ids from the roster)
    and the ``timestamp.txt`` of each (student, assignment) whose time the LMS gives."""
    index = Index(learners)
    plan = Plan(layout, [])
    found = place_all(plan, source, entries, layout, learners, index)
    _check_whole(source, layout, found, learners)
    if assignment is None:
        assignment = _assignment_of(source, course, found)
    by_learner = _by_learner(plan, found, layout, assignment, zf, course, learners)
    candidates: Rows = []
    stamps: dict[tuple[str, str], str] = {}
    expected = course.notebook_names(assignment)
    for sid, items in sorted(by_learner.items()):
        latest = _latest_attempt(plan, sid, assignment, items, zf, course)
        when = _stamp(layout, sid, [f.placed for f in latest], index, timezone)
        if when is not None:
            stamps[(sid, assignment)] = when
        candidates += _notebooks_of(layout, latest, expected)
    check_notebooks(plan, course, candidates, zf, stamps)
    _roster_summary(plan, learners, found, layout)
    return plan


def _check_whole(source: Path, layout: str, found: list[Found], learners: list[Learner]) -> None:
    """A CourseError, before anything is written, when the roster names none of the
    download's learners (the roster of another class, or of another LMS)."""
    if not found or any(f.learner is not None or f.placed.anonymous for f in found):
        return
    shown = sorted({f.placed.shown or f.placed.who for f in found})
    key = KEYS[layout].replace("_", " ")
    raise CourseError(
        f"none of the {len(shown)} learner(s) of {source} is in the roster ({len(learners)} "
        f"learner(s)); the download names them by their {layout} {key} "
        f"({', '.join(f'{f.placed.shown!r} {f.placed.who}' for f in found[:3])}): give the "
        f"roster of this class: {ROSTERS[layout]}"
    )


def _assignment_of(source: Path, course: Course, found: list[Found]) -> str:
    """The assignment of the download, from its notebooks' names."""
    names = [f.placed.file for f in found if f.placed.file.lower().endswith(".ipynb")]
    books = {a: course.notebook_names(a) for a in course.assignments()}
    assignment = guess_assignment(names, books)
    if assignment is None:
        raise CourseError(
            f"cannot tell from the notebooks' names in {source} which assignment it is "
            f"({', '.join(sorted(set(names))) or 'no notebook'}); give --assignment, one of "
            f"{', '.join(books)}"
        )
    print(f"{source}: assignment {assignment} (from the notebooks' names)")
    return assignment


def _by_learner(
    plan: Plan,
    found: list[Found],
    layout: str,
    assignment: str,
    zf: zipfile.ZipFile | None,
    course: Course,
    learners: list[Learner],
) -> dict[str, list[Found]]:
    """The placed files by course id; a file of a learner the roster lacks is rejected and
    kept, with the roster's nearest learner."""
    limit = max_notebook_bytes(course.settings)
    key_name = KEYS[layout].replace("_", " ")
    out: dict[str, list[Found]] = {}
    for f in found:
        f.row.assignment = assignment
        if f.row.student_id:
            out.setdefault(f.row.student_id, []).append(f)
            continue
        p = f.placed
        f.row.outcome = "rejected"
        f.row.reason = "; ".join(
            x
            for x in (
                f"{p.shown!r} ({layout} {key_name} {p.who}) is not in the roster"
                + _nearest(layout, p, learners)
                + ": add the learner to the roster (export it again from the LMS) and collect "
                "again",
                f.row.reason,
            )
            if x
        )
        data, why = read(f.entry, zf, limit)
        if data is None:
            f.row.reason += f" (not kept: {why})"
        else:
            name = f"{p.who}-{f.entry.parts[-1]}"
            plan.keeps.append(Keep(f.row, "_not_in_roster", assignment, name, data, False))
    return out


def _nearest(layout: str, p: Placed, learners: list[Learner]) -> str:
    """``; nearest in the roster: ...``: the roster's learner whose name is closest to the
    download's, with their identity; "" when none is close."""
    key = KEYS[layout]
    names = {x.name: x for x in learners if x.name}
    if layout == "canvas":
        names = {canvas_name(x.sortable or x.name): x for x in learners if x.sortable or x.name}
    close = difflib.get_close_matches(p.shown, list(names), n=1, cutoff=0.6) if p.shown else []
    if not close:
        ids = {getattr(x, key): x for x in learners if getattr(x, key)}
        close_ids = difflib.get_close_matches(p.who, list(ids), n=1, cutoff=0.8)
        if not close_ids:
            return "; no roster learner has a name like it"
        x = ids[close_ids[0]]
    else:
        x = names[close[0]]
    return f"; nearest in the roster: {x.name or x.student_id} ({key.replace('_', ' ')} " + (
        f"{getattr(x, key) or 'none'})"
    )


def _latest_attempt(
    plan: Plan,
    sid: str,
    assignment: str,
    items: list[Found],
    zf: zipfile.ZipFile | None,
    course: Course,
) -> list[Found]:
    """The files of a learner's latest attempt (Blackboard: by the time the LMS wrote); the
    earlier attempts' files are superseded, kept under rejected/."""
    last = max(f.placed.attempt for f in items)
    limit = max_notebook_bytes(course.settings)
    latest = []
    for f in items:
        if f.placed.attempt == last:
            latest.append(f)
            continue
        f.row.outcome = "superseded"
        f.row.reason = "; ".join(
            x
            for x in (
                f"an earlier attempt ({f.placed.attempt}); the latest attempt ({last}) is the "
                "submission",
                f.row.reason,
            )
            if x
        )
        data, why = read(f.entry, zf, limit)
        if data is None:
            f.row.kept_as = f"not kept: {why}"
        else:
            name = f"attempt-{f.placed.attempt}-{f.entry.parts[-1]}"
            plan.keeps.append(Keep(f.row, sid, assignment, name, data, False))
    return latest


def _stamp(layout: str, sid: str, latest: list[Placed], index: Index, timezone: str) -> str | None:
    """``timestamp.txt`` of a learner's submission from what the LMS says: the time in the
    download's names (Blackboard), the worksheet's (Moodle), or the late flag (Canvas)."""
    if latest and latest[0].submitted_at is not None:
        return nbgrader_timestamp(to_utc(latest[0].submitted_at, timezone))
    if any(p.late for p in latest):
        return LATE
    learner = index.find("student_id", sid)
    if layout == "moodle" and learner is not None and learner.submitted:
        at = datetime.strptime(learner.submitted, TIME)
        return nbgrader_timestamp(to_utc(at, timezone))
    return None


def _notebooks_of(layout: str, latest: list[Found], expected: list[str]) -> Rows:
    """The notebooks among a learner's latest files (a renamed only notebook taken as the
    assignment's); the other files are skipped."""
    renamed = notebook_for([f.placed.file.rsplit("/", 1)[-1] for f in latest], expected)
    out: Rows = []
    for f in latest:
        p, row = f.placed, f.row
        base = p.file.rsplit("/", 1)[-1]
        row.file = base
        notes = [n for n in (p.note, row.reason) if n]
        if p.kind != "file" or not base.lower().endswith(".ipynb"):
            row.reason = "; ".join(["not a notebook (.ipynb)", *notes[1:]])
            continue
        if renamed and base == renamed[0]:
            row.file = renamed[1]
            notes.append(
                f"handed in as {base!r}, the learner's only notebook: taken as {renamed[1]}"
            )
        if p.late:
            notes.append(f"{layout} marks it late")
        row.reason = "; ".join(notes)
        out.append((f.entry, row))
    return out


def _roster_summary(plan: Plan, learners: list[Learner], found: list[Found], layout: str) -> None:
    """A note of how many of the roster's learners handed in."""
    handed = {f.row.student_id for f in found if f.learner is not None}
    anonymous = {f.row.student_id for f in found if f.learner is None and f.row.student_id}
    line = f"roster: {len(handed)} of {len(learners)} learner(s) in this {layout} download"
    if anonymous:
        line += (
            f"; {len(anonymous)} learner(s) named only by Canvas's anonymous ids, collected as "
            "anon_<id> (Canvas says who they are once the grades are posted: download the "
            "submissions again then and collect them with the roster)"
        )
    plan.notes.append(line)
