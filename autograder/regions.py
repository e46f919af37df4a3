"""A course notebook's marked parts, one definition for everyone who reads them.

- **Cells.** nbgrader's metadata says what a cell is (:func:`cell_kind`): a *solution* cell
  (the learner writes in it), a *test* cell (graded, with points), a *locked* cell (read-only
  code the course gives), or a plain cell.
- **Regions.** Inside a cell, ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` holds the
  instructor's answer and ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS`` the checks a
  learner never sees; a marker counts on a line of its own (leading whitespace allowed, text
  after it too, as nbgrader reads them).
- **Secret lines.** A line is secret when the source notebook has it inside a region and
  nowhere outside one, it is not a comment or a generic line (:data:`NOT_SECRET`), it has at
  least five letters or digits, and it is at least ``at_least`` characters long once its
  whitespace is collapsed. How long depends on where one looks for it: in the book and a
  released exercise (``course/leaks.py``), where the chapters teach the same code, a line
  counts from :data:`LEAK_LENGTH` characters (every region of the course has such a line,
  ``tests/test_nbgrader.py`` checks it); in a learner's feedback
  (``preprocessors.safe_feedback.SafeFeedback``), where nothing of the course's code should show
  but the released part, from :data:`REDACT_LENGTH`.
"""

from __future__ import annotations

import re
from typing import Any

SOLUTION = ("### BEGIN SOLUTION", "### END SOLUTION")
HIDDEN = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
REGIONS = (SOLUTION, HIDDEN)
LEAK_LENGTH = 25
REDACT_LENGTH = 5
NOT_SECRET = frozenset({"start = time.perf_counter()", "return out", "else:", "pass", "try:"})
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]")


def normalize(text: str) -> str:
    """``text`` with every run of whitespace made one space, stripped."""
    return _SPACE.sub(" ", text).strip()


def source_of(cell: dict[str, Any]) -> str:
    """A cell's source as one string (nbformat allows a list of lines)."""
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else str(text)


def nbgrader_meta(cell: dict[str, Any]) -> dict[str, Any]:
    meta = cell.get("metadata", {})
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return meta if isinstance(meta, dict) else {}


def cell_kind(cell: dict[str, Any]) -> str:
    """``"solution"``, ``"test"``, ``"locked"`` or ``""`` (a plain cell)."""
    meta = nbgrader_meta(cell)
    if meta.get("solution"):
        return "solution"
    if meta.get("grade"):
        return "test"
    if meta.get("locked"):
        return "locked"
    return ""


def is_test_cell(cell: dict[str, Any]) -> bool:
    return cell.get("cell_type", "code") == "code" and cell_kind(cell) == "test"


def test_cells(notebook: dict[str, Any]) -> dict[str, tuple[str, float]]:
    """``{grade_id: (source, points)}`` of the notebook's test cells."""
    return {
        str(nbgrader_meta(cell).get("grade_id")): (
            source_of(cell),
            float(nbgrader_meta(cell).get("points", 0)),
        )
        for cell in notebook.get("cells", [])
        if is_test_cell(cell)
    }


def _marker(line: str, markers: tuple[str, ...]) -> bool:
    return line.lstrip().startswith(markers)


def split(text: str) -> tuple[list[list[str]], list[str]]:
    """(the normalized, non-blank lines of each region, those outside every region)."""
    inside: list[list[str]] = []
    outside: list[str] = []
    end: str | None = None
    for raw in text.splitlines():
        line = normalize(raw)
        if end is None:
            end = next((e for begin, e in REGIONS if line.startswith(begin)), None)
            if end is not None:
                inside.append([])
            elif line:
                outside.append(line)
        elif line.startswith(end):
            end = None
        elif line:
            inside[-1].append(line)
    return inside, outside


def without_hidden(text: str, note: str | None = None) -> str:
    """``text`` without its hidden-test regions, markers included; ``note`` (a line) stands
    in the place of each, if given."""
    lines, hidden = [], False
    for line in text.splitlines(keepends=True):
        if not hidden and _marker(line, (HIDDEN[0],)):
            hidden = True
            if note is not None:
                lines.append(note + "\n")
        elif hidden:
            hidden = not _marker(line, (HIDDEN[1],))
        else:
            lines.append(line)
    return "".join(lines)


def regions(notebook: dict[str, Any]) -> list[list[str]]:
    """The normalized, non-blank lines of each region of every cell of ``notebook``."""
    return [r for cell in notebook.get("cells", []) for r in split(source_of(cell))[0]]


def secret_lines(notebook: dict[str, Any], *, at_least: int = LEAK_LENGTH) -> set[str]:
    """The secret lines of the source ``notebook`` (normalized; see the module doc)."""
    inside: set[str] = set()
    outside: set[str] = set()
    for cell in notebook.get("cells", []):
        cell_inside, cell_outside = split(source_of(cell))
        inside.update(line for region in cell_inside for line in region)
        outside.update(cell_outside)
    return {
        line
        for line in inside - outside - NOT_SECRET
        if len(line) >= at_least and not line.startswith("#") and len(_WORD.findall(line)) > 4
    }
