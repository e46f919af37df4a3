"""The LMSs' own import rules, as the oracle of the grade exports, and a gradebook in the state
autograde leaves it; shared by tests/unit/test_lms_grades.py and
tests/grading/test_lms_round_trip.py.

- ``canvas_import``: Canvas's Grades > Import (instructure/canvas-lms
  ``app/models/gradebook_importer.rb``): the separator is ``;`` when it splits the first three
  lines into more fields than ``,`` does; a number with a decimal comma is read with a point
  (``decimal_comma_to_period``); a row whose first cell holds ``Points Possible`` and a row of
  ``Muted`` / ``Manual Posting`` markers are no learners; a learner is found by ``ID``; a cell
  changes the learner's score unless ``no_change_to_value?``: the same text, both blank (or
  ``-``), or the same number at two places; ``EX`` against a number is a change; an
  assignment whose anonymous grades are not posted takes no change.
- ``moodle_import``: Moodle's Grades > Import > CSV (moodle/moodle
  ``grade/import/csv/classes/load_data.php``): each row's learner is found by the mapped
  field, and a row whose learner Moodle does not know stops the whole import; an empty value
  or ``-`` sets "no grade" over the grade Moodle had; a number sets the grade.
- ``blackboard_upload``: Blackboard publishes no code; a cell of the column whose text differs
  from the download's is taken as a change to that learner's grade.

``graded`` writes the state ``autograde`` leaves (through nbgrader's API and
``course.grading.submission.write_report``), so that the exports read real scores.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from pathlib import Path

from course import gradebook
from course.config import Course
from course.grading.submission import Result, write_report
from course.grading.task import digest, pack

A1 = "01_attention"
NOTEBOOK = "attention"


def graded(root: Path, scores: dict[str, float], top: float = 12.0) -> None:
    """The gradebook and reports/autograde.json as autograde leaves them when each student of
    ``scores`` was graded that score (the files in submitted/ are the ones graded)."""
    course = Course(root)
    with gradebook.open_gradebook(course.gradebook_url) as gb:
        gb.update_or_create_assignment(A1)
        gb.update_or_create_notebook(NOTEBOOK, A1)
        gb.update_or_create_grade_cell("total", NOTEBOOK, A1, max_score=top, cell_type="code")
        for student, score in scores.items():
            gb.update_or_create_student(student)
            with warnings.catch_warnings():  # nbgrader's add_submission under SQLAlchemy 2
                warnings.filterwarnings("ignore", "Object of type .* not in session")
                gb.update_or_create_submission(A1, student)
            gb.find_grade("total", NOTEBOOK, A1, student).auto_score = score
        gb.db.commit()
    results = [
        Result(s, A1, "ok", score, top, sha256=digest(pack(course.submitted / s / A1)))
        for s, score in scores.items()
    ]
    write_report(course, results)


# ---------------------------------------------------------------------------------------
# Canvas
# ---------------------------------------------------------------------------------------
CanvasState = dict[tuple[str, str], str]  # (user id, assignment column) -> Canvas's value


def _canvas_rows(text: str) -> list[list[str]]:
    text = text.removeprefix("\ufeff")
    lines = text.splitlines()[:3]

    def counts(sep: str) -> int:
        sizes = {len(next(csv.reader([line], delimiter=sep))) for line in lines}
        return sizes.pop() if len(sizes) == 1 else 0

    sep = ";" if counts(";") > counts(",") else ","
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=sep))


def _decimal_comma_to_period(field: str) -> str:
    if re.fullmatch(r"-?[0-9.,]+%?", field):
        parts = re.split(r"[,.]", field)
        last = parts.pop()
        return last if not parts else "".join(parts) + "." + last
    return field


def canvas_state(export: bytes) -> CanvasState:
    """What Canvas holds, as its export shows it: {(ID, column): value}."""
    rows = _canvas_rows(export.decode("utf-8"))
    header, id_col = rows[0], rows[0].index("ID")
    columns = [i for i, h in enumerate(header) if re.search(r"\(\d+\)$", h)]
    state = {}
    for row in _canvas_learner_rows(rows):
        for i in columns:
            state[(row[id_col], header[i])] = _decimal_comma_to_period(row[i].strip())
    return state


def _canvas_learner_rows(rows: list[list[str]]) -> list[list[str]]:
    out = []
    for row in rows[1:]:
        if row and "Points Possible" in row[0]:
            continue
        if all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c, re.I) for c in row):
            continue
        out.append(row)
    return out


def _no_score(value: str) -> bool:
    return value.strip() in ("", "-")


def no_change_to_value(new: str, current: str) -> bool:
    """GradebookImporter#no_change_to_value? with consider_excused."""
    if new == current:
        return True
    if _no_score(current) and _no_score(new):
        return True
    if not (current.strip() and new.strip()):
        return False
    if new.upper() == "EX" or current.upper() == "EX":
        return False
    try:
        return f"{float(current):.2f}" == f"{float(new):.2f}"
    except ValueError:
        return False


def canvas_import(state: CanvasState, upload: bytes) -> CanvasState:
    """Canvas's state after Grades > Import of ``upload``: each changed cell replaces the
    value (an unposted anonymous column takes none)."""
    rows = _canvas_rows(upload.decode("utf-8"))
    header, id_col = rows[0], rows[0].index("ID")
    hidden = {
        header[i]
        for row in rows[1:]
        for i, c in enumerate(row)
        if "scores hidden from instructors" in c
    }
    after = dict(state)
    for row in _canvas_learner_rows(rows):
        for i, h in enumerate(header):
            key = (row[id_col], h)
            if key not in state or h in hidden:
                continue
            new = _decimal_comma_to_period(row[i].strip())
            if not no_change_to_value(new, state[key]):
                after[key] = new
    return after


def changed(before: dict, after: dict) -> dict:
    """{key: (before, after)} of the values an import changed."""
    return {k: (before.get(k), v) for k, v in after.items() if before.get(k) != v}


# ---------------------------------------------------------------------------------------
# Moodle
# ---------------------------------------------------------------------------------------
MoodleState = dict[str, float | None]  # the mapped identifier -> Moodle's grade


class MoodleImportStopped(Exception):
    """Moodle stops the whole import (usermappingerror)."""


def moodle_import(state: MoodleState, upload: str, key_header: str, column: str) -> MoodleState:
    """Moodle's grades after Grades > Import > CSV of ``upload``, rows mapped by the column
    ``key_header``, the grade in ``column``."""
    after = dict(state)
    for row in csv.DictReader(io.StringIO(upload, newline="")):
        who = row[key_header].strip()
        if who not in state:
            raise MoodleImportStopped(f"usermappingerror: {who!r}")
        value = row[column].strip()
        after[who] = None if value in ("", "-") else float(value)
    return after


# ---------------------------------------------------------------------------------------
# Blackboard
# ---------------------------------------------------------------------------------------
def blackboard_upload(download: list[list[str]], upload: list[list[str]], column: str) -> dict:
    """{username: (download's cell, upload's cell)} for each cell of ``column`` the upload
    changes (both files as rows of cells, headers first)."""
    col = download[0].index(column)
    user = download[0].index("Username")
    before = {r[user]: r[col] for r in download[1:]}
    return {
        r[user]: (before.get(r[user]), r[col]) for r in upload[1:] if before.get(r[user]) != r[col]
    }
