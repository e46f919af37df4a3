"""``release`` and ``verify-release``: exercises/ generated from solutions/ by nbgrader.

``release`` writes each assignment's student version with nbgrader, then puts into each of its
test cells the solution's values of that cell's visible checks (``Test("...",
expected="afz1:...")``, :mod:`checks.released`), so that a learner's notebook judges its
visible checks with nothing beside it, and writes the learner's wheel (:mod:`course.wheel`)
into exercises/. The values go into the released notebook only: nbgrader's gradebook keeps the
source version of every test cell, which grading puts back, so no grading kernel gets them.
``verify-release`` regenerates everything into a temporary folder and compares, and scans the
release for solution lines.
"""

from __future__ import annotations

import filecmp
import re
import tempfile
from pathlib import Path

from course.config import RELEASE, SOURCE, Course, CourseError
from course.gradebook import open_gradebook
from course.grading.nbgrader_command import nbgrader
from course.leaks import leaked_lines
from course.wheel import DISTRIBUTION, wheel_bytes, wheel_name, write_wheel

# A released test cell's Test line, with or without its values: Test("grade_id"[, expected="..."])
_TEST_LINE = r"""Test\(\s*(["']){grade_id}\1\s*(?:,\s*expected\s*=\s*"(?P<values>[^"]*)"\s*)?\)"""


def release(
    names: list[str] | None,
    course: Course,
    release_dir: Path | None = None,
    url: str | None = None,
) -> None:
    """Generate the student versions (exercises/, or ``release_dir``) with the visible checks'
    values in their test cells and the learner's wheel beside them, and register the
    assignments in the gradebook (the course's, or the one at ``url``)."""
    with open_gradebook(url or course.gradebook_url):  # a clear error, not nbgrader's traceback
        pass
    target = release_dir or course.exercises
    extra = [f"--CourseDirectory.release_directory={release_dir}"] if release_dir else []
    for a in course.assignments(names):
        before = {nb: _read_text(target / a / nb) for nb in course.notebook_names(a)}
        rc, out = nbgrader(["generate_assignment", a, "--force", *extra], course, url)
        if rc != 0 or "ERROR" in out:
            raise CourseError(f"nbgrader generate_assignment {a} failed:\n{out[-3000:]}")
        for nb in course.notebook_names(a):
            write_visible_values(course, a, nb, target / a / nb, before[nb])
        print(f"released {a}" + (f" into {release_dir}" if release_dir else f" into {RELEASE}/"))
    wheel = write_wheel(target)
    print(f"wrote the learners' wheel {wheel.name} into {release_dir or RELEASE + '/'}")


def _read_text(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _visible_checks(course: Course, assignment: str, notebook: str) -> dict[str, list[dict]]:
    """``{grade_id: [check, ...]}`` of the visible tests of a source notebook (replayed)."""
    from autograder import replay

    try:
        return replay.expected_checks(course.solutions / assignment / notebook, visible_only=True)
    except replay.ReplayError as err:
        raise CourseError(f"{assignment}: {err}") from None


def released_values(notebook_text: str | None) -> dict[str, str]:
    """``{grade_id: packed values}`` that the test cells of a released notebook carry."""
    import nbformat

    from autograder import regions

    if not notebook_text:
        return {}
    found = {}
    for cell in nbformat.reads(notebook_text, as_version=4).cells:
        if cell.cell_type != "code" or not regions.is_test_cell(cell):
            continue
        grade_id = str(regions.nbgrader_meta(cell).get("grade_id"))
        match = re.search(_TEST_LINE.format(grade_id=re.escape(grade_id)), cell.source)
        if match and match.group("values"):
            found[grade_id] = match.group("values")
    return found


def values_agree(checks: list[dict], packed: str) -> bool:
    """Whether ``packed`` (the values a released test cell carries) still holds the solution's
    values of ``checks`` (the cell's visible checks, replayed now): the same checks, and every
    number the same up to the check's own tolerance. Values computed on another CPU (AVX-512
    and AVX2 kernels sum in another order) differ in their last bits; that does not make a
    release stale."""
    from autograder.verdicts import judge
    from checks import released

    try:
        old = released.unpack(packed)["values"]
    except released.NotReleasedValues:
        return False
    new = {c["key"]: c for c in checks if c.get("solution_value")}
    if set(old) != set(new):
        return False
    for key, check in new.items():
        if old[key] == check["expected"]:
            continue
        if check.get("kind") != "close":
            return False
        reference = {**check, "expected": old[key], "like": None}
        if judge(reference, check["expected"]) is not None:
            return False
    return True


def _packed(
    assignment: str, notebook: str, grade_id: str, checks: list[dict], before: str | None
) -> str | None:
    """The values a released test cell carries: those it carried before while they still
    agree with ``checks`` (no churn from another CPU's last bits), else the fresh ones; None
    when none of its checks compares with the solution's value."""
    from checks import released

    fresh = {c["key"]: c["expected"] for c in checks if c.get("solution_value")}
    if not fresh:
        return None
    if before is not None and values_agree(checks, before):
        return before
    return released.pack(f"{assignment}/{notebook}", grade_id, fresh)


def write_visible_values(
    course: Course, assignment: str, notebook: str, path: Path, before_text: str | None
) -> None:
    """Put into each test cell of the released notebook ``path`` the solution's values of its
    visible checks (``before_text``: the notebook as released before, whose values are kept
    while they agree), and recompute the cell's nbgrader checksum."""
    import nbformat
    from nbgrader.utils import compute_checksum

    from autograder import regions

    checks = _visible_checks(course, assignment, notebook)
    before = released_values(before_text)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code" or not regions.is_test_cell(cell):
            continue
        grade_id = str(regions.nbgrader_meta(cell).get("grade_id"))
        packed = _packed(
            assignment, notebook, grade_id, checks.get(grade_id, []), before.get(grade_id)
        )
        if packed is None:
            continue
        cell.source = _with_values(cell.source, grade_id, packed, f"{assignment}/{notebook}")
        cell.metadata["nbgrader"]["checksum"] = compute_checksum(cell)
    nbformat.write(nb, path)


def _with_values(source: str, grade_id: str, packed: str, where: str) -> str:
    """The test cell ``source`` whose ``Test("grade_id")`` carries ``packed``."""
    pattern = re.compile(_TEST_LINE.format(grade_id=re.escape(grade_id)))
    if len(pattern.findall(source)) != 1:
        raise CourseError(
            f'{where}, test cell {grade_id!r}: write its Test("{grade_id}") once, before the '
            "hidden tests, so that the release can give it the solution's values of the visible "
            "checks"
        )
    return pattern.sub(lambda _: f'Test("{grade_id}", expected="{packed}")', source)


def _compare(ours: Path, theirs: Path, a: str) -> list[str]:
    """Differences between the release folder ``ours`` of assignment ``a`` and a fresh one."""
    problems = []
    files = sorted(
        {p.relative_to(ours) for p in ours.rglob("*") if p.is_file()}
        | {p.relative_to(theirs) for p in theirs.rglob("*") if p.is_file()}
    )
    for rel in files:
        if not (ours / rel).exists():
            problems.append(f"{RELEASE}/{a}/{rel} is missing: run `make release`")
        elif not (theirs / rel).exists():
            problems.append(f"{RELEASE}/{a}/{rel} is not generated from {SOURCE}/")
        elif not filecmp.cmp(ours / rel, theirs / rel, shallow=False):
            problems.append(f"{RELEASE}/{a}/{rel} is stale: run `make release`")
    return problems


def verify_release(course: Course, names: list[str] | None = None) -> list[str]:
    """Problems with exercises/: differences from a fresh generation (the visible checks'
    values included; a learners' wheel there must be a fresh build), leaked solution lines,
    release folders without a source. Writes nothing in the course."""
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "release"
        tmp_db = f"sqlite:///{Path(tmp) / 'gradebook.db'}"
        for a in course.assignments(names):
            args = ["generate_assignment", a, "--force"]
            args.append(f"--CourseDirectory.release_directory={fresh}")
            rc, out = nbgrader(args, course, url=tmp_db)
            if rc != 0:
                problems.append(f"{a}: nbgrader generate_assignment failed:\n{out[-2000:]}")
                continue
            ours = course.exercises / a
            try:
                for nb in course.notebook_names(a):
                    before = _read_text(ours / nb)
                    write_visible_values(course, a, nb, fresh / a / nb, before)
            except CourseError as err:
                problems.append(str(err))
                continue
            problems += _compare(ours, fresh / a, a)
            for nb in course.notebook_names(a):
                if (ours / nb).exists():
                    for line in leaked_lines(course.solutions / a / nb, ours / nb):
                        problems.append(f"{RELEASE}/{a}/{nb} contains solution line {line!r}")
    problems += _wheel_problems(course)
    released = course.exercises.iterdir() if course.exercises.is_dir() else iter(())
    extra = {p.name for p in released if p.is_dir()} - set(course.assignments())
    problems += [f"{RELEASE}/{e} has no source in {SOURCE}/" for e in sorted(extra)]
    return problems


def _wheel_problems(course: Course) -> list[str]:
    """A learners' wheel in exercises/ that is stale or of another version (``make release``
    writes it; git does not keep it, so a fresh clone has none until then)."""
    problems = []
    name = wheel_name()
    path = course.exercises / name
    if path.is_file() and path.read_bytes() != wheel_bytes():
        problems.append(
            f"{RELEASE}/{name} is stale (helpers/ or checks/ changed): run `make release`"
        )
    for other in sorted(course.exercises.glob(f"{DISTRIBUTION.replace('-', '_')}-*.whl")):
        if other.name != name:
            problems.append(f"{RELEASE}/{other.name} is not generated: delete it")
    return problems


def register(course: Course, names: list[str], students: list[str], url: str) -> None:
    """Make sure the gradebook at ``url`` knows the assignments (released from solutions/
    into a temporary folder when it does not) and the students."""
    with open_gradebook(url) as gb:
        known = {a.name for a in gb.assignments}
    missing = [a for a in names if a not in known]
    if missing:
        with tempfile.TemporaryDirectory() as tmp:
            release(missing, course, release_dir=Path(tmp), url=url)
    with open_gradebook(url) as gb:
        for s in students:
            gb.update_or_create_student(s)
