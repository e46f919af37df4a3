"""Print the instructor guide's table of what the tests catch, measured now.

    .venv/bin/python tools/grading_table.py [ASSIGNMENT ...]

Grades every notebook of ``tests/grading_cases/`` (the typical mistakes and the correct
alternatives of each assignment) with ``autograder/dry.py`` and prints one Markdown row per
assignment: mistakes that lose points, alternatives that keep full marks, the mean score of
a mistake, and the grading time.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import grading_cases  # noqa: E402

from autograder import dry  # noqa: E402


def main(argv: list[str]) -> int:
    names = argv or sorted(grading_cases.MISTAKES)
    print("| assignment | typical mistakes that lose points | correct alternatives at full "
          "marks | a mistake's mean score | grading time |")  # fmt: skip
    print("|---|---|---|---|---|")
    for a in names:
        nbs, want = grading_cases.notebooks(a)
        start = time.perf_counter()
        graded = dry.grade(grading_cases.source(a), nbs)
        seconds = time.perf_counter() - start
        mistakes = [n for n, w in want.items() if w == "less"]
        alternatives = [n for n, w in want.items() if n.startswith("alternative: ")]
        caught = sum(graded[n].score < graded[n].max_score for n in mistakes)
        full = sum(graded[n].score == graded[n].max_score for n in alternatives)
        top = graded["solution"].max_score
        mean = sum(graded[n].score for n in mistakes) / max(1, len(mistakes))
        print(f"| {a} | {caught} of {len(mistakes)} | {full} of {len(alternatives)} | "
              f"{mean:.1f} of {top:g} | {seconds:.0f} s for {len(nbs)} notebooks |")  # fmt: skip
        for n in mistakes + alternatives:
            ok = (graded[n].score < top) if n in mistakes else graded[n].score == top
            if not ok:
                print(f"    NOT AS EXPECTED: {n}: {graded[n].score:g}/{top:g}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
