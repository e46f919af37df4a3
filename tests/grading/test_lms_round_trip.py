"""From each LMS's download to grades in its import file, with the course's commands only.

One course root, one graded class: the downloads of Canvas, Moodle, Blackboard and GitHub
Classroom (tests/support/lms_downloads.py: each built as its LMS names its files, with unicode
names, a late submission, an upload again, a learner missing from the roster, a renamed notebook
and a PDF) are collected into it with their rosters, graded once (12 notebooks, about 50
CPU-seconds) and exported back: each learner's grade must land on their own row of the
Canvas export and of Blackboard's Grade Center download, its .csv and its tab-delimited UTF-16
.xls (every other byte kept), of Moodle's import file, and of grades.csv for GitHub Classroom,
which imports no grades. A late submission is late in nbgrader's gradebook.
"""

from __future__ import annotations

import csv
from datetime import timedelta
from pathlib import Path

import pytest
from support import lms_downloads as L
from support.submissions import make_root

from course import gradebook, release
from course.cli import main
from course.config import Course

pytestmark = pytest.mark.usefixtures("grading_env")
A1 = "01_attention"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lms")
    root = make_root(tmp / "course")
    url = f"sqlite:///{root / 'gradebook.db'}"
    release.register(Course(root), [A1], [], url)  # the assignment in the gradebook
    with gradebook.open_gradebook(url) as gb:
        gb.update_or_create_assignment(A1, duedate=L.DUE)
    classes = {}
    for name, build, extra in [
        ("canvas", L.canvas, []),
        ("moodle", L.moodle, ["--timezone", "Europe/Berlin"]),
        ("blackboard", L.blackboard, ["--assignment", A1]),
        ("github-classroom", L.github_classroom, []),
    ]:
        folder = tmp / name
        folder.mkdir()
        download, roster, learners = build(folder)
        if name == "blackboard":  # the .xls download: the roster, and the file grades go into
            roster = folder / "gc_export.xls"
            roster.write_bytes(L.grade_center(grade_center(learners), **BLACKBOARD_XLS))
        args = ["--root", str(root), "collect", str(download), "--roster", str(roster)]
        assert main([*args, *extra]) == 0, name
        classes[name] = (download, roster, learners)
    assert main(["--root", str(root), "autograde", A1, "--workers", "2"]) == 0
    return root, classes


BLACKBOARD_XLS = {"xls": True, "newline": "\r\n"}


def grade_center(learners: list[L.Learner], cells: dict[str, str] | None = None) -> list:
    """The rows of the class's Grade Center download, its header first."""
    return [L.GC_HEADER, *L.grade_center_rows(learners, cells)]


def points(score: float) -> str:
    """A score as the import files write it."""
    return f"{score:.2f}".rstrip("0").rstrip(".")


def scores_of(root: Path) -> dict[str, float]:
    with gradebook.open_gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.student.id: s.score for s in gb.assignment_submissions(A1)}


def test_every_graded_learner_is_the_roster_learner(graded):
    root, classes = graded
    got = scores_of(root)
    with gradebook.open_gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        top = gb.find_assignment(A1).max_score
    for name, (_, _, learners) in classes.items():
        for x in L.roster_of(learners):
            if x.notebook == L.GOOD:
                assert got[x.student_id] == top, (name, x.kind)
            else:  # the late learner's notebook has a mistake
                assert 0 < got[x.student_id] < top, (name, x.kind)
    assert len(got) == 12  # no stranger was graded


def test_late_submissions_are_late_in_nbgrader(graded):
    root, classes = graded
    with gradebook.open_gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for name, (_, _, learners) in classes.items():
            k = {x.kind: x for x in learners}
            late = gb.find_submission(A1, k["late"].student_id)
            ontime = gb.find_submission(A1, k["ontime"].student_id)
            if name == "github-classroom":  # commit times are the learner's: not used
                assert late.timestamp is None
                continue
            assert late.total_seconds_late > 0, name
            assert ontime.total_seconds_late == 0, name
            if name == "blackboard" or name == "moodle":
                assert late.timestamp == L.DUE + timedelta(hours=5, minutes=30), name


def test_canvas_round_trip(graded, capsys):
    root, classes = graded
    _, export, learners = classes["canvas"]
    got = scores_of(root)
    out = root / "canvas_import.csv"
    args = ["--root", str(root), "grades", "--format", "canvas", "--assignment", A1]
    args += ["--canvas-export", str(export), "--column", "Attention 01 (4567)"]
    assert main([*args, "--out", str(out)]) == 0
    expected = export.read_bytes()
    for x in L.roster_of(learners):
        value = points(got[x.student_id])
        old = f"{x.username},Section 1,4.50,,".encode()
        expected = expected.replace(old, f"{x.username},Section 1,4.50,{value},".encode())
    assert out.read_bytes() == expected
    assert "3 graded, 0 without a submission" in capsys.readouterr().out


def test_moodle_round_trip(graded):
    root, classes = graded
    _, worksheet, learners = classes["moodle"]
    got = scores_of(root)
    out = root / "moodle_import.csv"
    args = ["--root", str(root), "grades", "--format", "moodle", "--assignment", A1]
    args += ["--roster", str(worksheet)]  # this class only (roster.csv holds all four)
    assert main([*args, "--key", "email", "--out", str(out)]) == 0
    with out.open(newline="", encoding="utf-8") as f:
        rows = {r["Email address"]: r[A1] for r in csv.DictReader(f)}
    for x in L.roster_of(learners):
        assert float(rows[f"{x.username}@example.edu"]) == pytest.approx(got[x.student_id])


@pytest.mark.parametrize("form", ["xls", "csv"])
def test_blackboard_round_trip(graded, capsys, form):
    root, classes = graded
    _, xls, learners = classes["blackboard"]
    download = xls if form == "xls" else xls.with_suffix(".csv")  # the same Grade Center
    got = scores_of(root)
    args = ["--root", str(root), "grades", "--format", "blackboard", "--assignment", A1]
    args += ["--blackboard-export", str(download), "--column", "Attention 01"]
    assert main(args) == 0
    out = root / f"grades_blackboard.{form}"
    cells = {x.username: points(got[x.student_id]) for x in L.roster_of(learners)}
    kind = BLACKBOARD_XLS if form == "xls" else {}
    assert out.read_bytes() == L.grade_center(grade_center(learners, cells), **kind)
    printed = capsys.readouterr().out
    assert "3 graded, 0 without a submission" in printed
    assert "not in the roster" not in printed  # the stranger is in neither
    with gradebook.open_gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        top = points(gb.find_assignment(A1).max_score)
    assert f"column is out of 12 points, {A1} out of {top}" in printed  # the download's 12


def test_github_classroom_through_grades_csv(graded):
    root, classes = graded
    got = scores_of(root)
    assert main(["--root", str(root), "grades"]) == 0
    with (root / "grades.csv").open(newline="", encoding="utf-8") as f:
        rows = {r["student"]: float(r["score"]) for r in csv.DictReader(f)}
    for x in L.roster_of(classes["github-classroom"][2]):
        assert rows[x.student_id] == pytest.approx(got[x.student_id])
