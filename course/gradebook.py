"""Everything the tool reads from or writes to nbgrader's gradebook, through nbgrader's API.

No SQL: ``nbgrader.api.Gradebook`` and its objects only, so the gradebook may be SQLite (the
default, ``<root>/gradebook.db``) or a server database such as PostgreSQL
(``AFZ_GRADEBOOK_URL``), which several graders may write at once. A gradebook that cannot be
opened (no driver, no server there, a wrong password, no such database, no right to create
tables) is a CourseError that says why and what to do.

Parallel autograding (``course.grading.engine``): a worker grades each submission against its own
SQLite copy of a seed gradebook, into which the submission's fields in the main gradebook
(extensions, manual grades, flags; ``export_submission``) were written first, and the
instructor's process writes the result into the main gradebook (``import_submission``), so a
submission is graded from the same state as it would be in the main gradebook, and the result
is what grading straight into the main gradebook gives. Only that process writes the main
gradebook, whatever its database.
"""

from __future__ import annotations

import functools
import os
import time
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from course.config import COURSE_ID, CourseError, check_gradebook_url
from course.grading.nbgrader_command import nbgrader_env

if TYPE_CHECKING:
    from nbgrader.api import Gradebook

Job = tuple[str, str]  # (assignment, student)

# What grading writes, and the instructor may set, on each object of a submission.
SUBMISSION_FIELDS = ("timestamp", "extension")
NOTEBOOK_FIELDS = ("flagged", "late_submission_penalty")
GRADE_FIELDS = ("auto_score", "manual_score", "extra_credit", "needs_manual_grade")
COMMENT_FIELDS = ("auto_comment", "manual_comment")
STUDENT_FIELDS = ("first_name", "last_name", "email", "lms_user_id")


# Graders that open a new, empty server database at the same moment each create nbgrader's
# tables, and all but one fail on a duplicate; the tables are there then, so open it again.
# PostgreSQL's codes: unique violation, duplicate table, duplicate object.
CREATED_MEANWHILE = {"23505", "42P07", "42710"}
OPEN_ATTEMPTS = 5


@contextmanager
def open_gradebook(url: str) -> Iterator[Gradebook]:
    """nbgrader's ``Gradebook`` for the course at ``url``, closed afterwards; a CourseError
    (``cannot_open``) when it cannot be opened."""
    with _open(url) as gb:
        yield gb


def _open(url: str) -> Gradebook:
    check_gradebook_url(url)
    os.environ.update({k: nbgrader_env()[k] for k in ("PATH", "JUPYTER_PLATFORM_DIRS")})
    import nbgrader.api
    from nbgrader.api import Gradebook, InvalidEntry
    from sqlalchemy.exc import DBAPIError

    # A new gradebook records the schema's revision, which nbgrader asks of a new `alembic`
    # process (about 3 CPU-s, once per gradebook); it is read here from the same scripts.
    nbgrader.api.get_alembic_version = schema_revision

    for attempt in range(1, OPEN_ATTEMPTS + 1):
        try:
            return Gradebook(url, COURSE_ID)
        except (DBAPIError, InvalidEntry) as err:
            # nbgrader turns the database's error into InvalidEntry when it adds the course
            db_err = err if isinstance(err, DBAPIError) else err.__context__
            if not isinstance(db_err, DBAPIError):
                raise
            if getattr(db_err.orig, "pgcode", None) in CREATED_MEANWHILE:
                if attempt < OPEN_ATTEMPTS:
                    time.sleep(0.1 * attempt)
                    continue
            raise CourseError(cannot_open(url, db_err)) from None
    raise AssertionError("unreachable")


@functools.cache
def schema_revision() -> str:
    """The newest revision of nbgrader's gradebook schema (what ``alembic heads`` prints),
    read from nbgrader's migration scripts in this process."""
    import nbgrader
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory(os.path.join(os.path.dirname(nbgrader.__file__), "alembic"))
    head = scripts.get_current_head()
    if head is None:
        raise CourseError(f"nbgrader's migration scripts in {scripts.dir} name no revision")
    return head


def cannot_open(url: str, err: Exception) -> str:
    """Why the gradebook at ``url`` could not be opened, in the database's words, and what
    to do about it (the URL shown without its password)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    user, database = parsed.username or "USER", parsed.database or "DATABASE"
    reason = str(getattr(err, "orig", err)).strip()
    low = reason.lower()
    if "password authentication failed" in low or "no password supplied" in low:
        hint = (
            "the password is wrong or missing: put it in ~/.pgpass (a line "
            f"HOST:PORT:{database}:{user}:PASSWORD, mode 600) or in PGPASSWORD"
        )
    elif f'database "{database}" does not exist' in low:
        hint = f"create it, as PostgreSQL's superuser: createdb --owner={user} {database}"
    elif f'role "{user}" does not exist' in low:
        hint = (
            f"create the user, as PostgreSQL's superuser: createuser --pwprompt {user}, "
            f"and make it the owner of {database}"
        )
    elif "permission denied" in low and parsed.get_backend_name() == "postgresql":
        hint = (
            f"{user} may not create nbgrader's tables in {database}: make it the owner "
            f"(ALTER DATABASE {database} OWNER TO {user}) or GRANT CREATE ON SCHEMA public "
            f"TO {user}"
        )
    elif parsed.get_backend_name() == "sqlite":
        hint = (
            "an SQLite gradebook's folder must exist and be writable, and SQLite takes one "
            "writer at a time (graders writing at once need a server database: PostgreSQL)"
        )
    else:
        hint = (
            "is the database server running, and reachable from this machine? Check the "
            "URL's host and port (or ?host=/socket/folder); `pg_isready -h HOST -p PORT` "
            "says whether a PostgreSQL server answers there"
        )
    return (
        f"cannot open the gradebook {parsed.render_as_string(hide_password=True)}: {reason}\n"
        f"{hint}. (The gradebook's URL is AFZ_GRADEBOOK_URL; unset, gradebook.db in the "
        "course root.)"
    )


Fields = dict[str, Any]  # one submission's fields, as export_submission gives them


def export_submission(gb: Gradebook, assignment: str, student: str) -> Fields | None:
    """What grading wrote, and the instructor may have set, on one submission (plain values:
    it travels from a Dask worker as it is); None when the gradebook has no such submission."""
    from nbgrader.api import MissingEntry

    try:
        sub = gb.find_submission(assignment, student)
    except MissingEntry:
        return None

    def fields(obj: object, names: Iterable[str]) -> dict[str, Any]:
        return {name: getattr(obj, name) for name in names}

    return {
        "student": fields(sub.student, STUDENT_FIELDS),
        "submission": fields(sub, SUBMISSION_FIELDS),
        "notebooks": {
            nb.name: {
                "notebook": fields(nb, NOTEBOOK_FIELDS),
                "grades": {g.name: fields(g, GRADE_FIELDS) for g in nb.grades},
                "comments": {c.name: fields(c, COMMENT_FIELDS) for c in nb.comments},
            }
            for nb in sub.notebooks
        },
    }


def import_submission(gb: Gradebook, assignment: str, student: str, data: Fields) -> None:
    """Write ``data`` (``export_submission``) into ``gb`` as the submission of ``student`` to
    ``assignment``, creating the student and the submission when missing; committed."""
    from nbgrader.api import MissingEntry

    try:
        gb.find_student(student)
    except MissingEntry:
        gb.add_student(student, **data["student"])
    with warnings.catch_warnings():
        # nbgrader's add_submission under SQLAlchemy 2 warns while it builds the submission's
        # notebooks, grades and comments; they are all added.
        warnings.filterwarnings("ignore", "Object of type .* not in session")
        sub = gb.update_or_create_submission(assignment, student)
    _set(sub, data["submission"])
    for name, nb in data["notebooks"].items():
        _set(gb.find_submission_notebook(name, assignment, student), nb["notebook"])
        for grade, values in nb["grades"].items():
            _set(gb.find_grade(grade, name, assignment, student), values)
        for comment, values in nb["comments"].items():
            _set(gb.find_comment(comment, name, assignment, student), values)
    gb.db.commit()


def _set(target: object, values: dict[str, Any]) -> None:
    for name, value in values.items():
        setattr(target, name, value)


def merge(worker_url: str, main_url: str, jobs: list[Job]) -> None:
    """Copy the submissions ``jobs`` from the gradebook ``worker_url`` into ``main_url``:
    the submission's timestamp and extension, each notebook's flag and late penalty, each
    grade's scores and needs-manual-grade flag, each comment. A job that the worker's
    gradebook has no submission for is left as the main gradebook has it."""
    with open_gradebook(worker_url) as src, open_gradebook(main_url) as dst:
        for a, s in jobs:
            data = export_submission(src, a, s)
            if data is not None:
                import_submission(dst, a, s, data)


def submission_scores(url: str, jobs: list[Job]) -> dict[Job, tuple[float | None, float]]:
    """{job: (its submission's score, or None without one; the assignment's max score)}."""
    from nbgrader.api import MissingEntry

    out: dict[Job, tuple[float | None, float]] = {}
    with open_gradebook(url) as gb:
        for a, s in jobs:
            top = gb.find_assignment(a).max_score
            try:
                out[(a, s)] = (gb.find_submission(a, s).score, top)
            except MissingEntry:
                out[(a, s)] = (None, top)
    return out


def every_score(url: str) -> list[tuple[str, str, float | None, float]]:
    """(student, assignment, score or None without a submission, max score) for every
    student and assignment in the gradebook."""
    rows = []
    with open_gradebook(url) as gb:
        for a in gb.assignments:
            for s in gb.students:
                try:
                    score: float | None = gb.find_submission(a.name, s.id).score
                except Exception:  # noqa: BLE001 - nbgrader's MissingEntry, or a broken row
                    score = None
                rows.append((s.id, a.name, score, a.max_score))
    return rows


def due_dates(url: str) -> dict[str, datetime | None]:
    """{assignment: its due date (naive UTC), or None} for the assignments of the gradebook."""
    with open_gradebook(url) as gb:
        return {a.name: a.duedate for a in gb.assignments}
