"""Grades back into the LMS, in the LMS's own import format.

- ``canvas``: the gradebook CSV the instructor exported from Canvas (Grades > Export), with
  the assignment's column filled for every learner of the roster (matched by Canvas's user
  ``ID``), and every other byte of the file as it was: other columns, other rows (``Points
  Possible``, the test student, learners the roster lacks), quoting, line endings, the BOM.
  Canvas's Grades > Import takes it back.
- ``blackboard``: the Grade Center file the instructor downloaded from Blackboard Learn (Grade
  Center > Work Offline > Download; Ultra: Gradebook > Download), comma-delimited ``.csv``
  (UTF-8) or tab-delimited ``.xls`` (UTF-16 text with a byte-order mark, whatever its name
  says), with the assignment's column (``<name> [Total Pts: <points> Score] |<column id>``)
  filled for every learner of the roster, matched by Blackboard's ``Username``; every other
  byte as it was, written back in the file's own encoding and delimiter. Blackboard's Work
  Offline > Upload takes it back: the column id routes the values into that column.
- ``moodle``: a CSV for Moodle's gradebook import (Grades > Import > CSV file): one row per
  learner of the roster, keyed by the identifier the instructor chooses (``email``,
  ``username`` or ``idnumber``: Moodle's "Map from" field), and one grade column.

GitHub Classroom imports no grades: ``grades.csv`` (``--format csv``) is what it gets.

A learner of the roster without a submission gets what the instructor asks (``missing``:
empty, so the LMS keeps its own value, or 0), never dropped; each export prints what it wrote.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from course.config import Course, CourseError
from course.roster import NOT_LEARNERS, Index, Learner, lms_text, load_roster, read_roster

MOODLE_KEYS = {"email": "Email address", "username": "Username", "idnumber": "ID number"}
MISSING = {"empty": "", "zero": "0"}

Field = tuple[int, int, str]  # start and end in the text, and the value
# A Blackboard grade column's header: "Attention 01 [Total Pts: 10 Score] |123456" (Ultra:
# "[Total Pts: up to 10 Score]"); the name may hold brackets of its own.
BLACKBOARD_COLUMN = re.compile(r"^(?P<name>.+?)\s*\[(?P<info>[^\]]*)\]\s*\|\s*(?P<id>\d+)$")
BLACKBOARD_POINTS = re.compile(r"Total Pts:\s*(?:up to\s*)?(?P<points>\d+(?:\.\d+)?)")
TAB = "\t"
BLACKBOARD_HOW = "Grade Center > Work Offline > Download; Ultra: Gradebook > Download"


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


def records(text: str, where: Path, delimiter: str = ",") -> Iterator[list[Field]]:
    """The CSV records of ``text`` (RFC 4180: quoted fields may hold delimiters, quotes and
    line breaks), fields separated by ``delimiter``: each as its fields, with their spans."""
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
            while j < n and text[j] not in (delimiter, "\r", "\n"):
                j += 1
            value, i = text[i:j], j
        fields.append((at, i, value))
        if i < n and text[i] == delimiter:
            i += 1
            continue
        i += 2 if text.startswith("\r\n", i) else 1
        yield fields
        fields = []
        if i >= n:
            return


def splice(text: str, changes: list[Field]) -> str:
    """``text`` with each span of ``changes`` (in order, apart) replaced by its new value."""
    pieces, last = [], 0
    for a, b, value in changes:
        pieces += [text[last:a], value]
        last = b
    return "".join([*pieces, text[last:]])


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
    changes: list[Field] = []
    written = {"graded": 0, "missing": 0}
    strangers, short = [], []
    seen: set[str] = set()
    for fields in rows[1:]:
        values = [v for _, _, v in fields]
        name = values[0].strip()
        if name.lower() in NOT_LEARNERS or len(values) <= id_col or not values[id_col].strip():
            if name.lower() == "points possible" and len(values) > col:
                possible = values[col].strip()
                if possible and top and _float(possible) not in (None, top):  # top 0: none graded
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
        changes.append((a, b, value))
    if short:
        raise CourseError(f"{export}: the rows of {', '.join(short)} end before {column!r}")
    unlisted = [x.student_id for x in index.learners if x.student_id not in seen]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(splice(text, changes).encode("utf-8"))
    print(
        f"wrote {assignment} into the column {header[col]!r} of {out}: "
        f"{written['graded']} graded, {written['missing']} without a submission "
        f"({'empty' if missing == 'empty' else '0'}); every other cell as in {export}"
    )
    _report_leftovers(strangers, unlisted, export, "Canvas")


def _report_leftovers(strangers: list[str], unlisted: list[str], export: Path, lms: str) -> None:
    """Print the rows of ``export`` not in the roster and the roster's learners not in it."""
    if strangers:
        print(f"  left as they were, not in the roster: {', '.join(strangers)}")
    if unlisted:
        print(
            f"  in the roster but not in {export} ({lms} does not know them): {', '.join(unlisted)}"
        )


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def blackboard(
    course: Course,
    assignment: str,
    export: Path,
    column: str,
    out: Path,
    missing: str = "empty",
    roster: Path | None = None,
) -> None:
    """Fill ``column`` of the Blackboard Grade Center download ``export`` (.csv or .xls) with
    the scores of ``assignment`` and write it to ``out`` in the download's own encoding and
    delimiter; everything else is kept byte for byte."""
    course.assignments([assignment])
    index = Index(learners_of(course, roster))
    text, encoding = read_download(export, "the Blackboard download")
    delimiter, header = grade_center_header(text, export)
    col = grade_center_column(header, column, export)
    got, top = scores(course, assignment)
    points = BLACKBOARD_POINTS.search(header[col])
    if points and top and float(points["points"]) != top:  # top 0: none graded yet
        print(
            f"NOTE: Blackboard's column is out of {points['points']} points, {assignment} out "
            f"of {number(top)}: the scores are written in points of {assignment}; set the "
            f"column's points in Blackboard to {number(top)}"
        )
    rows = list(records(text, export, delimiter))
    user = [h.lower() for h in header].index("username")
    filled = fill_grade_center(rows, text, user, col, index, got, MISSING[missing], export)
    unlisted = [x.student_id for x in index.learners if x.student_id not in filled.seen]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(splice(text, filled.changes).encode(encoding))
    kind = f"{'tab' if delimiter == TAB else 'comma'}-delimited {encoding[:6].upper()}"
    print(
        f"wrote {assignment} into the column {header[col]!r} of {out} ({kind}, as the "
        f"download): {filled.graded} graded, {filled.missing} without a submission "
        f"({'empty' if missing == 'empty' else '0'}); every other cell as in {export}. "
        "Blackboard: Grade Center > Work Offline > Upload (Ultra: the gradebook's upload)"
    )
    _note_suffix(out, delimiter)
    _report_leftovers(filled.strangers, unlisted, export, "Blackboard")


def read_download(path: Path, what: str) -> tuple[str, str]:
    """The text of the LMS download ``path`` and its encoding (``roster.lms_text``: UTF-16
    with its byte-order mark, else UTF-8); a CourseError naming the file when it is neither."""
    try:
        return lms_text(path.read_bytes())
    except OSError as err:
        raise CourseError(f"cannot read {what} {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise CourseError(
            f"{what} {path} is not {err.encoding.upper()} text; download it again from the "
            "LMS and pass the file as it came"
        ) from None


def grade_center_header(text: str, export: Path) -> tuple[str, list[str]]:
    """The delimiter of a Grade Center download (tab or comma: the one whose first record
    has a ``Username`` column) and its column headers; a CourseError for any other file."""
    for delimiter in (TAB, ","):
        first = next(records(text, export, delimiter), [])
        header = [v.lstrip("\ufeff").strip() for _, _, v in first]
        if "username" in (h.lower() for h in header):
            return delimiter, header
    raise CourseError(
        f"{export} has no Username column: is it Blackboard's Grade Center download? Download "
        f"it again ({BLACKBOARD_HOW}), with the user information, and pass it as it came"
    )


def grade_center_column(header: list[str], column: str, export: Path) -> int:
    """The index of ``column`` in a Grade Center header: the header exactly, else the one
    grade column of that name (before `` [Total Pts: ...]``) or that column id (after ``|``)."""
    column = column.strip()
    if header.count(column) == 1:
        return header.index(column)
    grade = {i: BLACKBOARD_COLUMN.match(h) for i, h in enumerate(header)}
    ids = column.lstrip("|").strip()
    matches = [i for i, m in grade.items() if m and (m["name"].strip() == column or m["id"] == ids)]
    if len(matches) == 1:
        return matches[0]
    listed = ", ".join(repr(header[i]) for i, m in grade.items() if m) or "none"
    why = "no column" if not matches else f"{len(matches)} columns"
    raise CourseError(
        f"{export} has {why} {column!r}; give --column as Blackboard writes it, its name "
        f"before ' [' or its column id after '|' (its grade columns: {listed})"
    )


@dataclass
class Filled:
    """What ``fill_grade_center`` wrote: the changed spans, and whom."""

    changes: list[Field] = field(default_factory=list)
    graded: int = 0
    missing: int = 0
    seen: set[str] = field(default_factory=set)  # course ids of the rows filled
    strangers: list[str] = field(default_factory=list)  # usernames not in the roster


def fill_grade_center(
    rows: list[list[Field]],
    text: str,
    user: int,
    col: int,
    index: Index,
    got: dict[str, float | None],
    missing: str,
    export: Path,
) -> Filled:
    """The new value of column ``col`` for every row whose ``Username`` (column ``user``) is
    a learner of ``index``: the score, or ``missing`` without a submission; in quotes when the
    cell was quoted, or was empty and the row's user name is quoted (Blackboard's comma-delimited
    files quote every value). A CourseError for a user name twice or a row that ends before the
    column."""
    filled = Filled()
    first: dict[str, int] = {}
    short = []
    for row, fields in enumerate(rows[1:], start=2):
        username = fields[user][2].strip() if len(fields) > user else ""
        if not username:
            continue
        if username.casefold() in first:
            raise CourseError(
                f"{export} has the Username {username!r} twice (rows {first[username.casefold()]}"
                f" and {row}): Blackboard matches the upload's rows by Username; download "
                f"the Grade Center again ({BLACKBOARD_HOW})"
            )
        first[username.casefold()] = row
        learner = index.find("username", username)
        if learner is None:
            filled.strangers.append(username)
            continue
        if len(fields) <= col:
            short.append(username)
            continue
        filled.seen.add(learner.student_id)
        score = got.get(learner.student_id)
        value = number(score) if score is not None else missing
        if score is None:
            filled.missing += 1
        else:
            filled.graded += 1
        a, b, _ = fields[col]
        quoted = text.startswith('"', a) or (a == b and text.startswith('"', fields[user][0]))
        filled.changes.append((a, b, f'"{value}"' if quoted else value))
    if short:
        raise CourseError(f"{export}: the rows of {', '.join(short)} end before the column")
    return filled


def _note_suffix(out: Path, delimiter: str) -> None:
    """A NOTE when ``out``'s name is not the one Blackboard reads its delimiter from."""
    tab = delimiter == TAB
    wanted = (".xls", ".txt") if tab else (".csv", ".txt")
    if out.suffix.lower() not in wanted:
        print(
            f"NOTE: Blackboard takes a {'tab' if tab else 'comma'}-delimited file as "
            f"{wanted[0]}: rename {out.name} to {out.stem}{wanted[0]} before the upload"
        )


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
