"""The book as published: no solution leaks into _build/html.

The leak test reads the HTML site that `make book` writes to _build/html (`make test` builds
it first). It takes the secret lines of the nbgrader source notebooks under solutions/ (code
of the solution and hidden-test regions, as the course's one leak scanner, `course.leaks`,
defines them: the scanner that `check-release` runs on exercises/), and asserts that none of
them appears anywhere in the built site: in the HTML pages (as text, after removing
syntax-highlighting tags), in the page sources under _sources/, or in the downloadable
notebooks. (The scanner itself, and the chapters stored executed:
tests/unit/test_book_sources.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.book import EXERCISES, SOLUTIONS, released_source

from course.leaks import find_leaks, notebook_text, secret_lines

ROOT = Path(__file__).resolve().parents[2]
HTML_ROOT = ROOT / "_build" / "html"
HELPERS = ROOT / "helpers"


# ----------------------------------------------------------------------------------------------
# what the course publishes anyway (and released_source, in support/book.py)


def helpers_source() -> str:
    """The source of the helpers package, which the course publishes as its reference."""
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(HELPERS.rglob("*.py")))


def _solution_notebooks() -> list[Path]:
    if not SOLUTIONS.is_dir():
        return []
    return sorted(p for p in SOLUTIONS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


# ----------------------------------------------------------------------------------------------
# the real site


# slow: reads the built book (make book)
def test_built_site_contains_no_solution_text():
    notebooks = _solution_notebooks()
    if not notebooks:
        pytest.skip("no nbgrader source notebooks under solutions/ yet: nothing to leak")
    assert HTML_ROOT.is_dir(), f"{HTML_ROOT} does not exist: build the book first (make book)"
    problems = []
    public = helpers_source() + "\n" + released_source()
    for notebook in notebooks:
        student = EXERCISES / notebook.relative_to(SOLUTIONS)
        lines = secret_lines(notebook, notebook_text(student) + "\n" + public)
        for line, files in find_leaks(lines, HTML_ROOT).items():
            problems.append(f"{notebook.relative_to(ROOT)}: {line!r} appears in {files}")
    assert not problems, "solution text published in _build/html:\n" + "\n".join(problems)
