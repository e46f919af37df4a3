"""The table of typical mistakes and correct alternatives (``tests/grading_cases/``) is big
enough, and the instructor guide reports it as it is. (Every notebook of it graded:
``tests/grading/test_grading_cases.py``.)"""

from __future__ import annotations

import pytest
from grading_cases import ALTERNATIVES, MISTAKES
from support import REPO
from support.table import ASSIGNMENTS

MIN_MISTAKES = 13


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_table_is_big_enough(assignment):
    names = [c[0] for c in MISTAKES.get(assignment, [])]
    assert len(names) >= MIN_MISTAKES, f"{assignment}: {len(names)} typical mistakes"
    assert len(set(names)) == len(names), f"{assignment}: two mistakes share a name"
    assert ALTERNATIVES.get(assignment), f"{assignment}: no correct alternative solution"


def test_the_instructor_guide_reports_the_table_as_it_is():
    """The guide's measured figure names every mistake and alternative of the table (the test
    above and tests/grading/test_grading_cases.py make sure that each is caught, or keeps full
    marks)."""
    guide = (REPO / "instructor_guide.md").read_text(encoding="utf-8")
    for a in sorted(MISTAKES):
        m, n = len(MISTAKES[a]), len(ALTERNATIVES.get(a, []))
        row = f"| {a} | {m} of {m} | {n} of {n} |"
        assert row in guide, (
            f"instructor_guide.md should have the row {row!r}: rerun tools/grading_table.py"
        )
