"""Grades back into the LMS, in the LMS's own import format.

- ``canvas``: the gradebook CSV the instructor exported from Canvas (Grades > Export), with
  the assignment's column filled for every learner of the roster (matched by Canvas's user
  ``ID``), and every other byte of the file as it was: other columns, other rows (``Points
  Possible``, the test student, learners the roster lacks), quoting, line endings, the BOM.
  Canvas's Grades > Import takes it back.
- ``moodle``: a CSV for Moodle's gradebook import (Grades > Import > CSV file): one row per
  learner of the roster, keyed by the identifier the instructor chooses (``email``,
  ``username`` or ``idnumber``: Moodle's "Map from" field), and one grade column.

A learner of the roster without a submission gets what the instructor asks (``missing``:
empty, so the LMS keeps its own value, or 0), never dropped; each export prints what it wrote.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from course.config import Course, CourseError
from course.roster import NOT_LEARNERS, Index, Learner, load_roster, read_roster

MOODLE_KEYS = {"email": "Email address", "username": "Username", "idnumber": "ID number"}
MISSING = {"empty": "", "zero": "0"}

Field = tuple[int, int, str]  # start and end in the text, and the value


def learners_of(course: Course, roster: Path | None) -> list[Learner]:
    """The roster given, else the one collect kept; a CourseError without either."""
    found = read_roster(roster) if roster is not None else load_roster(course.root)
    if found is None:
        raise CourseError(
            f"no roster: {course.root / 'roster.csv'} is missing (collect with --roster "
            "keeps one), so give --roster FILE, the class list exported from the LMS"
        )
    return found


def scores(course: Course, assignment: str) -> tuple[dict[str, float | None], float]:
    """{student: score, None without a submission} of ``assignment``, and its max score
    (``reports.score_table``: a submission graded with an error scores 0)."""
    from course.reports import score_table

    out: dict[str, float | None] = {}
    top = 0.0
    for student, a, score, max_score, outcome, _, _ in score_table(course):
        if a == assignment:
            out[student] = None if outcome == "no submission" else float(score)
            top = float(max_score)
    return out, top


def number(x: float) -> str:
    """A score as the LMS reads it: ``10``, ``7.5``, ``3.33``."""
    return f"{round(x, 2):.2f}".rstrip("0").rstrip(".")


def records(text: str, where: Path) -> Iterator[list[Field]]:
    """The CSV records of ``text`` (RFC 4180: quoted fields may hold commas, quotes and line
    breaks): each as its fields, with their spans."""
    i, n = 0, len(text)
    fields: list[Field] = []
    while i <= n:
        at = i
        if i < n and text[i] == '"':
            j, parts = i + 1, []
            while True:
                k = text.find('"', j)
                if k < 0:
                    raise CourseError(f"{where}: a quoted field is never closed; export it again")
                parts.append(text[j:k])
                if text.startswith('""', k):
                    parts.append('"')
                    j = k + 2
                    continue
                i = k + 1
                break
            value = "".join(parts)
        else:
            j = i
            while j < n and text[j] not in ",\r\n":
                j += 1
            value, i = text[i:j], j
        fields.append((at, i, value))
        if i < n and text[i] == ",":
            i += 1
            continue
        i += 2 if text.startswith("\r\n", i) else 1
        yield fields
        fields = []
        if i >= n:
            return


def canvas(
    course: Course,
    assignment: str,
    export: Path,
    column: str,
    out: Path,
    missing: str = "empty",
    roster: Path | None = None,
) -> None:
    """Fill ``column`` of the Canvas gradebook export ``export`` with the scores of
    ``assignment`` and write it to ``out``; everything else is kept byte for byte."""
    course.assignments([assignment])
    index = Index(learners_of(course, roster))
    try:
        raw = export.read_bytes()
        text = raw.decode("utf-8")
    except OSError as err:
        raise CourseError(f"cannot read the Canvas export {export}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise CourseError(f"the Canvas export {export} is not UTF-8; export it again") from None
    rows = list(records(text, export))
    if not rows or len(rows[0]) < 2:
        raise CourseError(f"the Canvas export {export} is empty or not a CSV file")
    header = [v.lstrip("\ufeff").strip() for _, _, v in rows[0]]
    matches = [i for i, h in enumerate(header) if h == column or h.startswith(column + " (")]
    if len(matches) != 1 or "ID" not in header:
        assignments = ", ".join(h for h in header[5:] if h.endswith(")")) or "none"
        why = "no column" if not matches else f"{len(matches)} columns"
        if "ID" not in header:
            raise CourseError(f"{export} has no ID column: is it Canvas's gradebook export?")
        raise CourseError(
            f"{export} has {why} {column!r}; give --column as Canvas names it (its columns "
            f"of assignments: {assignments})"
        )
    col, id_col = matches[0], header.index("ID")
    got, top = scores(course, assignment)
    pieces, last = [], 0
    written = {"graded": 0, "missing": 0}
    strangers, short = [], []
    seen: set[str] = set()
    for fields in rows[1:]:
        values = [v for _, _, v in fields]
        name = values[0].strip()
        if name.lower() in NOT_LEARNERS or len(values) <= id_col or not values[id_col].strip():
            if name.lower() == "points possible" and len(values) > col:
                possible = values[col].strip()
                if possible and _float(possible) not in (None, top):
                    print(
                        f"NOTE: Canvas's column is out of {possible} points, {assignment} "
                        f"out of {number(top)}: the scores are written in points of "
                        f"{assignment}; set the column's points in Canvas to {number(top)}"
                    )
            continue
        learner = index.find("lms_user_id", values[id_col].strip())
        if learner is None:
            strangers.append(name or values[id_col])
            continue
        if len(values) <= col:
            short.append(name)
            continue
        seen.add(learner.student_id)
        score = got.get(learner.student_id)
        value = number(score) if score is not None else MISSING[missing]
        written["graded" if score is not None else "missing"] += 1
        a, b, _ = fields[col]
        pieces.append(text[last:a])
        pieces.append(value)
        last = b
    pieces.append(text[last:])
    if short:
        raise CourseError(f"{export}: the rows of {', '.join(short)} end before {column!r}")
    unlisted = [x.student_id for x in index.learners if x.student_id not in seen]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes("".join(pieces).encode("utf-8"))
    print(
        f"wrote {assignment} into the column {header[col]!r} of {out}: "
        f"{written['graded']} graded, {written['missing']} without a submission "
        f"({'empty' if missing == 'empty' else '0'}); every other cell as in {export}"
    )
    if strangers:
        print(f"  left as they were, not in the roster: {', '.join(strangers)}")
    if unlisted:
        print(
            f"  in the roster but not in {export} (Canvas does not know them): "
            f"{', '.join(unlisted)}"
        )


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def moodle(
    course: Course,
    assignment: str,
    key: str,
    out: Path,
    missing: str = "empty",
    column: str | None = None,
    roster: Path | None = None,
) -> None:
    """Moodle's grade import CSV of ``assignment``: one row per learner of the roster,
    keyed by ``key`` (email, username or idnumber), the grade in ``column``."""
    course.assignments([assignment])
    if key not in MOODLE_KEYS:
        raise CourseError(f"unknown key {key!r}; Moodle maps from {', '.join(MOODLE_KEYS)}")
    learners = learners_of(course, roster)
    lacking = [x.student_id for x in learners if not getattr(x, key)]
    if lacking:
        raise CourseError(
            f"the roster has no {key} for {', '.join(lacking)}: choose another --key, or "
            f"export a roster with the column {MOODLE_KEYS[key]!r}"
        )
    got, _ = scores(course, assignment)
    counts = {"graded": 0, "missing": 0}
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow([MOODLE_KEYS[key], "Full name", column or assignment])
        for x in learners:
            score = got.get(x.student_id)
            counts["graded" if score is not None else "missing"] += 1
            value = number(score) if score is not None else MISSING[missing]
            w.writerow([getattr(x, key), x.name, value])
    others = sorted(set(got) - {x.student_id for x in learners})
    print(
        f"wrote {len(learners)} row(s) of {assignment} to {out}, keyed by {key}: "
        f"{counts['graded']} graded, {counts['missing']} without a submission "
        f"({'empty' if missing == 'empty' else '0'}). Moodle: Grades > Import > CSV file, "
        f"map {MOODLE_KEYS[key]!r} to the user's {key}"
    )
    if others:
        print(f"  in the gradebook but not in the roster, not written: {', '.join(others)}")
