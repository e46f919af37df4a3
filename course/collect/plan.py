"""What a collect decides before it writes anything: a row of the report per file of the
download (``CollectRow``, with ``COLLECT_COLUMNS``), and the ``Plan`` of what to write: files
to keep under rejected/ (``Keep``), each learner's notebooks to store in submitted/
(``Store``), new student ids and notes. ``Rejected`` is what ``collect`` returns of each file
it did not accept.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from course.entries import Entry


@dataclass
class Rejected:
    """A file that was not accepted, and why; ``kept_as`` is where it is now."""

    student: str
    assignment: str
    file: str
    reason: str
    kept_as: str


@dataclass
class CollectRow:
    """One row of reports/collect.csv: a file found in the source and what became of it."""

    source_path: str
    name: str  # the student's folder name, as the platform exported it
    student_id: str
    assignment: str
    file: str
    outcome: str  # accepted, unchanged, rejected, superseded (an earlier attempt) or skipped
    reason: str = ""
    kept_as: str = ""


COLLECT_COLUMNS = [
    "source_path",
    "name",
    "student_id",
    "assignment",
    "file",
    "outcome",
    "reason",
    "kept_as",
]


Rows = list[tuple[Entry, CollectRow]]


@dataclass
class Keep:
    """A file to keep under rejected/ (``keep``) once the collect writes."""

    row: CollectRow
    student: str
    assignment: str
    name: str
    data: bytes
    numbered: bool


@dataclass
class Store:
    """One learner's checked notebooks of one assignment, to store in submitted/."""

    student: str
    assignment: str
    good: list[tuple[CollectRow, bytes]]
    stamp: str | None = None  # timestamp.txt, or LATE until the due date gives it a time


@dataclass
class Plan:
    """What a collect will write, decided before it writes anything."""

    layout: str
    rows: Rows
    keeps: list[Keep] = field(default_factory=list)
    stores: list[Store] = field(default_factory=list)
    new_students: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # printed once the collect has written


LATE = "late"  # a late flag without a time, until the due date gives it one
