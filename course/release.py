"""``release`` and ``check-release``: exercises/ generated from solutions/ by nbgrader.

``release`` also writes each assignment's ``expected_visible.json`` (the solution's values of
the visible checks, which a learner's notebook compares with while they work) into
solutions/, from where nbgrader copies it into the release. ``check-release`` regenerates
everything into a temporary folder and compares, and scans the release for solution lines.
"""

from __future__ import annotations

import filecmp
import json
import tempfile
from pathlib import Path

from course.config import RELEASE, SOURCE, Course, CourseError
from course.gradebook import open_gradebook
from course.leaks import leaked_lines
from course.runner import nbgrader


def release(
    names: list[str] | None,
    course: Course,
    release_dir: Path | None = None,
    url: str | None = None,
) -> None:
    """Generate the student versions (exercises/, or ``release_dir``) and register the
    assignments in the gradebook (the course's, or the one at ``url``)."""
    with open_gradebook(url or course.gradebook_url):  # a clear error, not nbgrader's traceback
        pass
    extra = [f"--CourseDirectory.release_directory={release_dir}"] if release_dir else []
    for a in course.assignments(names):
        write_visible_checks(course, a)
        rc, out = nbgrader(["generate_assignment", a, "--force", *extra], course, url)
        if rc != 0 or "ERROR" in out:
            raise CourseError(f"nbgrader generate_assignment {a} failed:\n{out[-3000:]}")
        print(f"released {a}" + (f" into {release_dir}" if release_dir else f" into {RELEASE}/"))


def _visible_checks_text(course: Course, assignment: str) -> str:
    """What solutions/<a>/expected_visible.json must hold (the solution is replayed)."""
    from autograder import replay

    try:
        data = replay.visible_checks(course.solutions / assignment)
    except replay.ReplayError as err:
        raise CourseError(f"{assignment}: {err}") from None
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def _visible_checks_path(course: Course, assignment: str) -> Path:
    from checks import EXPECTED_FILE

    return course.solutions / assignment / EXPECTED_FILE


def visible_checks_agree(stored: str, fresh: str) -> bool:
    """Whether the released checks ``stored`` are still those of ``fresh`` (both the text of an
    expected_visible.json): the same checks with the same options, and every number the same
    up to the check's own tolerance. Values computed on another CPU (AVX-512 and AVX2 kernels
    sum in another order) differ in their last bits; that does not make a release stale."""
    from autograder.verdicts import judge

    try:
        old, new = json.loads(stored)["checks"], json.loads(fresh)["checks"]
    except (ValueError, KeyError, TypeError):
        return False
    if not isinstance(old, list) or not isinstance(new, list) or len(old) != len(new):
        return False
    for a, b in zip(old, new, strict=True):
        if a == b:
            continue
        rest = ("expected", "like")
        if {k: v for k, v in a.items() if k not in rest} != {
            k: v for k, v in b.items() if k not in rest
        }:
            return False
        if a.get("kind") != "close" or judge(a, b.get("expected")) is not None:
            return False
        like_a, like_b = a.get("like") or {}, b.get("like") or {}
        if set(like_a) != set(like_b):
            return False
        for label, value in like_a.items():  # known mistakes' values: within the same tolerance
            if judge({**a, "expected": value, "like": None}, like_b[label]) is not None:
                return False
    return True


def write_visible_checks(course: Course, assignment: str) -> None:
    """Write solutions/<a>/expected_visible.json when it is missing or stale (not when only
    the last bits of its numbers would change: see ``visible_checks_agree``)."""
    text = _visible_checks_text(course, assignment)
    path = _visible_checks_path(course, assignment)
    if not path.exists() or not visible_checks_agree(path.read_text(encoding="utf-8"), text):
        path.write_text(text, encoding="utf-8")


def _stale_visible_checks(course: Course, assignment: str) -> list[str]:
    try:
        fresh = _visible_checks_text(course, assignment)
    except CourseError as err:
        return [str(err)]
    path = _visible_checks_path(course, assignment)
    if not path.exists() or not visible_checks_agree(path.read_text(encoding="utf-8"), fresh):
        return [f"{SOURCE}/{assignment}/{path.name} is stale: run `make release`"]
    return []


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


def check_release(course: Course, names: list[str] | None = None) -> list[str]:
    """Problems with exercises/: differences from a fresh generation, leaked solution lines,
    stale visible checks, release folders without a source. Writes nothing in the course."""
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
            problems += _stale_visible_checks(course, a)
            ours = course.exercises / a
            problems += _compare(ours, fresh / a, a)
            for nb in course.notebook_names(a):
                if (ours / nb).exists():
                    for line in leaked_lines(course.solutions / a / nb, ours / nb):
                        problems.append(f"{RELEASE}/{a}/{nb} contains solution line {line!r}")
    released = course.exercises.iterdir() if course.exercises.is_dir() else iter(())
    extra = {p.name for p in released if p.is_dir()} - set(course.assignments())
    problems += [f"{RELEASE}/{e} has no source in {SOURCE}/" for e in sorted(extra)]
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
