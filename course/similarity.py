"""``similarity``: which learners' own code is alike, for a person to look at.

Only what the learner wrote is compared: the source of the solution cells of each
submission (``submitted/<student>/<assignment>/``), the cells nbgrader marks as the learner's
answer. What the course released in those cells (the function's signature, its docstring,
``# YOUR CODE HERE``) is boilerplate, removed before comparing; the given code and the tests
of the other cells are never compared.

The comparison is copydetect's (PyPI ``copydetect``, the winnowing of Schleimer, Wilkerson and
Aiken, "Winnowing: local algorithms for document fingerprinting", SIGMOD 2003, as in MOSS):
each learner's code is tokenised by Pygments with every name written as one letter (so
renaming variables changes nothing) and comments and spacing dropped (so rewording comments
changes nothing); fingerprints are hashes of its 25-character stretches. A pair's similarity is
the share of one learner's fingerprinted code that is also in the other's (the larger of the
two shares): moving a function elsewhere keeps its fingerprints.

The result is a signal for a person, never a grade: short exercises leave few ways to write
an answer, so honest learners may share a lot. ``similarity/<assignment>/report.html`` ranks the
pairs and shows their shared passages side by side; ``pairs.csv`` lists every pair.
"""

from __future__ import annotations

import csv
import html
import io
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course.config import Course, CourseError
from course.students import spreadsheet_safe

NOISE = 25  # characters of normalised code below which a match is ignored (copydetect's)
SHOWN = 30  # pairs the report shows side by side
LISTED = 500  # pairs the report's table lists (pairs.csv has all)
CSP = "default-src 'none'; style-src 'unsafe-inline'"


@dataclass
class Pair:
    """Two learners and how much of each one's code is in the other's."""

    a: str
    b: str
    share_a: float  # of a's fingerprinted code, the part also in b's
    share_b: float
    shared: int  # characters of normalised code in common
    slices_a: Any = None  # copydetect's 2xN array of shared passages in a's code
    slices_b: Any = None

    @property
    def score(self) -> float:
        return max(self.share_a, self.share_b)


def solution_code(notebook: dict) -> str:
    """The source of the notebook's solution cells, in order, one after the other."""
    parts = []
    for cell in notebook.get("cells", []):
        meta = (cell.get("metadata") or {}).get("nbgrader") or {}
        if cell.get("cell_type") == "code" and meta.get("solution"):
            source = cell.get("source", "")
            parts.append("".join(source) if isinstance(source, list) else str(source))
    return "\n\n".join(parts) + "\n"


def _read(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _learner_code(path: Path, course: Course) -> str | None:
    """The solution cells' code of a learner's notebook, read in a child under collect's limits
    (``entries.run_limited``), or None if it cannot be read within them."""
    from course.entries import run_limited

    def read_code() -> str | None:
        from autograder.restore import text_only

        data = _read(path)  # a lone surrogate (no file can hold one) is shown as U+FFFD
        return None if data is None else text_only(solution_code(data))[0]

    settings = course.settings
    code, failure = run_limited(read_code, settings.collect_memory_mb, settings.collect_timeout)
    return None if failure or not isinstance(code, str) else code


def _fingerprint(code: str, name: str, boilerplate: Any = None) -> Any:
    from copydetect import CodeFingerprint

    return CodeFingerprint(
        f"{name}.py", NOISE, 1, boilerplate=boilerplate, fp=io.StringIO(code), language="python"
    )


def compare(codes: dict[str, str], released: str) -> list[Pair]:
    """Every pair of ``codes`` (learner -> code), most alike first; ``released``, the code
    the course gave in the same cells, is left out of every fingerprint."""
    import numpy as np
    from copydetect import compare_files

    boilerplate = np.array(sorted(_fingerprint(released, "released").hashes))
    prints = {s: _fingerprint(code, s, boilerplate) for s, code in sorted(codes.items())}
    names = sorted(prints)
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            shared, (sa, sb), (la, lb) = compare_files(prints[a], prints[b])
            pairs.append(Pair(a, b, float(sa), float(sb), int(shared), la, lb))
    pairs.sort(key=lambda p: (-p.score, -p.shared, p.a, p.b))
    return pairs


def similarity(course: Course, assignment: str, out: Path | None = None) -> list[Pair]:
    """Compare the learners' solution cells of ``assignment``; write report.html and
    pairs.csv into ``out`` (default similarity/<assignment>/); the pairs, most alike first."""
    course.assignments([assignment])
    started = time.perf_counter()
    notebooks = course.notebook_names(assignment)
    released = ""
    for nb in notebooks:
        data = _read(course.exercises / assignment / nb) or _read(
            course.solutions / assignment / nb
        )
        if data is None:
            raise CourseError(f"cannot read the released {assignment}/{nb}: run release first")
        released += solution_code(data)
    codes: dict[str, str] = {}
    unread = []
    for folder in sorted(course.submitted.glob(f"*/{assignment}")):
        student = folder.parent.name
        text = ""
        for nb in notebooks:
            code = _learner_code(folder / nb, course)
            if code is None:
                unread.append(f"{student}/{nb}")
                continue
            text += code
        if text.strip():
            codes[student] = text
    if len(codes) < 2:
        raise CourseError(
            f"{len(codes)} submission(s) of {assignment} in {course.submitted}: nothing to "
            "compare (collect first)"
        )
    pairs = compare(codes, released)
    out = out or course.root / "similarity" / assignment
    out.mkdir(parents=True, exist_ok=True)
    with (out / "pairs.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "rank",
                "student_a",
                "student_b",
                "similarity",
                "share_a",
                "share_b",
                "shared_characters",
            ]
        )
        for rank, p in enumerate(pairs, start=1):
            w.writerow(
                [
                    rank,
                    spreadsheet_safe(p.a),
                    spreadsheet_safe(p.b),
                    f"{p.score:.3f}",
                    f"{p.share_a:.3f}",
                    f"{p.share_b:.3f}",
                    p.shared,
                ]
            )
    seconds = time.perf_counter() - started
    (out / "report.html").write_text(report(assignment, codes, pairs, seconds), encoding="utf-8")
    for u in unread:
        print(f"SKIPPED {u}: not a readable notebook")
    print(
        f"compared {len(codes)} submissions of {assignment} ({len(pairs)} pairs) in "
        f"{seconds:.1f} s; most alike first in {out / 'report.html'} and {out / 'pairs.csv'}. "
        "A signal for a person to read, never a grade."
    )
    for p in pairs[:5]:
        print(f"  {p.score:6.1%}  {p.a}  {p.b}")
    return pairs


def _marked(code: str, slices: Any) -> str:
    """``code`` as HTML, its shared passages in <mark>."""
    from copydetect.utils import highlight_overlap

    if slices is None or getattr(slices, "size", 0) == 0 or slices.shape[-1] == 0:
        return html.escape(code)
    marked, _ = highlight_overlap(code, slices, "<mark>", "</mark>", escape_html=True)
    return marked


STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 80em; color: #222; }
table { border-collapse: collapse; } td, th { padding: .2em .7em; border-bottom: 1px solid #ddd; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.side { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
pre { background: #f7f7f7; padding: .7em; overflow-x: auto; font-size: 13px; }
mark { background: #ffd54f; }
.note { background: #eef4ff; padding: .7em 1em; border-left: 4px solid #4a7bd0; }
"""


def report(assignment: str, codes: dict[str, str], pairs: list[Pair], seconds: float) -> str:
    """The HTML report: what it is, the ranked pairs, the top pairs side by side. No script,
    nothing loaded from elsewhere (its content security policy says so)."""
    e = html.escape
    rows = "".join(
        f'<tr><td class="n">{i}</td><td><a href="#pair-{i}">{e(p.a)}</a></td>'
        f'<td>{e(p.b)}</td><td class="n">{p.score:.0%}</td><td class="n">'
        f'{p.share_a:.0%}</td><td class="n">{p.share_b:.0%}</td></tr>'
        if i <= SHOWN
        else f'<tr><td class="n">{i}</td><td>{e(p.a)}</td><td>{e(p.b)}</td>'
        f'<td class="n">{p.score:.0%}</td><td class="n">{p.share_a:.0%}</td>'
        f'<td class="n">{p.share_b:.0%}</td></tr>'
        for i, p in enumerate(pairs[:LISTED], start=1)
    )
    sides = "".join(
        f'<section id="pair-{i}"><h3>{i}. {e(p.a)} and {e(p.b)}: {p.score:.0%}</h3>'
        f'<div class="side"><div><h4>{e(p.a)} ({p.share_a:.0%} shared)</h4><pre>'
        f"{_marked(codes[p.a], p.slices_a)}</pre></div><div><h4>{e(p.b)} "
        f"({p.share_b:.0%} shared)</h4><pre>{_marked(codes[p.b], p.slices_b)}</pre></div>"
        "</div></section>"
        for i, p in enumerate(pairs[:SHOWN], start=1)
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>Similarity: {e(assignment)}</title><style>{STYLE}</style></head><body>"
        f"<h1>Similarity of the solution cells: {e(assignment)}</h1>"
        '<p class="note">A signal for a person, never a grade. A high share means that much of '
        "one learner's own code (the released code left out, names and comments ignored) is "
        "also in the other's. Short exercises leave few ways to write an answer: read the "
        "shared passages, and compare with the class's other pairs, before asking anyone.</p>"
        f"<p>{len(codes)} submissions, {len(pairs)} pairs, compared in {seconds:.1f} s. "
        f"The first {min(SHOWN, len(pairs))} pairs are shown side by side below; pairs.csv "
        "lists every pair.</p>"
        "<table><thead><tr><th>rank</th><th>learner</th><th>learner</th><th>similarity</th>"
        "<th>share of the first</th><th>share of the second</th></tr></thead>"
        f"<tbody>{rows}</tbody></table><h2>Shared passages</h2>{sides}</body></html>\n"
    )
