"""The class list, as an LMS exports it, and the course's copy of it (``roster.csv``).

An instructor exports the class list from where the learners are. ``read_roster`` tells the
export by its header row and reads it as that LMS writes it:

- Canvas's gradebook export (*Grades > Export*, ``lib/gradebook_exporter.rb``): ``Student``
  (or ``LastName``, ``FirstName`` with "split student names"), ``ID``, ``SIS User ID``,
  ``SIS Login ID``, ``Section``, ...; comma- or semicolon-separated (the user's "field
  separator" setting), with or without a byte-order mark; a ``Points Possible`` row, a row of
  ``Manual Posting`` markers when an assignment posts grades by hand, and the test student
  last. A name that starts with ``=`` is written ``="..."``.
- Moodle's grading worksheet (*Download grading worksheet*): headers, participant
  identifiers (``Participant 123456``) and dates in the downloader's language (English,
  German, Simplified Chinese: ``course.lms_strings``); a byte-order mark.
- Blackboard's Grade Center download (``Last Name``, ``First Name``, ``Username``, ``Student
  ID``, ...), comma-delimited UTF-8 or tab-delimited UTF-16 ``.xls``.
- GitHub Classroom's roster (``identifier``, ``github_username``, ``github_id``, ``name``
  and sometimes ``group_name``, every value quoted): ``identifier`` is the instructor's name
  for the learner; the GitHub columns are empty until the learner links an account.
- The course's own ``roster.csv`` (``student_id``, ...), or any CSV with some of these
  columns (``email``, ``username``, ``First name``, ...).

Every learner gets a course id: the ``student_id`` column; else, for GitHub Classroom, the
``identifier`` (the part before ``@`` of an e-mail address); else the user name, the part of
the e-mail address before ``@``, the ID number, or Moodle's participant id under blind
marking; made safe for nbgrader. A roster with a learner twice (the same course id, LMS id,
user name, e-mail or participant) is refused, naming the lines.

``save_roster`` keeps the roster in ``<root>/roster.csv`` for later collects and grade
exports, and ``import_roster`` writes it into the gradebook with nbgrader's own student import
(``nbgrader db student import``: id, first and last name, e-mail, LMS user id).
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import re
import tempfile
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from pathlib import Path

from course.config import STUDENT_ID, Course, CourseError
from course.lms_strings import MoodleLanguage, moodle_language, moodle_time, participant_id
from course.students import from_spreadsheet, spreadsheet_safe, student_key, student_slug

ROSTER_FILE = "roster.csv"


@dataclass
class Learner:
    """One learner of the class list; empty strings for what the export did not have."""

    student_id: str  # the course's id (nbgrader's student id)
    first_name: str = ""
    last_name: str = ""
    name: str = ""  # the full name as the LMS shows it
    email: str = ""
    lms_user_id: str = ""  # Canvas's user ID (GitHub's numeric id for GitHub Classroom)
    username: str = ""  # Canvas SIS login, Moodle/Blackboard user name, GitHub user name
    idnumber: str = ""  # Moodle ID number, Canvas SIS user ID, Blackboard student ID
    participant: str = ""  # Moodle's participant identifier (in its download's folder names)
    submitted: str = ""  # Moodle's worksheet: "Last modified (submission)", YYYY-MM-DD HH:MM
    sortable: str = ""  # Canvas: the name as its download's file names are made from
    lms_grade: str = ""  # the grade the export held when read (Moodle's worksheet); not kept


COLUMNS = [f.name for f in fields(Learner) if f.name != "lms_grade"]
TIME = "%Y-%m-%d %H:%M"  # ``submitted``, as roster.csv keeps it

# Column headers of exports that are not one of the LMSs above, lowercased, for each field.
HEADERS = {
    "student_id": ("student_id",),
    "first_name": ("first_name", "first name"),
    "last_name": ("last_name", "last name", "surname"),
    "name": ("name", "student", "full name"),
    "email": ("email", "email address", "e-mail", "e-mail address"),
    "lms_user_id": ("lms_user_id", "id"),
    "username": ("username", "sis login id", "login_id", "user name"),
    "idnumber": ("idnumber", "id number", "sis user id", "student id"),
    "participant": ("participant",),
    "submitted": ("submitted",),
    "sortable": ("sortable",),
}
CANVAS_COLUMNS = {
    "ID": "lms_user_id",
    "SIS User ID": "idnumber",
    "SIS Login ID": "username",
}
BLACKBOARD_COLUMNS = {
    "Last Name": "last_name",
    "First Name": "first_name",
    "Username": "username",
    "Student ID": "idnumber",
}
GITHUB_HEADER = ["identifier", "github_username", "github_id", "name"]
# A row of Canvas's export that only marks the assignments that post grades by hand.
CANVAS_MARKER_ROW = re.compile(r"^\s*(Muted|Manual Posting.*)?\s*$", re.IGNORECASE)
CANVAS_TEST_STUDENT = ("student, test", "test student")
NOT_LEARNERS = ("points possible", *CANVAS_TEST_STUDENT)  # Canvas's rows that are no learner


def read_roster(path: Path) -> list[Learner]:
    """The learners of the class list ``path``; a CourseError naming the file (and line)
    when it cannot be read, names no learner, or holds one learner twice."""
    text = _roster_text(path)
    delimiter = sniff_delimiter(text)
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    if not rows or not any(c.strip() for c in rows[0]):
        raise CourseError(f"the roster {path} is empty; export the class list as CSV")
    header = [h.strip() for h in rows[0]]
    reader = _reader_for(header, path)
    learners: list[tuple[int, Learner]] = []
    for line, row in enumerate(rows[1:], start=2):
        row = [c.strip() for c in row]
        if not any(row) or reader.skip(row):
            continue
        values = reader.values(row, f"the roster {path} line {line}")
        learners.append((line, _learner(values, path, line)))
    if not learners:
        raise CourseError(f"the roster {path} lists no learner (only its header)")
    _refuse_twice(learners, path)
    return [learner for _, learner in learners]


def _roster_text(path: Path) -> str:
    try:
        return lms_text(path.read_bytes())[0].removeprefix("\ufeff")
    except OSError as err:
        raise CourseError(f"cannot read the roster {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise CourseError(
            f"the roster {path} is not UTF-8 text; export it from the LMS as CSV (UTF-8), or "
            "pass Blackboard's .xls download as it came"
        ) from None


def sniff_delimiter(text: str) -> str:
    """The field separator of an LMS's CSV ``text``: tab, semicolon or comma, the one that
    splits its first three records into the same number of fields, most of them (Canvas's
    importer decides between ``;`` and ``,`` the same way); a comma on a tie."""
    best, most = ",", 0
    for delimiter in (",", ";", "\t"):
        try:
            reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
            counts = [len(r) for r in itertools.islice(reader, 3)]
        except csv.Error:
            continue
        if counts and len(set(counts)) == 1 and counts[0] > most:
            best, most = delimiter, counts[0]
    if most <= 1:  # no consistent split: the one that splits the header most
        first = text.partition("\n")[0]
        best = max((",", ";", "\t"), key=lambda d: (first.count(d), d == ","))
    return best


class _Reader:
    """How one kind of export's rows become a learner's fields."""

    kind = "csv"

    def __init__(self, header: list[str], where: dict[str, int]) -> None:
        self.header = header
        self.where = where

    def skip(self, row: list[str]) -> bool:
        """Whether ``row`` is no learner (a marker row of the export)."""
        return False

    def values(self, row: list[str], at: str) -> dict[str, str]:
        """The learner's fields of ``row``; ``at`` names the row for errors."""
        return {f: from_spreadsheet(row[i]) if i < len(row) else "" for f, i in self.where.items()}


class _Canvas(_Reader):
    """Canvas's gradebook export."""

    kind = "canvas"

    def skip(self, row: list[str]) -> bool:
        if "Points Possible" in row[0]:
            return True
        if all(CANVAS_MARKER_ROW.match(c) for c in row):  # the manual-posting row
            return True
        return self._sortable(row).lower() in CANVAS_TEST_STUDENT

    def values(self, row: list[str], at: str) -> dict[str, str]:
        values = super().values(row, at)
        sortable = self._sortable(row)
        values["sortable"] = sortable
        if "last_name" in self.where:  # "split student names"
            first, last = values["first_name"], values["last_name"]
        else:
            last, _, first = sortable.partition(",")
            if not first:  # a single name
                last, first = sortable, ""
        values["first_name"], values["last_name"] = first.strip(), last.strip()
        values["name"] = " ".join(v for v in (first.strip(), last.strip()) if v)
        return values

    def _sortable(self, row: list[str]) -> str:
        if "last_name" in self.where:
            last = _unformula(_cell(row, self.where["last_name"]))
            first = _unformula(_cell(row, self.where["first_name"]))
            return f"{last}, {first}" if first else last
        return _unformula(row[0])


class _Moodle(_Reader):
    """Moodle's grading worksheet, in the language ``lang``."""

    kind = "moodle"

    def __init__(self, header: list[str], where: dict[str, int], lang: MoodleLanguage) -> None:
        super().__init__(header, where)
        self.lang = lang

    def values(self, row: list[str], at: str) -> dict[str, str]:
        values = super().values(row, at)
        participant = participant_id(row[0], self.lang)
        if participant is None:
            raise CourseError(
                f"{at}: {row[0]!r} is not a Moodle participant identifier "
                f"({self.lang.hiddenuser.strip()} <number>); download the grading worksheet again"
            )
        values["participant"] = participant
        values["submitted"] = _worksheet_time(values.get("submitted", ""), at)
        if values.get("name"):
            values["last_name"] = values["name"]  # the worksheet has the full name only
        return values


class _GitHub(_Reader):
    """GitHub Classroom's roster: the learner is the instructor's ``identifier``."""

    kind = "github-classroom"

    def values(self, row: list[str], at: str) -> dict[str, str]:
        identifier = from_spreadsheet(_cell(row, 0))
        values = {"username": _cell(row, 1), "lms_user_id": _cell(row, 2)}
        if "@" in identifier:  # an e-mail address: the name is the learner's GitHub name
            values["email"] = identifier
            values["student_id"] = student_slug(identifier.partition("@")[0])
            values["name"] = _cell(row, 3)
        else:
            values["idnumber"] = identifier
            values["student_id"] = student_slug(identifier) if identifier else ""
            last, comma, first = identifier.partition(",")  # "Last, First"
            if comma:
                values["last_name"], values["first_name"] = last.strip(), first.strip()
            values["name"] = f"{first.strip()} {last.strip()}" if comma else identifier
        return values


def _reader_for(header: list[str], path: Path) -> _Reader:
    """The reader of the export whose first row is ``header``; a CourseError when no column
    names a learner."""
    lang = moodle_language(header)
    if lang is not None:
        return _Moodle(header, _moodle_columns(header, lang), lang)
    if [h.lower() for h in header[:4]] == GITHUB_HEADER:
        return _GitHub(header, {})
    if header and (header[0] == "Student" or header[:2] == ["LastName", "FirstName"]):
        if "ID" in header:
            return _Canvas(header, _canvas_columns(header))
    if "Username" in header and "Last Name" in header:
        where = {f: header.index(h) for h, f in BLACKBOARD_COLUMNS.items() if h in header}
        return _Reader(header, where)
    where = _generic_columns(header)
    keys = ("student_id", "username", "email", "idnumber", "lms_user_id")
    if not any(k in where for k in keys):
        raise CourseError(
            f"the roster {path} has none of the columns that name a learner (student_id, "
            "ID, SIS Login ID, Username, Email address, ID number, identifier); its "
            f"columns are {', '.join(header)}"
        )
    return _Reader(header, where)


def _canvas_columns(header: list[str]) -> dict[str, int]:
    where = {f: header.index(h) for h, f in CANVAS_COLUMNS.items() if h in header}
    if header[:2] == ["LastName", "FirstName"]:
        where["last_name"], where["first_name"] = 0, 1
    return where


def _moodle_columns(header: list[str], lang: MoodleLanguage) -> dict[str, int]:
    names = {
        lang.fullname: "name",
        lang.email: "email",
        lang.idnumber: "idnumber",
        lang.username: "username",
        lang.submitted: "submitted",
        lang.grade: "lms_grade",
    }
    return {names[h]: i for i, h in enumerate(header) if h in names}


def _generic_columns(header: list[str]) -> dict[str, int]:
    lower = [h.lower() for h in header]
    where: dict[str, int] = {}
    for field_name, names in HEADERS.items():
        for n in names:
            if n in lower and field_name not in where:
                where[field_name] = lower.index(n)
    return where


def _cell(row: list[str], i: int) -> str:
    return row[i] if i < len(row) else ""


def _unformula(name: str) -> str:
    """A name as Canvas wrote it, ``="..."`` around a name that starts with ``=``, read back."""
    m = re.fullmatch(r'="(.*)"', name)
    return m[1] if m else name


def _worksheet_time(text: str, at: str) -> str:
    """A worksheet's "Last modified (submission)" as ``TIME``; "" for none (``-``)."""
    if text in ("", "-"):
        return ""
    if _is_time(text):
        return text
    at_time = moodle_time(text)
    if at_time is None:
        raise CourseError(
            f"{at}: {text!r} is not a date as Moodle writes it in English, German or "
            "Simplified Chinese; download the grading worksheet again in one of these languages"
        )
    return at_time.strftime(TIME)


def _is_time(text: str) -> bool:
    try:
        datetime.strptime(text, TIME)
    except ValueError:
        return False
    return True


def _learner(values: dict[str, str], path: Path, line: int) -> Learner:
    """The learner of one row's ``values``, with its course id."""
    if "submitted" in values and values["submitted"] and not _is_time(values["submitted"]):
        values["submitted"] = _worksheet_time(values["submitted"], f"the roster {path} line {line}")
    if not values.get("name"):
        values["name"] = " ".join(
            v for v in (values.get("first_name"), values.get("last_name")) if v
        )
    elif not values.get("first_name") and not values.get("last_name"):
        values["last_name"] = values["name"]
    sid = values.pop("student_id", "") or _course_id(values)
    if not sid:
        raise CourseError(
            f"the roster {path} line {line} names no learner: it has no student_id, user "
            "name, e-mail or ID number"
        )
    if not STUDENT_ID.match(sid):
        raise CourseError(
            f"the roster {path} line {line}: {sid!r} is not a usable student id "
            "(lowercase ASCII letters, digits, '_', '.', '-')"
        )
    return Learner(sid, **{k: v for k, v in values.items() if k in LEARNER_FIELDS})


LEARNER_FIELDS = {f.name for f in fields(Learner)} - {"student_id"}


def _refuse_twice(learners: list[tuple[int, Learner]], path: Path) -> None:
    """A CourseError when two rows are one learner."""
    for key in ("student_id", "lms_user_id", "username", "email", "participant"):
        seen: dict[str, int] = {}
        for line, learner in learners:
            value = getattr(learner, key)
            if not value:
                continue
            norm = value.casefold()
            if norm in seen:
                raise CourseError(
                    f"the roster {path} has the {key} {value!r} twice (lines {seen[norm]} and "
                    f"{line}): one learner per row; remove or correct one of them"
                )
            seen[norm] = line


def lms_text(raw: bytes) -> tuple[str, str]:
    """The text of a file an LMS exported, and its encoding: UTF-16 when it starts with
    UTF-16's byte-order mark (Blackboard's tab-delimited .xls download), else UTF-8. A
    byte-order mark stays in the text, so the text encoded again gives the same bytes;
    UnicodeDecodeError when the bytes are not text of that encoding."""
    encoding = "utf-8"
    if raw.startswith(codecs.BOM_UTF16_LE):
        encoding = "utf-16-le"
    elif raw.startswith(codecs.BOM_UTF16_BE):
        encoding = "utf-16-be"
    return raw.decode(encoding), encoding


def _course_id(values: dict[str, str]) -> str:
    for key in ("username", "email", "idnumber"):
        value = values.get(key, "")
        if key == "email":
            value = value.partition("@")[0]
        if value:
            return student_slug(value)
    if values.get("participant"):  # blind marking: Moodle names no one else
        return f"participant-{values['participant']}"
    return ""


def save_roster(root: Path, learners: list[Learner]) -> Path:
    """Keep ``learners`` in ``<root>/roster.csv`` (the course's form of the roster): added to
    the learners already there, a learner of the same course id replaced."""
    path = root / ROSTER_FILE
    old = load_roster(root) or []
    new_ids = {x.student_id for x in learners}
    learners = [x for x in old if x.student_id not in new_ids] + learners
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        w.writerows({k: spreadsheet_safe(v) for k, v in asdict(x).items()} for x in learners)
    return path


def load_roster(root: Path) -> list[Learner] | None:
    """``<root>/roster.csv`` as the collect that saved it read it; None when there is none."""
    path = root / ROSTER_FILE
    return read_roster(path) if path.exists() else None


def import_roster(learners: list[Learner], course: Course) -> None:
    """Create or update every learner in the gradebook with nbgrader's own student import
    (``nbgrader db student import``, run in this process: its columns are id, first_name,
    last_name, email and lms_user_id)."""
    import logging
    import os

    from nbgrader.apps.dbapp import DbStudentImportApp

    from course.config import COURSE_ID
    from course.gradebook import open_gradebook
    from course.grading.nbgrader_command import nbgrader_env

    url = course.gradebook_url
    with open_gradebook(url):  # a gradebook that cannot be opened: a clear CourseError
        pass
    os.environ.update({k: nbgrader_env()[k] for k in ("PATH", "JUPYTER_PLATFORM_DIRS")})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "students.csv"
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["id", "first_name", "last_name", "email", "lms_user_id"])
            for x in learners:
                w.writerow([x.student_id, x.first_name, x.last_name, x.email, x.lms_user_id])
        app = DbStudentImportApp()
        log = io.StringIO()
        try:
            app.initialize(
                [
                    str(path),
                    f"--CourseDirectory.db_url={url}",
                    f"--CourseDirectory.course_id={COURSE_ID}",
                    f"--CourseDirectory.root={course.root}",
                    "--log-level=ERROR",
                ]
            )
            app.log.handlers = [logging.StreamHandler(log)]
            app.start()
        except SystemExit:
            why = log.getvalue().strip()
            raise CourseError(f"nbgrader db student import failed: {why}") from None
        finally:
            app.clear_instance()
    print(f"roster: {len(learners)} learner(s) imported into the gradebook (nbgrader's import)")


class Index:
    """The learners of a roster found by each of their identities."""

    def __init__(self, learners: list[Learner]) -> None:
        self.learners = learners
        self.by: dict[str, dict[str, Learner]] = {}
        for key in ("student_id", "lms_user_id", "username", "email", "participant", "name"):
            table: dict[str, Learner] = {}
            twice: set[str] = set()
            for x in learners:
                value = getattr(x, key)
                if value:
                    norm = student_key(value)
                    if norm in table:
                        twice.add(norm)
                    table[norm] = x
            for norm in twice:  # two learners of one name: a name identifies neither
                del table[norm]
            self.by[key] = table

    def find(self, key: str, value: str) -> Learner | None:
        """The learner whose ``key`` (a Learner field) is ``value`` (case and Unicode form
        ignored), or None."""
        return self.by[key].get(student_key(value)) if value else None
