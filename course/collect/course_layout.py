"""The course's own layout placed: ``<student>/<assignment>/<notebook>.ipynb`` (or, with an
assignment given, ``<student>/<notebook>.ipynb``), a row per file, and the notebooks to check;
a student folder may have any name, mapped to a safe id through students.csv, and two
spellings of one name are rejected rather than merged.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from course.collect.download import odd_entry
from course.collect.notebooks import check_notebooks
from course.collect.plan import CollectRow, Keep, Plan, Rows
from course.config import Course
from course.entries import Entry, max_notebook_bytes, read
from course.students import assign_ids, load_names, load_students, spelling, student_key


def course_plan(
    source: Path,
    entries: list[Entry],
    zf: zipfile.ZipFile | None,
    course: Course,
    assignment: str | None,
    top: int,
) -> Plan:
    """The course's own layout: a row per file, and the notebooks to store (student ids from
    the folder names, through students.csv)."""
    root = course.root
    known = course.assignments()
    depth = 2 if assignment else 3
    layout = (
        "<student>/<notebook>.ipynb" if assignment else "<student>/<assignment>/<notebook>.ipynb"
    )
    limit = max_notebook_bytes(course.settings)
    plan = Plan("course", [])
    candidates: Rows = []  # notebooks to check
    for e in entries:
        odd = e.ignored or e.unsafe or bool(e.link)
        rel = e.parts if odd else e.parts[top:]
        row = CollectRow(f"{source}/{e.inner}", "", "", "", rel[-1], "skipped")
        if len(rel) > 1 and not odd:
            row.name = rel[0]
        if len(rel) == depth and not odd:
            row.assignment = assignment or rel[1]
        if odd_entry(e, row):
            pass
        elif len(rel) != depth:
            where = "in an extra folder" if len(rel) > depth else "not in a student folder"
            row.reason = f"{where}; expected {layout}"
        elif row.assignment not in known:
            row.reason = (
                f"unknown assignment folder {row.assignment!r}; the assignments are "
                f"{', '.join(known)}"
            )
        elif not rel[-1].lower().endswith(".ipynb"):
            row.reason = "not a notebook (.ipynb)"
        else:
            candidates.append((e, row))
        plan.rows.append((e, row))

    # Two spellings of one name ("ALICE" after "alice") are one key, so one id: a spelling
    # other than the one students.csv holds is rejected, not merged into that submission.
    spelled = load_names(root)
    kept_candidates = []
    for e, row in candidates:
        key, written = student_key(row.name), spelling(row.name)
        first = spelled.get(key, written)  # two spellings in one download: two files
        if written == first:
            kept_candidates.append((e, row))
            continue
        row.outcome = "rejected"
        row.reason = (
            f"the folder {row.name!r} and the folder {first!r} are two spellings of one "
            f"student's name: nothing was replaced. If it is the same student, rename the "
            f"folder to {first!r} and collect again; if not, give it a name of its own"
        )
        data, _ = read(e, zf, limit)
        if data is not None:
            plan.keeps.append(Keep(row, "_spellings", row.assignment, row.file, data, True))
    ids = load_students(root)
    plan.new_students = assign_ids([row.name for _, row in kept_candidates], ids)
    for _, row in plan.rows:
        row.student_id = ids.get(student_key(row.name), "") if row.name else ""
    check_notebooks(plan, course, kept_candidates, zf, {})
    return plan
