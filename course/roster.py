"""The class list, as an LMS exports it, and the course's copy of it (``roster.csv``).

An instructor exports the class list from where the learners are: Canvas's gradebook export
(``Student, ID, SIS User ID, SIS Login ID, ...``), Moodle's grading worksheet (``Identifier,
Full name, Email address, ...``) or participants list (``First name, Last name, ID number,
Email address, Username``), Blackboard's Grade Center (``Last Name, First Name, Username,
Student ID, ...``), GitHub Classroom's roster (``identifier, github_username, github_id,
name``), or the course's own ``roster.csv``. ``read_roster`` recognises the columns of each
and gives every learner a course id (the ``student_id`` column, else the user name, else the
part of the e-mail address before ``@``, else the ID number, made safe for nbgrader). A roster
with a learner twice (the same course id, LMS id, user name or e-mail) is refused, naming the
lines.

``save_roster`` keeps the roster in ``<root>/roster.csv`` for later collects and grade
exports, and ``import_roster`` writes it into the gradebook with nbgrader's own student import
(``nbgrader db student import``: id, first and last name, e-mail, LMS user id).

Each is read as CSV in UTF-8, or, as Blackboard's tab-delimited ``.xls`` download is, as
tab-delimited UTF-16 text with a byte-order mark.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
import tempfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from course.config import STUDENT_ID, Course, CourseError
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
    lms_user_id: str = ""  # Canvas's user ID
    username: str = ""  # Canvas SIS login, Moodle/Blackboard user name, GitHub user name
    idnumber: str = ""  # Moodle ID number, Canvas SIS user ID, Blackboard student ID
    participant: str = ""  # Moodle's participant identifier (in its download's folder names)
    submitted: str = ""  # Moodle's worksheet: "Last modified (submission)", local time


COLUMNS = [f.name for f in fields(Learner)]

# Column headers of the LMS exports, lowercased, for each field.
HEADERS = {
    "student_id": ("student_id",),
    "first_name": ("first_name", "first name"),
    "last_name": ("last_name", "last name", "surname"),
    "name": ("name", "student", "full name"),
    "email": ("email", "email address", "e-mail", "e-mail address"),
    "lms_user_id": ("lms_user_id", "id", "github_id"),
    "username": ("username", "sis login id", "github_username", "login_id", "user name"),
    "idnumber": ("idnumber", "id number", "sis user id", "student id"),
    "participant": ("participant", "identifier"),
    "submitted": ("submitted", "last modified (submission)"),
}
# Rows of a Canvas export that are no learner.
NOT_LEARNERS = ("points possible", "manual posting", "student, test")  # Canvas


def read_roster(path: Path) -> list[Learner]:
    """The learners of the CSV class list ``path``; a CourseError naming the file (and line)
    when it cannot be read, names no learner, or holds one learner twice."""
    try:
        text = lms_text(path.read_bytes())[0].removeprefix("\ufeff")
    except OSError as err:
        raise CourseError(f"cannot read the roster {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise CourseError(
            f"the roster {path} is not UTF-8 text; export it from the LMS as CSV (UTF-8), or "
            "pass Blackboard's .xls download as it came"
        ) from None
    first = text.partition("\n")[0]
    delimiter = "\t" if first.count("\t") > first.count(",") else ","  # Blackboard's .xls
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader, None)
    if not header:
        raise CourseError(f"the roster {path} is empty; export the class list as CSV")
    lower = [h.strip().lower() for h in header]
    where: dict[str, int] = {}
    for field_name, names in HEADERS.items():
        for n in names:
            if n in lower and field_name not in where:
                where[field_name] = lower.index(n)
    keys = ("student_id", "username", "email", "idnumber", "lms_user_id")
    if not any(k in where for k in keys):
        raise CourseError(
            f"the roster {path} has none of the columns that name a learner (student_id, "
            "ID, SIS Login ID, Username, Email address, ID number, github_username); its "
            f"columns are {', '.join(header)}"
        )
    learners: list[tuple[int, Learner]] = []
    for line, row in enumerate(reader, start=2):
        if not any(c.strip() for c in row):
            continue
        values = {
            f: from_spreadsheet(row[i].strip()) if i < len(row) else "" for f, i in where.items()
        }
        if values.get("name", "").lower().strip() in NOT_LEARNERS:
            continue
        if values.get("submitted", "").strip() == "-":  # Moodle: no submission
            values["submitted"] = ""
        if "participant" in values:  # Moodle's worksheet: "Participant 123456"
            values["participant"] = re.sub(r"\D", "", values["participant"])
        if "name" in values and "," in values["name"] and not values.get("first_name"):
            last, _, first = values["name"].partition(",")  # Canvas: "Last, First"
            values["last_name"], values["first_name"] = last.strip(), first.strip()
            values["name"] = f"{first.strip()} {last.strip()}".strip()
        if not values.get("name"):
            values["name"] = " ".join(
                v for v in (values.get("first_name"), values.get("last_name")) if v
            )
        elif not values.get("first_name") and not values.get("last_name"):
            values["last_name"] = values["name"]  # Moodle's worksheet: the full name only
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
        learners.append((line, Learner(sid, **values)))
    if not learners:
        raise CourseError(f"the roster {path} lists no learner (only its header)")
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
    return [learner for _, learner in learners]


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
    return ""


def save_roster(root: Path, learners: list[Learner]) -> Path:
    """Keep ``learners`` in ``<root>/roster.csv`` (the course's form of the roster): added to
    the learners already there, a learner of the same course id replaced."""
    path = root / ROSTER_FILE
    old = load_roster(root) or []
    new_ids = {x.student_id for x in learners}
    learners = [x for x in old if x.student_id not in new_ids] + learners
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
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
    from course.runner import nbgrader_env

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
