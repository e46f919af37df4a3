"""The tests of the exercises, tested: typical mistakes lose points, other correct solutions
keep full marks.

Every notebook of ``tests/grading_cases/`` (the mistakes and the alternatives of each
assignment), with the solution and the untouched exercise, is graded by ``autograder/dry.py``:
the verdict code of real grading, run without Jupyter so that a hundred notebooks take a
minute. ``tests/test_nbgrader.py`` grades a sample of them through nbgrader and checks that
both give the same scores.
"""

from __future__ import annotations

import os
from pathlib import Path

import grading_cases
import pytest
from grading_cases import ALTERNATIVES, MISTAKES

REPO = Path(__file__).resolve().parents[1]
ASSIGNMENTS = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())
if os.environ.get("AFZ_TEST_ASSIGNMENTS"):
    ASSIGNMENTS = [a for a in ASSIGNMENTS if a in os.environ["AFZ_TEST_ASSIGNMENTS"].split(",")]
MIN_MISTAKES = 13


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_table_is_big_enough(assignment):
    names = [c[0] for c in MISTAKES.get(assignment, [])]
    assert len(names) >= MIN_MISTAKES, f"{assignment}: {len(names)} typical mistakes"
    assert len(set(names)) == len(names), f"{assignment}: two mistakes share a name"
    assert ALTERNATIVES.get(assignment), f"{assignment}: no correct alternative solution"


@pytest.mark.slow  # grades about 180 notebooks (06 trains a model in each)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_mistakes_lose_points_and_alternatives_keep_them(assignment):
    _, want = grading_cases.notebooks(assignment)
    results = grading_cases.dry_graded(assignment)
    wrong = []
    for name, expectation in want.items():
        r = results[name]
        ok = {
            "full": r.score == r.max_score > 0,
            "zero": r.score == 0,
            "less": r.score < r.max_score,
        }[expectation]
        if not ok:
            why = "; ".join(f"{g}: {m[:200]}" for g, m in r.failed().items())
            wrong.append(f"{name}: {r.score:g}/{r.max_score:g} (want {expectation}) {why}")
    assert wrong == [], f"{assignment}:\n" + "\n".join(wrong)


def test_the_instructor_guide_reports_the_table_as_it_is():
    """The guide's measured figure names every mistake and alternative of the table (the two
    tests above make sure that each is caught, or keeps full marks)."""
    guide = (REPO / "instructor_guide.md").read_text(encoding="utf-8")
    for a in sorted(MISTAKES):
        m, n = len(MISTAKES[a]), len(ALTERNATIVES.get(a, []))
        row = f"| {a} | {m} of {m} | {n} of {n} |"
        assert row in guide, (
            f"instructor_guide.md should have the row {row!r}: rerun tools/grading_table.py"
        )
