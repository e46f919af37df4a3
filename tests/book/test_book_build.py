"""The book as published: no solution leaks into _build/html, and no test marker shows.

The leak test reads the HTML site that `make book` writes to _build/html (`make test` builds
it first). It takes the secret lines of the nbgrader source notebooks under solutions/ (code
of the solution and hidden-test regions, as the course's one leak scanner, `course.leaks`,
defines them: the scanner that `verify-release` runs on exercises/), and asserts that none of
them appears anywhere in the built site: in the HTML pages (as text, after removing
syntax-highlighting tags), in the page sources under _sources/, or in the downloadable
notebooks. (The scanner itself, and the chapters stored executed:
tests/unit/test_book_sources.py.)

nbval's markers (`NBVAL_IGNORE_OUTPUT`, the course's tolerance) are for the tests, not for the
reader: they live in the cells' metadata and tags, and no page of either edition may show one
(tools/nbval_tolerance.py refuses one written in a cell's code).
"""

from __future__ import annotations

import html
import re
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


# ----------------------------------------------------------------------------------------------
# test markers are not for the reader

# nbval's comment markers and the course's tolerance, however they are spelled
MARKER = re.compile(r"NBVAL_[A-Z_]+|PYTEST_VALIDATE_[A-Z_]+|nbval-tolerance", re.IGNORECASE)


def visible_text(page: str) -> str:
    """What a reader sees of an HTML page: the text without tags, scripts and styles (a tag's
    class, such as myst-nb's `tag_nbval-ignore-output`, is not shown)."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def markers_shown(root: Path) -> dict[str, list[str]]:
    """Page -> the test markers its visible text shows, for every HTML page under root."""
    found = {}
    for page in sorted(root.rglob("*.html")):
        markers = MARKER.findall(visible_text(page.read_text(encoding="utf-8")))
        if markers:
            found[page.relative_to(root).as_posix()] = sorted(set(markers))
    return found


def test_the_marker_scan_sees_a_marker_in_highlighted_code(tmp_path):
    page = (
        '<div class="cell tag_nbval-ignore-output"><pre><span class="c1"># NBVAL_IGNORE_OUTPUT'
        '</span>\n<span class="nb">print</span>(t)</pre></div>'
    )
    (tmp_path / "a.html").write_text(page, encoding="utf-8")
    (tmp_path / "b.html").write_text(
        '<div class="cell tag_nbval-ignore-output"><pre>print(t)</pre></div>', encoding="utf-8"
    )
    assert markers_shown(tmp_path) == {"a.html": ["NBVAL_IGNORE_OUTPUT"]}


# slow: reads the built book (make book)
def test_no_page_of_either_edition_shows_a_test_marker():
    assert (HTML_ROOT / "zh" / "intro.html").is_file(), "build the book first (make book)"
    shown = markers_shown(HTML_ROOT)
    assert not shown, f"test markers shown to readers: {shown}"
