"""Measure the instructor guide's table of what the tests catch, and write it with its Chinese.

    .venv/bin/python tools/grading_table.py [ASSIGNMENT ...]          # measure, print the rows
    flock /tmp/afz-i18n.lock .venv/bin/python tools/grading_table.py [ASSIGNMENT ...] --write

Grades every notebook of ``tests/grading_cases/`` (the typical mistakes and the correct
alternatives of each assignment; all assignments when none is named) with
``autograder/dry.py`` and prints one Markdown row per assignment: mistakes that lose points,
alternatives that keep full marks, the mean score of a mistake, and the grading time. A notebook
graded otherwise than the table says (a mistake at full marks, an alternative or the solution
below them, the untouched exercise above zero) is named on stderr, and the exit status is 1.

``--write`` puts the measured rows into ``instructor_guide.md``'s table (the rows of the other
assignments are kept as they were measured), writes the totals sentence under the table from
its rows, and sets the Chinese catalog's messages of every cell and of that sentence
(``locale/zh_CN/LC_MESSAGES/instructor_guide.po``, as ``tools/settings_table.py`` does).
``tests/unit/test_grading_cases_table.py`` fails while the guide or its catalog differs from
what this tool writes, without grading anything: each row's counts, points and number of
notebooks follow from the table of cases and the solution notebook; only the mean score and
the time are measured.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(REPO / "tools")]

import grading_cases  # noqa: E402
from guide_catalog import GUIDE, write_messages  # noqa: E402  (tools/ is not a package)

HEADER = (
    "| assignment | typical mistakes that lose points | correct alternatives at full marks "
    "| a mistake's mean score | grading time |\n|---|---|---|---|---|\n"
)
SURPRISES: list[str] = []  # notebooks graded otherwise than the table says (printed)


class Row(NamedTuple):
    """One assignment's row: ``caught`` of ``mistakes`` lose points, ``full`` of
    ``alternatives`` keep full marks, a mistake's ``mean`` score of ``points``, graded in
    ``seconds`` for ``notebooks`` notebooks."""

    assignment: str
    caught: int
    mistakes: int
    full: int
    alternatives: int
    mean: float
    points: float
    seconds: float
    notebooks: int

    def cells(self) -> list[str]:
        return [
            self.assignment,
            f"{self.caught} of {self.mistakes}",
            f"{self.full} of {self.alternatives}",
            f"{self.mean:.1f} of {self.points:g}",
            f"{self.seconds:.0f} s for {self.notebooks} notebooks",
        ]

    def markdown(self) -> str:
        return f"| {' | '.join(self.cells())} |\n"


def measure(assignment: str) -> Row:
    """Grade every notebook of ``assignment``'s table (the slow part: seconds to minutes)."""
    from autograder import dry

    nbs, want = grading_cases.notebooks(assignment)
    start = time.perf_counter()
    graded = dry.grade(grading_cases.source(assignment), nbs)
    seconds = time.perf_counter() - start
    mistakes = [n for n, w in want.items() if w == "less"]
    alternatives = [n for n in want if n.startswith("alternative: ")]
    top = graded["solution"].max_score
    for n, w in want.items():
        score = graded[n].score
        if not {"full": score == top > 0, "zero": score == 0, "less": score < top}[w]:
            print(f"    NOT AS EXPECTED: {n}: {score:g}/{top:g}", file=sys.stderr)
            SURPRISES.append(f"{assignment}: {n}")
    return Row(
        assignment,
        caught=sum(graded[n].score < top for n in mistakes),
        mistakes=len(mistakes),
        full=sum(graded[n].score == top for n in alternatives),
        alternatives=len(alternatives),
        mean=sum(graded[n].score for n in mistakes) / max(1, len(mistakes)),
        points=top,
        seconds=seconds,
        notebooks=len(nbs),
    )


def counted(assignment: str) -> dict[str, object]:
    """What a row says that follows from the table of cases and the solution notebook alone
    (no grading): the numbers of mistakes, alternatives and notebooks, and the points."""
    mistakes = len(grading_cases.MISTAKES.get(assignment, []))
    alternatives = len(grading_cases.ALTERNATIVES.get(assignment, []))
    solution = json.loads(grading_cases.source(assignment).read_text(encoding="utf-8"))
    points = sum(
        c["metadata"]["nbgrader"].get("points", 0)
        for c in solution["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade")
    )
    return {
        "mistakes": mistakes,
        "alternatives": alternatives,
        "points": float(points),
        "notebooks": 2 + mistakes + alternatives,  # the solution and the untouched exercise too
    }


def parsed(line: str) -> Row:
    """A row of the guide's table, read back."""
    name, caught, full, mean, seconds = (c.strip() for c in line.strip().strip("|").split("|"))
    caught_of, _, mistakes = caught.partition(" of ")
    full_of, _, alternatives = full.partition(" of ")
    mean_of, _, points = mean.partition(" of ")
    time_s, _, notebooks = seconds.partition(" s for ")
    return Row(
        name,
        int(caught_of),
        int(mistakes),
        int(full_of),
        int(alternatives),
        float(mean_of),
        float(points),
        float(time_s),
        int(notebooks.removesuffix(" notebooks")),
    )


def _table_span(guide: str) -> tuple[int, int]:
    """Where the table's rows start and where the blank line after them is."""
    start = guide.index(HEADER) + len(HEADER)
    return start, guide.index("\n\n", start)


def rows(guide: str) -> list[Row]:
    """The rows of the guide's table, as they are written."""
    start, end = _table_span(guide)
    return [parsed(line) for line in guide[start:end].splitlines()]


def _added_up(table: list[Row]) -> tuple[int, int, int, int]:
    """(mistakes, caught, caught by the contract sweep alone, alternatives) of every row."""
    mistakes = sum(r.mistakes for r in table)
    caught = sum(r.caught for r in table)
    swept = sum(len(grading_cases.SWEPT.get(r.assignment, [])) for r in table)
    return mistakes, caught, swept, sum(r.alternatives for r in table)


def totals(table: list[Row]) -> str:
    """The sentence under the table: every row's mistakes and alternatives added up, and the
    mistakes only the contract sweep catches (``SWEPT`` in each table of cases)."""
    mistakes, caught, swept, alternatives = _added_up(table)
    how = "every one of them caught" if caught == mistakes else f"{caught} of them caught"
    return (
        f"In all, {mistakes} typical mistakes, {how} ({swept} of them by the contract sweep "
        f"alone), and {alternatives} correct alternatives at full marks."
    )


def totals_zh(table: list[Row]) -> str:
    mistakes, caught, swept, alternatives = _added_up(table)
    how = "每一个都被发现了" if caught == mistakes else f"其中 {caught} 个被发现"
    return (
        f"总计 {mistakes} 个典型错误，{how}（其中 {swept} 个只有契约扫描能发现）；"
        f"另有 {alternatives} 个正确替代写法拿到满分。"
    )


def translations(table: list[Row]) -> dict[str, str]:
    """The Chinese of every cell of the table's rows and of the totals sentence."""
    found: dict[str, str] = {}
    for r in table:
        name, caught, full, mean, seconds = r.cells()
        found |= {
            name: name,
            caught: caught.replace(" of ", " / "),
            full: full.replace(" of ", " / "),
            mean: mean.replace(" of ", " / "),
            seconds: f"{r.notebooks} 个笔记本共 {r.seconds:.0f} s",
        }
    return found | {totals(table): totals_zh(table)}


def replaced(guide: str, measured: list[Row]) -> str:
    """``guide`` with the rows of the ``measured`` assignments replaced (or added, in order),
    and the totals sentence, the paragraph right under the table, written from the rows."""
    start, end = _table_span(guide)
    table = {r.assignment: r for r in rows(guide)} | {r.assignment: r for r in measured}
    ordered = [table[a] for a in sorted(table)]
    after = guide.index("\n\n", end + 2)
    text = "".join(r.markdown() for r in ordered).rstrip("\n")
    return guide[:start] + text + "\n\n" + totals(ordered) + guide[after:]


def main(argv: list[str]) -> int:
    write = "--write" in argv
    names = [a for a in argv if a != "--write"]
    unknown = [a for a in names if a not in grading_cases.MISTAKES]
    if unknown or any(a.startswith("-") for a in names):
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(HEADER)
    measured = []
    for a in names or sorted(grading_cases.MISTAKES):
        measured.append(measure(a))
        sys.stdout.write(measured[-1].markdown())
        sys.stdout.flush()
    if write:
        text = GUIDE.read_text(encoding="utf-8")
        new = replaced(text, measured)
        if new != text:
            GUIDE.write_text(new, encoding="utf-8")
            print(f"{GUIDE.name}: the rows of {', '.join(r.assignment for r in measured)} written")
        if write_messages(translations(rows(new))):
            print("locale/zh_CN/LC_MESSAGES/instructor_guide.po: the table's cells written")
    return 1 if SURPRISES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
