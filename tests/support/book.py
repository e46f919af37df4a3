"""What the course publishes anyway, against which a secret line is judged; shared by
tests/book/test_book_build.py and tests/book/test_browser.py."""

from __future__ import annotations

from course.leaks import notebook_text
from support import REPO

SOLUTIONS = REPO / "solutions"
EXERCISES = REPO / "exercises"


def released_source() -> str:
    """The code of every released exercise: a line that one exercise shows is public, even
    where another notebook has the same line in a hidden test."""
    notebooks = sorted(EXERCISES.rglob("*.ipynb")) if EXERCISES.is_dir() else []
    return "\n".join(notebook_text(nb) for nb in notebooks)
