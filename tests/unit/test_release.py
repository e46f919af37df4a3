"""The assignments as released: the leak check that compares exercises/ with solutions/ is not
vacuous, every solution or hidden-test region has a line it searches for, and every assignment
has 20 to 30 points. (exercises/ is a fresh generation: tests/grading/test_nbgrader.py.)"""

from __future__ import annotations

import pytest
from support.submissions import ASSIGNMENTS, exercise, read, source

from checks.released import PREFIX
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


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_released_values_never_reach_a_grading_kernel(assignment):
    """The released test cells carry the solution's values of their visible checks; grading
    puts back each test cell of the source (nbgrader's gradebook keeps the source version) and
    runs its kernel form, built from the source: neither holds a packed value or names one."""
    from autograder.kernel_form import kernel_forms
    from course.release import released_values

    released = released_values(exercise(assignment).read_text(encoding="utf-8"))
    assert released, f"{assignment}: no released test cell carries values"
    source_text = source(assignment).read_text(encoding="utf-8")
    forms = kernel_forms(read(source(assignment)))
    for grade_id, packed in released.items():
        assert packed not in source_text and PREFIX not in source_text
        assert "expected=" not in forms[grade_id].split("Test(", 1)[1].split(")", 1)[0]
        assert PREFIX not in forms[grade_id]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_released_test_cells_carry_their_own_values_and_checksums(assignment):
    """Each packed text names its own notebook and test cell, and every released cell's nbgrader
    checksum is that of its source as released (``nbgrader validate`` compares them)."""
    from nbformat import reads
    from nbgrader.utils import compute_checksum

    from checks import released as packing
    from course.release import released_values

    text = exercise(assignment).read_text(encoding="utf-8")
    for grade_id, packed in released_values(text).items():
        payload = packing.unpack(packed)
        assert (payload["test"], payload["notebook"]) == (
            grade_id,
            f"{assignment}/{exercise(assignment).name}",
        )
    for cell in reads(text, as_version=4).cells:
        stored = cell.metadata.get("nbgrader", {}).get("checksum")
        if stored:
            assert compute_checksum(cell) == stored, cell.metadata["nbgrader"]["grade_id"]
