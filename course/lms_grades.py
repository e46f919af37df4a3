"""Grades back into the LMS, in the LMS's own import format, taking no grade away.

- ``canvas``: the gradebook CSV the instructor exported from Canvas (Grades > Export,
  ``lib/gradebook_exporter.rb``), with the assignment's column filled for the learners of the
  roster that have a new score (matched by Canvas's user ``ID``), and every other byte of the
  file as it was: other columns, other rows (``Points Possible``, the manual-posting row, the
  test student, learners the roster lacks), the cells of learners without a new score, the
  separator (comma or semicolon), the decimal comma, quoting, line endings, the byte-order
  mark. Canvas's Grades > Import (``app/models/gradebook_importer.rb``) changes a score only
  where the file's value differs from Canvas's ("no change to value": equal after rounding to
  two places, or both blank), so a cell kept as it was changes nothing.
- ``blackboard``: the Grade Center file the instructor downloaded from Blackboard Learn (Grade
  Center > Work Offline > Download; Ultra: Gradebook > Download), comma-delimited ``.csv``
  (UTF-8) or tab-delimited ``.xls`` (UTF-16 text with a byte-order mark, whatever its name
  says), with the assignment's column (``<name> [Total Pts: <points> Score] |<column id>``)
  filled for the roster's learners with a new score, matched by Blackboard's ``Username``;
  every other byte as it was, in the file's own encoding and delimiter.
- ``moodle``: a CSV for Moodle's gradebook import (Grades > Import > CSV file,
  ``grade/import/csv/classes/load_data.php``): a row per learner with a new score, keyed by
  the identifier the instructor chooses (``email``, ``username`` or ``idnumber``: Moodle's
  "Map from" field), and one grade column. Moodle reads an empty cell or ``-`` as "no grade"
  over the grade it has, and stops the whole import at a row whose learner it does not know,
  so a learner without a new score is left out of the file.

GitHub Classroom imports no grades: ``grades.csv`` (``--format csv``) is what it gets.

A learner without a submission keeps what the LMS has; ``missing="zero"`` writes 0 for them,
but only into an empty cell (Canvas, Blackboard) or for a learner without a grade in Moodle's
worksheet, and names the others. A learner whose notebook in submitted/ is not the one the
gradebook's score is of (``course.freshness``) stops the export, unless ``allow_stale``. Each
export prints what it wrote and what it left.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from course.config import Course, CourseError
from course.roster import Index, Learner, lms_text, load_roster, read_roster, sniff_delimiter

MOODLE_KEYS = {"email": "Email address", "username": "Username", "idnumber": "ID number"}
MISSING = ("empty", "zero")
NO_SCORE = ("", "-")  # what Canvas's and Moodle's importers read as no score

Field = tuple[int, int, str]  # start and end in the text, and the value
# A Blackboard grade column's header: "Attention 01 [Total Pts: 10 Score] |123456" (Ultra:
# "[Total Pts: up to 10 Score]"); the name may hold brackets of its own.
BLACKBOARD_COLUMN = re.compile(r"^(?P<name>.+?)\s*\[(?P<info>[^\]]*)\]\s*\|\s*(?P<id>\d+)$")
BLACKBOARD_POINTS = re.compile(r"Total Pts:\s*(?:up to\s*)?(?P<points>\d+(?:\.\d+)?)")
TAB = "\t"
BLACKBOARD_HOW = "Grade Center > Work Offline > Download; Ultra: Gradebook > Download"
CANVAS_MARKER = re.compile(r"^\s*(Muted|Manual Posting.*)?\s*$", re.IGNORECASE)
CANVAS_HIDDEN = "scores hidden from instructors"
DECIMAL_COMMA = re.compile(r"^-?\d+,\d+$")


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
    """{student: score, None without a submission or not graded yet} of ``assignment``, and
    its max score (``reports.score_table``: a submission graded with an error scores 0)."""
    from course.reports import score_table

    out: dict[str, float | None] = {}
    top = 0.0
    for student, a, score, max_score, outcome, _, _ in score_table(course):
        if a == assignment:
            ungraded = outcome in ("no submission", "not graded yet")
            out[student] = None if ungraded else float(score)
            top = float(max_score)
    return out, top


@dataclass
class Marks:
    """What the gradebook says of each learner of an export."""

    scores: dict[str, float]  # the score to write: graded (or behind, with allow_stale)
    behind: dict[str, str]  # collected but not graded (since): written with allow_stale only
    top: float  # the assignment's max score (0 while nothing is graded)

    def score(self, student: str) -> float | None:
        return self.scores.get(student)


def marks(course: Course, assignment: str, allow_stale: bool) -> Marks:
    """The scores of ``assignment``; a CourseError naming every learner whose score is not
    their collected notebook's (``course.freshness``), unless ``allow_stale``."""
    from course import freshness

    got, top = scores(course, assignment)
    scored = {s for s, v in got.items() if v is not None}
    behind = freshness.waiting(course, assignment, scored)
    if behind and not allow_stale:
        raise CourseError(freshness.refusal(assignment, behind))
    ready = {s: v for s, v in got.items() if v is not None}
    if not allow_stale:
        ready = {s: v for s, v in ready.items() if s not in behind}
    else:
        ready = {s: v for s, v in ready.items() if behind.get(s) != freshness.NOT_GRADED}
    return Marks(ready, behind, top)


def number(x: float) -> str:
    """A score as the LMS reads it: ``10``, ``7.5``, ``3.33``."""
    return f"{round(x, 2):.2f}".rstrip("0").rstrip(".")


def canvas_number(x: float, decimal_comma: bool) -> str:
    """A score as Canvas's export writes it (``I18n.n(score, precision: 2)``): ``12.00``,
    or ``12,00`` in a locale with a decimal comma."""
    text = f"{round(x, 2):.2f}"
    return text.replace(".", ",") if decimal_comma else text


def same_score(cell: str, value: float) -> bool:
    """Canvas's "no change to value": the cell (decimal comma or point) is ``value`` at two
    places."""
    try:
        return round(float(cell.strip().replace(",", ".")), 2) == round(value, 2)
    except ValueError:
        return False


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


def quoted(value: str, delimiter: str) -> str:
    """``value`` as a CSV cell: in quotes when it holds the delimiter, a quote or a line
    break (Ruby's CSV and Blackboard alike)."""
    if any(c in value for c in (delimiter, '"', "\r", "\n")):
        return '"' + value.replace('"', '""') + '"'
    return value


@dataclass
class Tally:
    """What an export wrote and left, learner by learner, for the summary."""

    graded: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)  # the cell held the score already
    zeros: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # no new score: the LMS keeps its own
    kept_grades: list[str] = field(default_factory=list)  # --missing zero over a grade: kept
    behind: list[str] = field(default_factory=list)
    excused: list[str] = field(default_factory=list)
    not_assigned: list[str] = field(default_factory=list)
    strangers: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)


def canvas(
    course: Course,
    assignment: str,
    export: Path,
    column: str,
    out: Path,
    missing: str = "empty",
    roster: Path | None = None,
    allow_stale: bool = False,
) -> None:
    """Fill ``column`` of the Canvas gradebook export ``export`` with the new scores of
    ``assignment`` and write it to ``out``; everything else is kept byte for byte."""
    course.assignments([assignment])
    index = Index(learners_of(course, roster))
    text, encoding = read_download(export, "the Canvas export")
    delimiter = sniff_delimiter(text.removeprefix("\ufeff"))
    rows = list(records(text, export, delimiter))
    header = [v.lstrip("\ufeff").strip() for _, _, v in rows[0]] if rows else []
    col, id_col = canvas_columns(header, column, export)
    got = marks(course, assignment, allow_stale)
    comma = any(DECIMAL_COMMA.match(v.strip()) for r in rows[1:] for _, _, v in r)
    tally, changes = Tally(), []
    for fields in rows[1:]:
        values = [v.strip() for _, _, v in fields]
        if _canvas_not_learner(values, col, header[col], got.top, assignment, export):
            continue
        change = _canvas_cell(fields, values, (col, id_col), index, got, (missing, comma), tally)
        if change is not None:
            a, b, value = change
            changes.append((a, b, quoted(value, delimiter)))
    unlisted = [x.student_id for x in index.learners if x.student_id not in tally.seen]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(splice(text, changes).encode(encoding))
    how = f"{'semicolon' if delimiter == ';' else 'comma'}-separated"
    print(
        f"wrote {assignment} into the column {header[col]!r} of {out} ({how}"
        f"{', decimal comma' if comma else ''}, as the export): every other cell as in {export}"
    )
    _summary(tally, unlisted, export, "Canvas", missing)


def canvas_columns(header: list[str], column: str, export: Path) -> tuple[int, int]:
    """The indexes of ``column`` and of ``ID`` in a Canvas export's header; a CourseError for
    another file or a column it does not have."""
    if not header or not (header[0] == "Student" or header[:2] == ["LastName", "FirstName"]):
        raise CourseError(
            f"{export} is not Canvas's gradebook export: its first column is "
            f"{header[0] if header else 'missing'!r}, not Student (or LastName, FirstName); "
            "export it again (Grades > Export) and pass the file as it came"
        )
    if "ID" not in header:
        raise CourseError(f"{export} has no ID column: is it Canvas's gradebook export?")
    matches = [i for i, h in enumerate(header) if h == column or h.startswith(column + " (")]
    if len(matches) != 1:
        assignments = ", ".join(h for h in header if re.search(r"\(\d+\)$", h)) or "none"
        why = "no column" if not matches else f"{len(matches)} columns"
        raise CourseError(
            f"{export} has {why} {column!r}; give --column as Canvas names it (its columns "
            f"of assignments: {assignments})"
        )
    return matches[0], header.index("ID")


def _canvas_not_learner(
    values: list[str], col: int, heading: str, top: float, assignment: str, export: Path
) -> bool:
    """Whether a row of the export is no learner's (Points Possible, the manual-posting
    markers); says when the column's points differ, refuses a column Canvas hides."""
    cell = values[col] if col < len(values) else ""
    if values and "Points Possible" in values[0]:
        possible = cell.replace(",", ".")
        if possible and top and _float(possible) not in (None, top):  # top 0: none graded
            print(
                f"NOTE: Canvas's column is out of {cell} points, {assignment} out of "
                f"{number(top)}: the scores are written in points of {assignment}; set the "
                f"column's points in Canvas to {number(top)}"
            )
        return True
    if all(CANVAS_MARKER.match(v) for v in values):
        if CANVAS_HIDDEN in cell:
            raise CourseError(
                f"{export}: the column {heading!r} is an anonymous assignment whose grades are "
                f"not posted ({cell!r}): Canvas takes no score into it before they are posted. "
                "Post the grades in Canvas, export the gradebook again and export into that"
            )
        return True
    return False


def _canvas_cell(
    fields: list[Field],
    values: list[str],
    columns: tuple[int, int],
    index: Index,
    got: Marks,
    how: tuple[str, bool],
    tally: Tally,
) -> Field | None:
    """The new value of one learner row's cell (``columns``: the assignment's and ``ID``;
    ``how``: --missing, and whether the file writes a decimal comma), or None to keep it."""
    (col, id_col), (missing, comma) = columns, how
    name = values[0]
    learner = index.find("lms_user_id", values[id_col]) if len(values) > id_col else None
    if learner is None:
        tally.strangers.append(name or (values[id_col] if len(values) > id_col else "?"))
        return None
    if len(fields) <= col:
        raise CourseError(f"the row of {name} ends before the column; export it again")
    tally.seen.add(learner.student_id)
    cell = values[col]
    a, b, _ = fields[col]
    score = got.score(learner.student_id)
    if cell.upper() == "EX":
        tally.excused.append(learner.student_id)
        return None
    if cell == "N/A":
        tally.not_assigned.append(learner.student_id)
        return None
    if score is not None:
        if same_score(cell, score):
            tally.unchanged.append(learner.student_id)
            return None
        tally.graded.append(learner.student_id)
        return (a, b, canvas_number(score, comma))
    return _missing_cell(learner.student_id, cell, (a, b), got, missing, tally)


def _missing_cell(
    sid: str, cell: str, span: tuple[int, int], got: Marks, missing: str, tally: Tally
) -> Field | None:
    """A learner without a new score: their cell is kept, but for a 0 into an empty cell
    with ``missing="zero"`` (never for a learner collected and not graded yet)."""
    if sid in got.behind:
        tally.behind.append(sid)
        return None
    if missing != "zero":
        tally.kept.append(sid)
        return None
    if cell.strip() not in NO_SCORE:
        tally.kept_grades.append(sid)
        return None
    tally.zeros.append(sid)
    return (span[0], span[1], "0")


def _summary(tally: Tally, unlisted: list[str], export: Path, lms: str, missing: str) -> None:
    """Print what an export wrote and left, naming the learners."""
    print(
        f"  {len(tally.graded)} score(s) written, {len(tally.unchanged)} already in {lms}; "
        f"{len(tally.zeros)} zero(s) for no submission"
        + ("" if missing == "zero" else " (--missing zero writes them)")
    )
    lines = [
        (tally.kept, f"no submission, kept as {lms} has it"),
        (tally.kept_grades, f"no submission but a grade in {lms}: kept (no zero over it)"),
        (tally.behind, "collected, score not of that notebook: kept (--allow-stale)"),
        (tally.excused, f"excused in {lms} (EX): kept"),
        (tally.not_assigned, f"N/A in {lms} (not assigned to them): kept"),
        (tally.strangers, "left as they were, not in the roster"),
        (unlisted, f"in the roster but not in {export} ({lms} does not know them)"),
    ]
    for who, what in lines:
        if who:
            print(f"  {what}: {', '.join(who)}")


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
    allow_stale: bool = False,
) -> None:
    """Fill ``column`` of the Blackboard Grade Center download ``export`` (.csv or .xls) with
    the new scores of ``assignment`` and write it to ``out`` in the download's own encoding
    and delimiter; everything else is kept byte for byte."""
    course.assignments([assignment])
    index = Index(learners_of(course, roster))
    text, encoding = read_download(export, "the Blackboard download")
    delimiter, header = grade_center_header(text, export)
    col = grade_center_column(header, column, export)
    got = marks(course, assignment, allow_stale)
    points = BLACKBOARD_POINTS.search(header[col])
    if points and got.top and float(points["points"]) != got.top:  # top 0: none graded yet
        print(
            f"NOTE: Blackboard's column is out of {points['points']} points, {assignment} out "
            f"of {number(got.top)}: the scores are written in points of {assignment}; set the "
            f"column's points in Blackboard to {number(got.top)}"
        )
    rows = list(records(text, export, delimiter))
    user = [h.lower() for h in header].index("username")
    tally = Tally()
    changes = fill_grade_center(rows, text, user, col, index, got, missing, export, tally)
    unlisted = [x.student_id for x in index.learners if x.student_id not in tally.seen]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(splice(text, changes).encode(encoding))
    kind = f"{'tab' if delimiter == TAB else 'comma'}-delimited {encoding[:6].upper()}"
    print(
        f"wrote {assignment} into the column {header[col]!r} of {out} ({kind}, as the "
        f"download): every other cell as in {export}. "
        "Blackboard: Grade Center > Work Offline > Upload (Ultra: the gradebook's upload)"
    )
    _summary(tally, unlisted, export, "Blackboard", missing)
    _note_suffix(out, delimiter)


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


def fill_grade_center(
    rows: list[list[Field]],
    text: str,
    user: int,
    col: int,
    index: Index,
    got: Marks,
    missing: str,
    export: Path,
    tally: Tally,
) -> list[Field]:
    """The new values of column ``col`` for the rows whose ``Username`` (column ``user``) is a
    learner of ``index`` with a new score (or a 0 into an empty cell with ``missing="zero"``):
    in quotes when the cell was quoted, or was empty and the row's user name is quoted
    (Blackboard's comma-delimited files quote every value). A CourseError for a user name
    twice or a row that ends before the column."""
    changes: list[Field] = []
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
            tally.strangers.append(username)
            continue
        if len(fields) <= col:
            short.append(username)
            continue
        tally.seen.add(learner.student_id)
        a, b, cell = fields[col]
        value = _grade_center_value(learner.student_id, cell, (a, b), got, missing, tally)
        if value is not None:
            was_quoted = text.startswith('"', a) or (
                a == b and text.startswith('"', fields[user][0])
            )
            changes.append((a, b, f'"{value}"' if was_quoted else value))
    if short:
        raise CourseError(f"{export}: the rows of {', '.join(short)} end before the column")
    return changes


def _grade_center_value(
    sid: str, cell: str, span: tuple[int, int], got: Marks, missing: str, tally: Tally
) -> str | None:
    """The new text of a learner's Grade Center cell, or None to keep it."""
    score = got.score(sid)
    if score is None:
        change = _missing_cell(sid, cell, span, got, missing, tally)
        return change[2] if change else None
    if _float(cell.strip()) is not None and round(float(cell), 2) == round(score, 2):
        tally.unchanged.append(sid)
        return None
    tally.graded.append(sid)
    return number(score)


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
    allow_stale: bool = False,
) -> None:
    """Moodle's grade import CSV of ``assignment``: one row per learner of the roster with a
    new score (and, with ``missing="zero"``, per learner without a submission and without a
    grade in the worksheet), keyed by ``key`` (email, username or idnumber), the grade in
    ``column``."""
    course.assignments([assignment])
    if key not in MOODLE_KEYS:
        raise CourseError(f"unknown key {key!r}; Moodle maps from {', '.join(MOODLE_KEYS)}")
    learners = learners_of(course, roster)
    got = marks(course, assignment, allow_stale)
    tally = Tally(seen={x.student_id for x in learners})
    rows = []
    for x in learners:
        score = got.score(x.student_id)
        if score is not None:
            tally.graded.append(x.student_id)
            rows.append((x, number(score)))
        elif _missing_cell(x.student_id, x.lms_grade, (0, 0), got, missing, tally):
            rows.append((x, "0"))
    lacking = [x.student_id for x, _ in rows if not getattr(x, key)]
    if lacking:
        raise CourseError(
            f"the roster has no {key} for {', '.join(lacking)}: choose another --key, or "
            f"export a roster with the column {MOODLE_KEYS[key]!r}"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow([MOODLE_KEYS[key], "Full name", column or assignment])
        w.writerows([getattr(x, key), x.name, value] for x, value in rows)
    print(
        f"wrote {len(rows)} row(s) of {assignment} to {out}, keyed by {key}; a learner "
        "without a new score has no row, so Moodle keeps their grade. Moodle: Grades > Import "
        f"> CSV file, map {MOODLE_KEYS[key]!r} to the user's {key}"
    )
    _summary(tally, [], out, "Moodle", missing)
    others = sorted(set(got.scores) - {x.student_id for x in learners})
    if others:
        print(f"  in the gradebook but not in the roster, not written: {', '.join(others)}")
