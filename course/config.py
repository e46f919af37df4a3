"""The course's names and folders: one place for what nbgrader and the tool must agree on.

A course root is an nbgrader course directory: the repository itself, or any folder laid out
the same way (``solutions/`` and ``exercises/`` beside the working folders). Every path the
tool uses is resolved from the root it was given, never from where this file lives.

A course also has its grading settings (``autograder.settings``: limits, feedback policy, the
gradebook's URL), built once from the root's ``grading.toml``, ``AFZ_GRADEBOOK_URL`` and the
command line; the gradebook URL defaults to ``sqlite:///<root>/gradebook.db`` and may name
PostgreSQL, e.g. ``postgresql+psycopg2://grader@dbhost/afz`` (``check_gradebook_url``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder import settings as grading_settings
from autograder.settings import Settings, SettingsError

# The repository that holds this package: its nbgrader_config.py, the grading kernel's spec
# (tools/kernels/) and the default course root.
REPO = Path(__file__).resolve().parents[1]

COURSE_ID = "attention-from-zero"
# nbgrader's folders, relative to the course root.
SOURCE = "solutions"  # nbgrader's "source": solutions and hidden tests
RELEASE = "exercises"  # nbgrader's "release": what learners get
SUBMITTED = "submitted"
AUTOGRADED = "autograded"
FEEDBACK = "feedback"
GRADEBOOK_FILE = "gradebook.db"
STUDENT_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")  # nbgrader: folder names, DB keys


class CourseError(RuntimeError):
    """A problem the instructor has to fix; printed without a traceback."""


def load_settings(root: Path, options: list[str] | tuple[str, ...] = ()) -> Settings:
    """The grading settings of the course root ``root`` (``autograder.settings.load``); a
    setting that cannot be used is a CourseError."""
    try:
        return grading_settings.load(root, options)
    except SettingsError as err:
        raise CourseError(str(err)) from None


URL_FORMS = (
    "sqlite:////absolute/path/gradebook.db, postgresql+psycopg2://USER@HOST[:PORT]/DATABASE "
    "or postgresql+psycopg2://USER@/DATABASE?host=/socket/folder"
)


def check_gradebook_url(url: str, where: str = "the gradebook URL") -> None:
    """Raise a CourseError that says how to write ``url`` when SQLAlchemy cannot parse it or
    its database driver is not installed (``postgresql://`` means psycopg 3 to SQLAlchemy
    2.1; this course installs psycopg2). ``where`` names where the URL came from. Connects to
    nothing; a password in the URL is never shown."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        raise CourseError(f"{where} is not a database URL; write it as {URL_FORMS}") from None
    shown = parsed.render_as_string(hide_password=True)
    try:
        dialect = parsed.get_dialect()
    except ArgumentError:  # NoSuchModuleError: an unknown scheme
        hint = "; PostgreSQL's is postgresql+psycopg2://" if "postgres" in parsed.drivername else ""
        raise CourseError(
            f"{where} {shown}: SQLAlchemy knows no database {parsed.drivername!r}{hint}. "
            f"Write it as {URL_FORMS}"
        ) from None
    try:
        dialect.import_dbapi()
    except ImportError as err:
        fix = f"Write it as {URL_FORMS}"
        if parsed.get_backend_name() == "postgresql":
            psycopg2 = parsed.set(drivername="postgresql+psycopg2")
            fix = (
                "Name the driver this course installs, psycopg2: "
                f"{psycopg2.render_as_string(hide_password=True)}"
            )
        raise CourseError(
            f"{where} {shown} asks SQLAlchemy for the database driver "
            f"{parsed.get_driver_name()!r} (Python module {err.name or err}), which is not "
            f"installed. {fix}"
        ) from None


def sqlite_path(url: str) -> Path | None:
    """The file of an SQLite URL (``sqlite:///<path>``), None for any other database."""
    return Path(url[len("sqlite:///") :]) if url.startswith("sqlite:///") else None


@dataclass(frozen=True)
class Course:
    """The folders of one course root (an absolute path) and its grading settings (default:
    ``load_settings(root)``)."""

    root: Path
    settings: Settings = field(default=None, compare=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).resolve())
        if self.settings is None:
            object.__setattr__(self, "settings", load_settings(self.root))

    @property
    def solutions(self) -> Path:
        return self.root / SOURCE

    @property
    def exercises(self) -> Path:
        return self.root / RELEASE

    @property
    def submitted(self) -> Path:
        return self.root / SUBMITTED

    @property
    def autograded(self) -> Path:
        return self.root / AUTOGRADED

    @property
    def feedback(self) -> Path:
        return self.root / FEEDBACK

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    @property
    def gradebook_url(self) -> str:
        """The settings' gradebook URL (checked: ``check_gradebook_url``), or the SQLite file
        ``gradebook.db`` in the root."""
        url = self.settings.gradebook_url
        if not url:
            return f"sqlite:///{self.root / GRADEBOOK_FILE}"
        check_gradebook_url(url, self.settings.origin.get("gradebook_url", "the gradebook URL"))
        return url

    def assignments(self, names: list[str] | None = None) -> list[str]:
        """The assignments in solutions/ (or ``names``, checked against them)."""
        source = self.solutions
        if not source.is_dir():
            raise CourseError(
                f"{self.root} is not a course root: it has no {SOURCE}/ folder (--root names "
                f"the folder that holds {SOURCE}/ and {RELEASE}/)"
            )
        known = sorted(p.name for p in source.iterdir() if p.is_dir() and any(p.glob("*.ipynb")))
        if not names:
            return known
        unknown = [n for n in names if n not in known]
        if unknown:
            raise CourseError(f"unknown assignment(s) {unknown}; the course has {known}")
        return names

    def notebook_names(self, assignment: str) -> list[str]:
        """File names of the assignment's notebooks (``attention.ipynb``, ...)."""
        return sorted(p.name for p in (self.solutions / assignment).glob("*.ipynb"))
