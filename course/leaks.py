"""The solution-leak scanner: where the secret lines of a source notebook show.

What a secret line is (inside a solution or hidden-test region and nowhere outside one, not a
comment, long enough to mean something) is defined once, in ``autograder/regions.py``; here
they count from ``LEAK_LENGTH`` (25) characters, since shorter lines (``return out``,
``d_k = q.size(-1)``) are too common in the chapters to mean a leak.

``verify-release`` asks whether a released exercise has a secret line (``leaked_lines``);
``tests/test_book_build.py`` whether the built site shows one anywhere (``find_leaks``).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from autograder import regions as marked
from autograder.regions import normalize

# Files of a built site searched as text (images and fonts are not).
TEXT_SUFFIXES = frozenset({".html", ".txt", ".md", ".ipynb", ".py", ".js", ".json", ".xml"})
_TAG = re.compile(r"<[^>]+>")


def cell_sources(notebook: Path) -> list[str]:
    """The source of every cell of ``notebook``, code and Markdown."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [marked.source_of(c) for c in cells]


def notebook_text(notebook: Path) -> str:
    """All the cell sources of ``notebook`` as one text (empty if it does not exist)."""
    return "\n".join(cell_sources(notebook)) if notebook.exists() else ""


def regions(source: Path) -> list[list[str]]:
    """The normalized, non-blank lines of each solution or hidden-test region of ``source``."""
    return marked.regions(json.loads(source.read_text(encoding="utf-8")))


def secret_lines(source: Path, public: str = "") -> set[str]:
    """The secret lines of the source notebook ``source`` (from ``LEAK_LENGTH`` characters),
    less those that occur anywhere in the text ``public`` (e.g. the student version, where a
    hint may quote a line inside a sentence, or the published reference code)."""
    secret = marked.secret_lines(json.loads(source.read_text(encoding="utf-8")))
    public = normalize(public)
    return {s for s in secret if s not in public}


def leaked_lines(source: Path, student: Path) -> list[str]:
    """The secret lines of ``source`` that are lines of the notebook ``student``, sorted."""
    secret = secret_lines(source)
    lines = {normalize(raw) for text in cell_sources(student) for raw in text.splitlines()}
    return sorted(lines & secret)


def site_text(path: Path) -> str:
    """What a reader can see in one file of a built site, whitespace-normalized: an HTML
    page's text without its tags (syntax highlighting splits a line into many tags), a
    notebook's sources and outputs, any other file as it is."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".html":
        text = html.unescape(_TAG.sub("", text))
    elif path.suffix == ".ipynb":
        notebook = json.loads(text)
        parts = []
        for cell in notebook.get("cells", []):
            parts.append("".join(cell.get("source", "")))
            for output in cell.get("outputs", []):
                parts.append("".join(output.get("text", "")))
                for value in output.get("data", {}).values():
                    parts.append("".join(value) if isinstance(value, list) else str(value))
        text = "\n".join(parts)
    return normalize(text)


def find_leaks(lines: set[str], site: Path) -> dict[str, list[str]]:
    """{secret line: [files of ``site`` (relative) that contain it]} for the ``lines`` that
    some text file under the folder ``site`` shows."""
    leaks: dict[str, list[str]] = {}
    if not lines:
        return leaks
    for path in sorted(site.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        text = site_text(path)
        for line in lines:
            if line in text:
                leaks.setdefault(line, []).append(str(path.relative_to(site)))
    return leaks
