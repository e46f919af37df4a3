"""The tests of the exercises, tested: typical mistakes lose points, other correct solutions
keep full marks.

Every notebook of ``tests/grading_cases/`` (the mistakes and the alternatives of each
assignment), with the solution and the untouched exercise, is graded by ``autograder/dry.py``:
the verdict code of real grading, run without Jupyter so that a hundred notebooks take a
minute. ``tests/grading/test_nbgrader.py`` grades a sample of them through nbgrader and checks
that both give the same scores. (The table's size: ``tests/unit/test_grading_cases_table.py``.)
"""

from __future__ import annotations

import grading_cases
import pytest
from support.table import ASSIGNMENTS


# slow: grades about 180 notebooks (06 trains a model in each)
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


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_graded_test_checks_values_not_only_dtypes_and_shapes(assignment):
    """A test cell's points come with a check of the numbers (or of what is raised): a dtype
    or a shape alone gives points to zeros of the right dtype and shape."""
    from autograder import replay
    from checks.record import decode

    def checks_values(ref: dict) -> bool:
        if ref["kind"] in ("close", "agree", "raises"):
            return True
        return ref["kind"] == "equal" and not isinstance(decode(ref["expected"]), str)

    refs = replay.expected_checks(grading_cases.source(assignment))
    only_form = [g for g, rs in refs.items() if not any(checks_values(r) for r in rs)]
    assert only_form == [], f"{assignment}: test cells that check only dtypes or shapes"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_contract_sweep_catches_what_the_tests_miss(assignment):
    """Each mistake of ``SWEPT`` keeps full marks when graded without the contract sweep (the
    test above shows that it loses points with it): the clause catches what the exercise's
    tests alone miss."""
    from autograder import dry

    nbs, _ = grading_cases.notebooks(assignment)
    swept = {
        f"mistake: {case[0]}": nbs[f"mistake: {case[0]}"]
        for case in grading_cases.SWEPT[assignment]
    }
    assert swept, f"{assignment}: no mistake for the contract sweep"
    graded = dry.grade(grading_cases.source(assignment), swept, sweep=False)
    missed = {n: r.failed() for n, r in graded.items() if r.score < r.max_score}
    assert missed == {}, f"{assignment}: already caught without the sweep"
