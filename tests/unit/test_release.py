"""The assignments as released: the leak check that compares exercises/ with solutions/ is not
vacuous, every solution or hidden-test region has a line it searches for, and every assignment
has 20 to 30 points. (exercises/ is a fresh generation: tests/grading/test_nbgrader.py.)"""

from __future__ import annotations

import pytest
from support.submissions import ASSIGNMENTS, exercise, read, source

from course import leaks

pytestmark = pytest.mark.usefixtures("grading_env")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_leak_check_finds_solution_lines(assignment):
    """The leak check is not vacuous: the source notebook itself leaks its solutions."""
    assert leaks.leaked_lines(source(assignment), source(assignment))
    assert leaks.leaked_lines(source(assignment), exercise(assignment)) == []


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_region_has_a_secret_line(assignment):
    """The leak scanner skips short lines (leaks.MIN_LINE_LENGTH); a solution or hidden-test
    region that leaked whole must still be found, so each has a line it searches for."""
    secret = leaks.secret_lines(source(assignment))
    regions = leaks.regions(source(assignment))
    assert regions
    for region in regions:
        assert secret & set(region), f"{assignment}: no secret line in {region[:3]}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_assignment_has_points_and_20_to_30_of_them(assignment):
    nb = read(source(assignment))
    points = sum(
        c["metadata"].get("nbgrader", {}).get("points", 0)
        for c in nb["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade")
    )
    assert 20 <= points <= 30, f"{assignment}: {points} points, expected 20-30"
