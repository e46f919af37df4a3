"""The course's names and folders: one place for what nbgrader and the tool must agree on.

A course root is an nbgrader course directory: the repository itself, or any folder laid out
the same way (``solutions/`` and ``exercises/`` beside the working folders). Every path the
tool uses is resolved from the root it was given, never from where this file lives.

Environment:
    AFZ_GRADEBOOK_URL   the gradebook's database URL (default: sqlite:///<root>/gradebook.db);
                        e.g. postgresql://grader@dbhost/afz
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

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


def gradebook_url(root: Path) -> str:
    """``AFZ_GRADEBOOK_URL``, or the SQLite file ``gradebook.db`` in ``root``."""
    default = f"sqlite:///{root.resolve() / GRADEBOOK_FILE}"
    return os.environ.get("AFZ_GRADEBOOK_URL") or default


def sqlite_path(url: str) -> Path | None:
    """The file of an SQLite URL (``sqlite:///<path>``), None for any other database."""
    return Path(url[len("sqlite:///") :]) if url.startswith("sqlite:///") else None


@dataclass(frozen=True)
class Course:
    """The folders of one course root (an absolute path)."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).resolve())

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
        return gradebook_url(self.root)

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
